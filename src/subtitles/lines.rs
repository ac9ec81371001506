// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Where a person breaks a subtitle: after a sentence or a clause, at a
//! pause, before a conjunction or a preposition; never between an article
//! and its noun, nor a preposition and what follows it, where the line
//! allows. A cue's lines are chosen by those breaks and their balance.

/// What a break between two words costs (lower is better).
pub type Cost = u32;

/// Breaking after an article or a determiner: only when nothing else fits.
const AFTER_ARTICLE: Cost = 40;
const AFTER_PREPOSITION: Cost = 12;
const PLAIN: Cost = 8;
const BEFORE_PREPOSITION: Cost = 4;
const BEFORE_CONJUNCTION: Cost = 3;
const AFTER_CLAUSE: Cost = 2;
const AT_PAUSE: Cost = 1;
const AFTER_SENTENCE: Cost = 0;
/// How many characters of imbalance between two lines a point of break
/// cost is worth.
const CHARS_PER_COST: usize = 3;

/// Articles and determiners (English, Spanish, French, German, Italian):
/// their noun follows.
const ARTICLES: &[&str] = &[
    "a", "an", "the", "this", "these", "those", "my", "your", "his", "her", "its", "our", "their",
    "some", "any", "no", "every", "each", "el", "la", "los", "las", "un", "una", "unos", "unas",
    "le", "les", "une", "des", "du", "der", "die", "das", "den", "dem", "ein", "eine", "einen",
    "einem", "einer", "il", "lo", "gli", "uno",
];

const CONJUNCTIONS: &[&str] = &[
    "and", "but", "or", "nor", "so", "yet", "because", "although", "though", "while", "whereas",
    "if", "unless", "until", "when", "whenever", "where", "which", "who", "whom", "whose", "that",
    "since", "than", "y", "e", "o", "u", "pero", "porque", "que", "cuando", "si", "et", "ou",
    "mais", "car", "donc", "quand", "und", "oder", "aber", "denn", "weil", "dass", "wenn", "ma",
    "perché", "quando",
];

const PREPOSITIONS: &[&str] = &[
    "in", "on", "at", "of", "to", "for", "with", "from", "by", "about", "into", "onto", "over",
    "under", "after", "before", "between", "through", "during", "without", "within", "across",
    "against", "among", "around", "behind", "beyond", "near", "toward", "towards", "upon", "de",
    "en", "con", "por", "para", "sin", "sobre", "entre", "hacia", "desde", "hasta", "à", "dans",
    "avec", "pour", "par", "sur", "sous", "chez", "vers", "an", "auf", "mit", "von", "zu", "für",
    "bei", "nach", "aus", "über", "unter", "di", "da", "per", "tra", "fra",
];

/// The word without the punctuation around it, in lower case.
fn bare(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

fn is_in(word: &str, list: &[&str]) -> bool {
    let bare = bare(word);
    list.contains(&bare.as_str())
}

/// The word ends a sentence.
pub fn ends_sentence(word: &str) -> bool {
    word.trim_end_matches(['"', '\'', ')', '»', '”', '’'])
        .ends_with(['.', '?', '!', '…', '。', '？', '！'])
}

/// The word ends a clause (a comma, a colon, a dash).
pub fn ends_clause(word: &str) -> bool {
    word.ends_with([',', ';', ':', '—', '–', '、', '，']) || word == "-"
}

/// The cost of a break between `before` and `after`; `pause`: the speaker
/// paused there.
pub fn break_cost(before: &str, after: &str, pause: bool) -> Cost {
    if ends_sentence(before) {
        AFTER_SENTENCE
    } else if ends_clause(before) {
        AFTER_CLAUSE
    } else if is_in(before, ARTICLES) {
        AFTER_ARTICLE
    } else if pause {
        AT_PAUSE
    } else if is_in(after, CONJUNCTIONS) {
        BEFORE_CONJUNCTION
    } else if is_in(before, PREPOSITIONS) {
        AFTER_PREPOSITION
    } else if is_in(after, PREPOSITIONS) {
        BEFORE_PREPOSITION
    } else {
        PLAIN
    }
}

/// A word as a line sees it: its text and whether a pause follows it.
#[derive(Debug, Clone, Copy)]
pub struct LineWord<'a> {
    pub text: &'a str,
    pub pause_after: bool,
}

/// Characters of `words` on one line.
pub fn line_chars(words: &[LineWord<'_>]) -> usize {
    let letters: usize = words.iter().map(|w| w.text.chars().count()).sum();
    letters + words.len().saturating_sub(1)
}

/// The cost of breaking after `words[i - 1]`.
pub fn cost_at(words: &[LineWord<'_>], i: usize) -> Cost {
    break_cost(words[i - 1].text, words[i].text, words[i - 1].pause_after)
}

/// The lines of a cue of `words`: one line when it fits, else the break
/// (up to `max_lines` lines) that costs least with the lines balanced.
/// `None` when the words do not fit; a single word longer than a line is a
/// line of its own.
pub fn layout(words: &[LineWord<'_>], max_lines: usize, max_chars: usize) -> Option<Vec<String>> {
    let join = |ws: &[LineWord<'_>]| ws.iter().map(|w| w.text).collect::<Vec<_>>().join(" ");
    if words.is_empty() {
        return None;
    }
    if line_chars(words) <= max_chars || words.len() == 1 {
        return Some(vec![join(words)]);
    }
    if max_lines < 2 {
        return None;
    }
    let best = (1..words.len())
        .filter_map(|i| {
            let (top, bottom) = (line_chars(&words[..i]), line_chars(&words[i..]));
            (top <= max_chars && bottom <= max_chars).then(|| {
                // A bottom-heavy pair reads better than a top-heavy one.
                let top_heavy = usize::from(top > bottom);
                let score =
                    cost_at(words, i) as usize * CHARS_PER_COST + top.abs_diff(bottom) + top_heavy;
                (score, i)
            })
        })
        .min()?;
    Some(vec![join(&words[..best.1]), join(&words[best.1..])])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<LineWord<'_>> {
        text.split(' ')
            .map(|w| LineWord {
                text: w,
                pause_after: false,
            })
            .collect()
    }

    fn lines(text: &str, max_chars: usize) -> Vec<String> {
        layout(&words(text), 2, max_chars).unwrap()
    }

    #[test]
    fn a_cue_that_fits_one_line_keeps_one_line() {
        assert_eq!(
            lines("Good evening and welcome.", 42),
            ["Good evening and welcome."]
        );
    }

    #[test]
    fn two_lines_break_after_a_clause_rather_than_in_the_middle() {
        assert_eq!(
            lines(
                "Tonight we look at the weather, the roads and the markets",
                42
            ),
            [
                "Tonight we look at the weather,",
                "the roads and the markets"
            ]
        );
    }

    #[test]
    fn a_line_never_ends_between_an_article_and_its_noun_where_it_can() {
        // The middle falls after "the": the break moves to before "at".
        let got = lines("We went down to the harbour at the end of the day", 32);
        assert!(!got[0].ends_with(" the"), "{got:?}");
        for line in &got {
            assert!(line.chars().count() <= 32, "{got:?}");
        }
    }

    #[test]
    fn lines_break_before_a_conjunction() {
        assert_eq!(
            lines(
                "The rain stays in the north and the sun shines in the south",
                42
            ),
            [
                "The rain stays in the north",
                "and the sun shines in the south"
            ]
        );
    }

    #[test]
    fn lines_break_before_a_preposition_rather_than_after_it() {
        assert_eq!(
            lines("We waited for hours at the gate", 20),
            ["We waited for hours", "at the gate"]
        );
    }

    #[test]
    fn a_sentence_end_is_the_best_break() {
        assert_eq!(
            lines("It was late. Everyone had gone home for the night", 42),
            ["It was late.", "Everyone had gone home for the night"]
        );
    }

    #[test]
    fn the_two_lines_are_balanced_when_no_break_is_better() {
        let got = lines(
            "one two three four five six seven eight nine ten eleven",
            42,
        );
        let (a, b) = (got[0].chars().count(), got[1].chars().count());
        assert!(a.abs_diff(b) <= 6, "{got:?}");
    }

    #[test]
    fn words_that_do_not_fit_two_lines_are_refused() {
        assert!(layout(&words("aaaa bbbb cccc dddd"), 2, 8).is_none());
        assert!(layout(&words("aaaa bbbb cccc"), 1, 10).is_none());
        // A single word longer than a line is a line of its own.
        assert_eq!(
            layout(&words("incomprehensibilities"), 2, 10).unwrap(),
            ["incomprehensibilities"]
        );
    }

    #[test]
    fn break_costs_rank_the_places_a_person_would_break() {
        assert!(break_cost("night.", "the", false) < break_cost("night,", "the", false));
        assert!(break_cost("night,", "and", false) < break_cost("night", "and", false));
        assert!(break_cost("night", "and", false) < break_cost("night", "in", false));
        assert!(break_cost("night", "in", false) < break_cost("in", "night", false));
        assert!(break_cost("in", "the", false) < break_cost("the", "night", false));
        assert!(break_cost("the", "night", true) > break_cost("cold", "night", false));
    }
}
