// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The target language of a translation: a BCP 47 tag (`es`, `es-ES`,
//! `pt-BR`, `zh-Hant`, `es-419`), checked, and named in English for the
//! chat model ("Spanish (es)").
//!
//! A tag is checked against RFC 5646's grammar: a language of 2 or 3
//! letters (ISO 639; the longer forms the grammar reserves are assigned to
//! no language, and `english` or `spanish` are names, not codes), then
//! extended languages, a script, a region, variants, extensions and private
//! use, in that order. It is given back in the RFC's canonical case
//! (`es-ES`, `zh-Hant`), as tags are case-insensitive.
//!
//! `_` is taken for `-`: POSIX locales (`LANG=es_ES.UTF-8`) write tags that
//! way and what is meant is never in doubt; a viewer's `es_ES` reaches the
//! model as `es-ES`. Spaces, empty tags and non-ASCII names (`español`) are
//! refused, with the code to write where the name is a known one.
//!
//! The model is told the language's English name with the tag, which
//! carries the region and script ("Chinese (zh-Hant)"); a well-formed tag
//! that is not in the table is named by the tag alone, which chat models
//! read well for ISO 639 codes.

use std::fmt;

/// A checked language tag.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Language {
    tag: String,
}

/// A tag that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageError {
    pub tag: String,
    pub reason: String,
}

impl fmt::Display for LanguageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "'{}' is not a language tag: {}; write a BCP 47 tag such as es, fr-FR, pt-BR \
             or zh-Hant",
            self.tag, self.reason
        )
    }
}

impl std::error::Error for LanguageError {}

/// English names of the languages captions are most often translated into:
/// the 13 Voxtral hears first, then other common caption targets.
const NAMES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("de", "German"),
    ("en", "English"),
    ("es", "Spanish"),
    ("fr", "French"),
    ("hi", "Hindi"),
    ("it", "Italian"),
    ("nl", "Dutch"),
    ("pt", "Portuguese"),
    ("zh", "Chinese"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("ru", "Russian"),
    ("bn", "Bengali"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("el", "Greek"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fil", "Filipino"),
    ("he", "Hebrew"),
    ("hu", "Hungarian"),
    ("id", "Indonesian"),
    ("ms", "Malay"),
    ("nb", "Norwegian Bokmål"),
    ("no", "Norwegian"),
    ("pl", "Polish"),
    ("ro", "Romanian"),
    ("sv", "Swedish"),
    ("sw", "Swahili"),
    ("ta", "Tamil"),
    ("th", "Thai"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("ur", "Urdu"),
    ("vi", "Vietnamese"),
    ("yue", "Cantonese"),
];

impl Language {
    /// Checks `tag` and puts it in canonical case.
    pub fn parse(tag: &str) -> Result<Language, LanguageError> {
        let refuse = |reason: String| LanguageError {
            tag: tag.to_owned(),
            reason,
        };
        if tag.is_empty() {
            return Err(refuse("it is empty".into()));
        }
        if tag.chars().any(char::is_whitespace) {
            return Err(refuse("it contains a space".into()));
        }
        if !tag.is_ascii() {
            return Err(refuse(name_hint(tag, "tags are ASCII codes")));
        }
        let subtags: Vec<&str> = tag.split(['-', '_']).collect();
        check_grammar(&subtags).map_err(|reason| refuse(name_hint(tag, &reason)))?;
        Ok(Language {
            tag: canonical_case(&subtags),
        })
    }

    /// The tag, in canonical case: `es-ES`, `zh-Hant`.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The language subtag: `es` of `es-ES`.
    pub fn primary(&self) -> &str {
        self.tag.split('-').next().unwrap_or_default()
    }

    /// The language's English name, when it is in the table.
    pub fn english_name(&self) -> Option<&'static str> {
        name_of(self.primary())
    }
}

/// What the chat model is told: "Spanish (es)", "French (fr-FR)", or the
/// tag alone when its language is not in the table.
impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.english_name() {
            Some(name) => write!(f, "{name} ({})", self.tag),
            None => f.write_str(&self.tag),
        }
    }
}

impl std::str::FromStr for Language {
    type Err = LanguageError;

    fn from_str(tag: &str) -> Result<Language, LanguageError> {
        Language::parse(tag)
    }
}

fn name_of(code: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| *name)
}

/// `reason`, with the code to write when `tag` is a language's English name
/// ("Spanish": write es).
fn name_hint(tag: &str, reason: &str) -> String {
    match NAMES
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(tag))
    {
        Some((code, name)) => format!("{reason}; for {name} write {code}"),
        None => reason.to_owned(),
    }
}

/// Where a subtag may come in a tag, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Language,
    Extlang,
    Script,
    Region,
    Variant,
    Extension,
}

/// Checks the subtags against RFC 5646's `langtag` production; the reason
/// when they do not fit.
fn check_grammar(subtags: &[&str]) -> Result<(), String> {
    if let Some(empty) = subtags.iter().position(|s| s.is_empty()) {
        return Err(format!("subtag {} is empty", empty + 1));
    }
    if let Some(bad) = subtags
        .iter()
        .find(|s| s.len() > 8 || !s.bytes().all(|b| b.is_ascii_alphanumeric()))
    {
        return Err(format!(
            "'{bad}' is not a subtag (1 to 8 letters or digits)"
        ));
    }
    let language = subtags[0];
    if !(2..=3).contains(&language.len()) || !is_alpha(language) {
        return Err(format!(
            "the language, '{language}', must be a code of 2 or 3 letters (ISO 639)"
        ));
    }
    check_after_language(&subtags[1..])
}

fn check_after_language(subtags: &[&str]) -> Result<(), String> {
    let mut last = Place::Language;
    let mut extlangs = 0;
    let mut in_extension = false;
    for (k, subtag) in subtags.iter().enumerate() {
        if subtag.eq_ignore_ascii_case("x") {
            return check_private_use(&subtags[k + 1..]);
        }
        if in_extension && subtag.len() >= 2 {
            continue;
        }
        in_extension = false;
        let place = place_of(subtag, last)
            .ok_or_else(|| format!("'{subtag}' does not fit where it stands"))?;
        if place == Place::Extlang {
            extlangs += 1;
            if extlangs > 3 {
                return Err("more than 3 extended language subtags".into());
            }
        }
        if place == Place::Extension {
            in_extension = true;
            if subtags.get(k + 1).is_none_or(|s| s.len() < 2) {
                return Err(format!("the extension '{subtag}' has no subtag after it"));
            }
        }
        last = place;
    }
    Ok(())
}

/// Where `subtag` can stand, after a subtag at `last`.
fn place_of(subtag: &str, last: Place) -> Option<Place> {
    let len = subtag.len();
    let candidates = [
        (Place::Extlang, len == 3 && is_alpha(subtag)),
        (Place::Script, len == 4 && is_alpha(subtag)),
        (
            Place::Region,
            (len == 2 && is_alpha(subtag)) || (len == 3 && is_digit(subtag)),
        ),
        (
            Place::Variant,
            (5..=8).contains(&len) || (len == 4 && subtag.as_bytes()[0].is_ascii_digit()),
        ),
        (Place::Extension, len == 1),
    ];
    candidates
        .into_iter()
        .find(|&(place, fits)| fits && allowed_after(place, last))
        .map(|(place, _)| place)
}

/// The order of RFC 5646: extlangs only right after the language (or each
/// other), then at most one script and one region; variants and extensions
/// may repeat.
fn allowed_after(place: Place, last: Place) -> bool {
    match place {
        Place::Extlang => matches!(last, Place::Language | Place::Extlang),
        Place::Script | Place::Region => place > last,
        Place::Variant | Place::Extension => place >= last,
        Place::Language => false,
    }
}

fn check_private_use(subtags: &[&str]) -> Result<(), String> {
    if subtags.is_empty() {
        return Err("the private use 'x' has no subtag after it".into());
    }
    Ok(())
}

/// RFC 5646's canonical case: language and most subtags in lower case,
/// a script in title case, a region in upper case.
fn canonical_case(subtags: &[&str]) -> String {
    let mut out: Vec<String> = Vec::with_capacity(subtags.len());
    let mut after_singleton = false;
    for (k, subtag) in subtags.iter().enumerate() {
        let lower = subtag.to_ascii_lowercase();
        let cased = if k == 0 || after_singleton {
            lower
        } else if subtag.len() == 4 && is_alpha(subtag) {
            title_case(&lower)
        } else if subtag.len() == 2 && is_alpha(subtag) {
            subtag.to_ascii_uppercase()
        } else {
            lower
        };
        after_singleton = after_singleton || subtag.len() == 1;
        out.push(cased);
    }
    out.join("-")
}

fn title_case(lower: &str) -> String {
    let mut chars = lower.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

fn is_alpha(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphabetic())
}

fn is_digit(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(t: &str) -> String {
        Language::parse(t).unwrap().tag().to_owned()
    }

    fn refused(t: &str) -> String {
        match Language::parse(t) {
            Err(e) => e.to_string(),
            Ok(l) => panic!("{t} was taken as {}", l.tag()),
        }
    }

    #[test]
    fn common_tags_are_taken_in_canonical_case() {
        for t in [
            "es", "es-ES", "fr-FR", "zh-Hant", "pt-BR", "es-419", "yue", "fil",
        ] {
            assert_eq!(tag(t), t);
        }
        assert_eq!(tag("ES-es"), "es-ES");
        assert_eq!(tag("zh-hant-tw"), "zh-Hant-TW");
        assert_eq!(tag("sr-Latn-RS"), "sr-Latn-RS");
        assert_eq!(tag("de-CH-1901"), "de-CH-1901");
        assert_eq!(tag("zh-yue-HK"), "zh-yue-HK");
        assert_eq!(tag("en-US-u-ca-gregory"), "en-US-u-ca-gregory");
        assert_eq!(tag("en-x-house"), "en-x-house");
    }

    #[test]
    fn an_underscore_is_read_as_a_hyphen() {
        assert_eq!(tag("es_ES"), "es-ES");
        assert_eq!(tag("pt_br"), "pt-BR");
    }

    #[test]
    fn names_spaces_and_broken_tags_are_refused() {
        assert!(refused("").contains("empty"));
        assert!(refused("es ES").contains("space"));
        assert!(refused(" es").contains("space"));
        assert!(refused("e").contains("2 or 3 letters"));
        assert!(refused("español").contains("ASCII"));
        assert!(refused("Spanish").contains("for Spanish write es"));
        assert!(refused("english").contains("for English write en"));
        assert!(refused("es-").contains("subtag 2 is empty"));
        assert!(refused("es--ES").contains("empty"));
        assert!(refused("es-ES-ES").contains("'ES' does not fit"));
        assert!(refused("es-Latn-Latn").contains("does not fit"));
        assert!(refused("en-u").contains("no subtag after it"));
        assert!(refused("en-x").contains("no subtag after it"));
        assert!(refused("x-private").contains("2 or 3 letters"));
        assert!(refused("es.ES").contains("not a subtag"));
        assert!(refused("12").contains("2 or 3 letters"));
        assert!(refused("es-toolongvariant").contains("not a subtag"));
    }

    #[test]
    fn the_model_is_told_the_english_name_with_the_tag() {
        let told = |t: &str| Language::parse(t).unwrap().to_string();
        assert_eq!(told("es"), "Spanish (es)");
        assert_eq!(told("fr-FR"), "French (fr-FR)");
        assert_eq!(told("zh-Hant"), "Chinese (zh-Hant)");
        assert_eq!(told("pt_BR"), "Portuguese (pt-BR)");
        assert_eq!(told("xho"), "xho");
        assert_eq!(told("ast-ES"), "ast-ES");
    }

    #[test]
    fn the_languages_voxtral_hears_are_all_named() {
        for code in [
            "ar", "de", "en", "es", "fr", "hi", "it", "nl", "pt", "zh", "ja", "ko", "ru",
        ] {
            assert!(name_of(code).is_some(), "{code}");
        }
        assert!(NAMES.len() >= 30);
        for (k, (code, _)) in NAMES.iter().enumerate() {
            assert_eq!(tag(code), *code);
            assert!(!NAMES[..k].iter().any(|(c, _)| c == code), "{code} twice");
        }
    }
}
