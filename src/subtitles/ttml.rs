// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! TTML files in two delivery profiles: IMSC 1.1 Text (`format=ttml`:
//! Netflix, DASH and CMAF players) and EBU-TT-D (`format=ebu-tt-d`:
//! European broadcasters, HbbTV).
//!
//! Both are one document: the `head` (styles, one region) is the header;
//! each cue is a `p` with its media times as clock times to the
//! millisecond, a `span` per line and `br` between lines; the tail closes
//! the `div`, `body` and `tt` after the last `p`, so a file cut after any
//! cue is a whole document. The region is the bottom 80 % x 20 % of the
//! picture inside the 10 % safe area; the text is white on a translucent
//! black box, centred, with a cell grid of 32 x 15 (CEA-608's). A new
//! speaker's first line starts with their name, as the SRT files do.

use std::fmt::Write;

use super::{Cue, Format};

/// The IMSC 1.1 Text Profile's designator (`ttp:contentProfiles`).
pub const IMSC_1_1_TEXT: &str = "http://www.w3.org/ns/ttml/profile/imsc1.1/text";

/// The EBU-TT-D versions a document conforms to
/// (`ebuttm:conformsToStandard`): 1.0 and 1.0.1.
pub const EBU_TT_D_STANDARDS: [&str; 2] = [
    "urn:ebu:tt:distribution:2014-01",
    "urn:ebu:tt:distribution:2018-04",
];

/// The language tag written when none (or no valid one) is given: BCP 47's
/// "undetermined".
pub const UNDETERMINED: &str = "und";

/// The profile a TTML document follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// W3C IMSC 1.1 Text Profile.
    #[default]
    Imsc11Text,
    /// EBU-TT-D (EBU Tech 3380).
    EbuTtD,
}

/// A TTML [`Format`].
#[derive(Debug, Clone)]
pub struct Ttml {
    profile: Profile,
    /// `xml:lang` of the document.
    language: String,
    /// Paragraphs written so far.
    paragraphs: u64,
    /// The speaker of the last cue, to name a new one.
    speaker: Option<String>,
}

impl Ttml {
    /// A document in `profile` whose text is in `language` (a BCP 47 tag
    /// such as "en" or "es-MX"; an empty or malformed one is written as
    /// "und").
    pub fn new(profile: Profile, language: &str) -> Self {
        Self {
            profile,
            language: language_tag(language),
            paragraphs: 0,
            speaker: None,
        }
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The `xml:lang` written.
    pub fn language(&self) -> &str {
        &self.language
    }

    fn root_attributes(&self) -> String {
        let mut tt = String::from(
            "<tt xmlns=\"http://www.w3.org/ns/ttml\" \
             xmlns:ttp=\"http://www.w3.org/ns/ttml#parameter\" \
             xmlns:tts=\"http://www.w3.org/ns/ttml#styling\" \
             xmlns:ttm=\"http://www.w3.org/ns/ttml#metadata\" \
             xmlns:ebutts=\"urn:ebu:tt:style\"",
        );
        match self.profile {
            Profile::Imsc11Text => {
                let _ = write!(tt, " ttp:contentProfiles=\"{IMSC_1_1_TEXT}\"");
            }
            Profile::EbuTtD => tt.push_str(" xmlns:ebuttm=\"urn:ebu:tt:metadata\""),
        }
        let _ = writeln!(
            tt,
            " ttp:timeBase=\"media\" ttp:cellResolution=\"32 15\" xml:lang=\"{}\">",
            self.language
        );
        tt
    }

    fn metadata(&self) -> String {
        if self.profile != Profile::EbuTtD {
            return String::new();
        }
        let mut out = String::from("<metadata>\n<ebuttm:documentMetadata>\n");
        for standard in EBU_TT_D_STANDARDS {
            let _ = writeln!(
                out,
                "<ebuttm:conformsToStandard>{standard}</ebuttm:conformsToStandard>"
            );
        }
        out.push_str("</ebuttm:documentMetadata>\n</metadata>\n");
        out
    }

    /// The paragraph's first line, with a new speaker's name before it.
    fn speaker_label(&mut self, cue: &Cue) -> Option<String> {
        let turn = cue.speaker.is_some() && cue.speaker != self.speaker;
        self.speaker.clone_from(&cue.speaker);
        turn.then(|| cue.speaker.clone()).flatten()
    }
}

impl Format for Ttml {
    fn header(&self) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}<head>\n{}{STYLING}{LAYOUT}</head>\n",
            self.root_attributes(),
            self.metadata()
        )
    }

    fn cue(&mut self, cue: &Cue) -> String {
        let (begin, end) = (millis(cue.start_ns), millis(cue.end_ns));
        let lines: Vec<String> = cue
            .lines
            .iter()
            .map(|l| escape(l.trim()))
            .filter(|l| !l.is_empty())
            .collect();
        if end <= begin || lines.is_empty() {
            // Nothing to show, or not for a whole millisecond.
            return String::new();
        }
        let mut out = String::new();
        if self.paragraphs == 0 {
            out.push_str("<body style=\"base\">\n<div region=\"bottom\">\n");
        }
        self.paragraphs += 1;
        let _ = write!(
            out,
            "<p xml:id=\"c{}\" begin=\"{}\" end=\"{}\">",
            self.paragraphs,
            clock(begin),
            clock(end)
        );
        if let Some(name) = self.speaker_label(cue) {
            let _ = write!(out, "<span style=\"speaker\">{}: </span>", escape(&name));
        }
        let spans: Vec<String> = lines
            .iter()
            .map(|l| format!("<span style=\"text\">{l}</span>"))
            .collect();
        out.push_str(&spans.join("<br/>"));
        out.push_str("</p>\n");
        out
    }

    fn tail(&self) -> String {
        if self.paragraphs == 0 {
            // EBU-TT-D's body needs a div with a paragraph: none yet.
            "</tt>\n".to_owned()
        } else {
            "</div>\n</body>\n</tt>\n".to_owned()
        }
    }
}

/// White text on a translucent black box, centred; a speaker's name in
/// yellow. Sizes: a cell is 1/15 of the height, the text 80 % of it, so
/// two lines of 42 characters fit the region.
const STYLING: &str = "<styling>\n\
<style xml:id=\"base\" tts:fontFamily=\"sansSerif\" tts:fontSize=\"80%\" \
tts:lineHeight=\"125%\" tts:textAlign=\"center\" tts:color=\"#ffffff\"/>\n\
<style xml:id=\"text\" tts:backgroundColor=\"#000000c2\" ebutts:linePadding=\"0.5c\"/>\n\
<style xml:id=\"speaker\" tts:color=\"#ffff00\" tts:backgroundColor=\"#000000c2\"/>\n\
</styling>\n";

/// The bottom 80 % x 20 % of the picture, inside the 10 % safe area, text
/// at its bottom.
const LAYOUT: &str = "<layout>\n\
<region xml:id=\"bottom\" tts:origin=\"10% 70%\" tts:extent=\"80% 20%\" \
tts:displayAlign=\"after\"/>\n\
</layout>\n";

/// ns to the nearest millisecond.
fn millis(ns: u64) -> u64 {
    (ns + 500_000) / 1_000_000
}

/// `HH:MM:SS.mmm` (hours grow past 99 when they must).
fn clock(ms: u64) -> String {
    let s = ms / 1000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        s / 3600,
        s / 60 % 60,
        s % 60,
        ms % 1000
    )
}

/// Text for XML character data: markup escaped, characters XML 1.0 cannot
/// carry dropped, line breaks as spaces.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if is_xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

fn is_xml_char(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `language` if it is a well-formed language tag (as `xs:language`
/// checks: letters, then subtags of letters and digits, each 1 to 8 long),
/// else "und".
fn language_tag(language: &str) -> String {
    let language = language.trim().replace('_', "-");
    let mut subtags = language.split('-');
    let primary_ok = subtags
        .next()
        .is_some_and(|p| (1..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphabetic()));
    let rest_ok =
        subtags.all(|s| (1..=8).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric()));
    if primary_ok && rest_ok {
        language
    } else {
        UNDETERMINED.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(lines: &[&str], start_ms: u64, end_ms: u64) -> Cue {
        Cue {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            speaker: None,
        }
    }

    fn document(ttml: &mut Ttml, cues: &[Cue]) -> String {
        let mut out = ttml.header();
        for c in cues {
            out.push_str(&ttml.cue(c));
        }
        out + &ttml.tail()
    }

    #[test]
    fn imsc_names_its_profile_language_and_time_base() {
        let mut ttml = Ttml::new(Profile::Imsc11Text, "es-MX");
        let doc = document(&mut ttml, &[cue(&["Hola"], 1200, 3000)]);
        assert!(doc.contains(&format!("ttp:contentProfiles=\"{IMSC_1_1_TEXT}\"")));
        assert!(doc.contains("xml:lang=\"es-MX\""));
        assert!(doc.contains("ttp:timeBase=\"media\""));
        assert!(!doc.contains("ebuttm:"));
    }

    #[test]
    fn ebu_tt_d_carries_its_document_metadata_and_no_content_profiles() {
        let mut ttml = Ttml::new(Profile::EbuTtD, "en");
        let doc = document(&mut ttml, &[cue(&["Hello"], 1200, 3000)]);
        assert!(doc.contains("<ebuttm:conformsToStandard>urn:ebu:tt:distribution:2018-04<"));
        assert!(!doc.contains("contentProfiles"));
    }

    #[test]
    fn a_cue_is_a_paragraph_with_a_break_between_its_lines() {
        let mut ttml = Ttml::new(Profile::Imsc11Text, "en");
        let p = ttml.cue(&cue(&["Hello there,", "how are you?"], 1200, 3000));
        assert!(p.contains("<p xml:id=\"c1\" begin=\"00:00:01.200\" end=\"00:00:03.000\">"));
        assert!(p.contains("Hello there,</span><br/><span style=\"text\">how are you?"));
    }

    #[test]
    fn times_are_media_clock_times_to_the_nearest_millisecond() {
        assert_eq!(clock(millis(1_234_499_999)), "00:00:01.234");
        assert_eq!(clock(millis(1_234_500_000)), "00:00:01.235");
        assert_eq!(clock(3_723_004), "01:02:03.004");
        assert_eq!(clock(360_000_000), "100:00:00.000");
    }

    #[test]
    fn the_tail_closes_the_document_after_any_cue() {
        let mut ttml = Ttml::new(Profile::EbuTtD, "en");
        let mut doc = ttml.header();
        assert_eq!(ttml.tail(), "</tt>\n");
        doc.push_str(&ttml.cue(&cue(&["One"], 0, 1000)));
        assert_eq!(ttml.tail(), "</div>\n</body>\n</tt>\n");
        doc.push_str(&ttml.tail());
        assert!(doc.ends_with("</p>\n</div>\n</body>\n</tt>\n"));
    }

    #[test]
    fn markup_in_the_text_is_escaped() {
        let mut ttml = Ttml::new(Profile::Imsc11Text, "en");
        let p = ttml.cue(&cue(&["a < b & \"c\"\u{0}"], 0, 1000));
        assert!(p.contains("a &lt; b &amp; &quot;c&quot;</span>"), "{p}");
    }

    #[test]
    fn a_new_speaker_is_named_before_the_first_line() {
        let mut ttml = Ttml::new(Profile::Imsc11Text, "en");
        let mut first = cue(&["Hi"], 0, 1000);
        first.speaker = Some("Anna".into());
        let mut second = first.clone();
        second.start_ns = 1_000_000_000;
        second.end_ns = 2_000_000_000;
        assert!(ttml
            .cue(&first)
            .contains("<span style=\"speaker\">Anna: </span>"));
        assert!(!ttml.cue(&second).contains("Anna"));
    }

    #[test]
    fn a_malformed_language_is_written_as_undetermined() {
        assert_eq!(Ttml::new(Profile::EbuTtD, "").language(), "und");
        assert_eq!(Ttml::new(Profile::EbuTtD, "en_GB").language(), "en-GB");
        assert_eq!(
            Ttml::new(Profile::EbuTtD, "english language").language(),
            "und"
        );
    }

    #[test]
    fn a_cue_shorter_than_a_millisecond_is_left_out() {
        let mut ttml = Ttml::new(Profile::Imsc11Text, "en");
        let mut c = cue(&["blink"], 1000, 1000);
        c.end_ns += 400_000;
        assert_eq!(ttml.cue(&c), "");
        assert_eq!(ttml.tail(), "</tt>\n");
    }
}
