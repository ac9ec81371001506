// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Closed timed words gathered into units, the pieces of speech sent to
//! translation: a sentence, or what of it was said before a pause, a change
//! of speaker or the lookahead ran out.
//!
//! Translating whole sentences is the common cascade, and what a chat model
//! translates best; the lookahead (awstranscriber's `translate-lookahead`)
//! bounds how long a viewer waits for a sentence that does not end. A unit
//! closes:
//!
//! - after a word that ends a sentence (`.` `?` `!` `…`, or CJK `。` `？` `！`,
//!   closing quotes and brackets after them allowed);
//! - before a word that follows a pause of at least `pause`;
//! - before a word of another speaker;
//! - before a word that would make it span more than `lookahead`, from its
//!   first word's start to its last word's end; a word longer than that on
//!   its own is a unit alone;
//! - at [`UnitBuilder::flush`] (EOS), or at [`UnitBuilder::close_if_due`]
//!   once its [`UnitBuilder::deadline`] has passed (the pause after its
//!   last word, or the lookahead), so a unit whose speaker stopped
//!   mid-sentence does not wait for the next word.
//!
//! With no lookahead ([`UnitLimits::utterances`]) the units are the
//! speaker's utterances: what `rstranscribe/final-transcript` ends.
//!
//! Words are kept as written (the house's wording is applied upstream) and
//! joined with one space, as caption lines are. Times are nanoseconds on
//! whatever timeline the caller uses; nothing here knows about GStreamer.

use std::time::Duration;

use crate::transcript::Word;

/// A piece of speech to translate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// The words, joined with one space.
    pub text: String,
    /// The first word's start.
    pub start_ns: u64,
    /// The last word's end.
    pub end_ns: u64,
    pub speaker: Option<String>,
    /// How many words it holds.
    pub words: usize,
}

/// When a unit closes without a sentence end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnitLimits {
    /// A silence between two words at least this long closes the unit.
    pub pause: Duration,
    /// The longest a unit spans (translate-lookahead).
    pub lookahead: Duration,
}

/// The default pause: longer than the breaks between words and clauses of
/// fluent speech, shorter than the one between sentences.
pub const DEFAULT_PAUSE: Duration = Duration::from_millis(700);
/// awstranscriber's `translate-lookahead` default.
pub const DEFAULT_LOOKAHEAD: Duration = Duration::from_millis(3000);

impl UnitLimits {
    /// Utterances: closed by a sentence end, a pause or a speaker change,
    /// however long.
    pub fn utterances() -> UnitLimits {
        UnitLimits {
            pause: DEFAULT_PAUSE,
            lookahead: Duration::MAX,
        }
    }
}

impl Default for UnitLimits {
    fn default() -> Self {
        UnitLimits {
            pause: DEFAULT_PAUSE,
            lookahead: DEFAULT_LOOKAHEAD,
        }
    }
}

/// Gathers words into units, one at a time.
#[derive(Debug, Clone, Default)]
pub struct UnitBuilder {
    limits: UnitLimits,
    open: Option<Unit>,
}

impl UnitBuilder {
    pub fn new(limits: UnitLimits) -> UnitBuilder {
        UnitBuilder { limits, open: None }
    }

    /// Takes the next word; returns the units it closes, in order: the
    /// open one when the word cannot join it, then the word's own when it
    /// ends a sentence (or alone spans more than the lookahead).
    /// A blank word is ignored.
    pub fn push(&mut self, word: Word) -> Vec<Unit> {
        let mut closed = Vec::new();
        if word.text.trim().is_empty() {
            return closed;
        }
        if self.closes_before(&word) {
            closed.extend(self.flush());
        }
        let ends_unit =
            ends_sentence(&word.text) || self.spans_too_long(word.start_ns, word.end_ns);
        self.append(word);
        if ends_unit {
            closed.extend(self.flush());
        }
        closed
    }

    /// Closes the open unit, if any: at EOS, or when its time is up.
    pub fn flush(&mut self) -> Option<Unit> {
        self.open.take()
    }

    /// When the open unit must be closed even if no word comes: the pause
    /// after its last word, or its first word's start plus the lookahead,
    /// whichever is first. None when no unit is open.
    pub fn deadline(&self) -> Option<u64> {
        let lookahead = duration_ns(self.limits.lookahead);
        let pause = duration_ns(self.limits.pause);
        self.open.as_ref().map(|u| {
            u.start_ns
                .saturating_add(lookahead)
                .min(u.end_ns.saturating_add(pause))
        })
    }

    /// Whether `word` closes the open unit before it joins (a pause, a new
    /// speaker, the lookahead): the unit ends before the word, not with it.
    pub fn closes_before(&self, word: &Word) -> bool {
        !word.text.trim().is_empty() && self.open.as_ref().is_some_and(|u| !self.joins(u, word))
    }

    /// Closes the open unit if its deadline is at or before `now_ns`.
    pub fn close_if_due(&mut self, now_ns: u64) -> Option<Unit> {
        if self.deadline().is_some_and(|due| due <= now_ns) {
            self.flush()
        } else {
            None
        }
    }

    /// The unit being gathered, if any.
    pub fn open(&self) -> Option<&Unit> {
        self.open.as_ref()
    }

    /// Whether `word` may join `unit`: same speaker, no pause before it,
    /// and the unit still within the lookahead with it.
    fn joins(&self, unit: &Unit, word: &Word) -> bool {
        let gap = word.start_ns.saturating_sub(unit.end_ns);
        unit.speaker == word.speaker
            && gap < duration_ns(self.limits.pause)
            && !self.spans_too_long(unit.start_ns, word.end_ns)
    }

    fn spans_too_long(&self, start_ns: u64, end_ns: u64) -> bool {
        end_ns.saturating_sub(start_ns) > duration_ns(self.limits.lookahead)
    }

    fn append(&mut self, word: Word) {
        let text = word.text.trim();
        match &mut self.open {
            Some(unit) => {
                unit.text.push(' ');
                unit.text.push_str(text);
                unit.end_ns = unit.end_ns.max(word.end_ns);
                unit.words += 1;
            }
            None => {
                self.open = Some(Unit {
                    text: text.to_owned(),
                    start_ns: word.start_ns,
                    end_ns: word.end_ns,
                    speaker: word.speaker,
                    words: 1,
                })
            }
        }
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Whether a word ends a sentence: its last mark, past closing quotes and
/// brackets (`"Stop!"`, `(see above.)`, `「はい。」`), is a full stop, a
/// question or exclamation mark or an ellipsis. An abbreviation (`Dr.`)
/// closes a unit too: a unit cut early is still translatable.
pub fn ends_sentence(word: &str) -> bool {
    const CLOSERS: &[char] = &[
        '"', '\'', ')', ']', '}', '»', '”', '’', '」', '』', '）', '】',
    ];
    const ENDS: &[char] = &['.', '?', '!', '…', '。', '？', '！'];
    word.trim_end().trim_end_matches(CLOSERS).ends_with(ENDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn builder() -> UnitBuilder {
        UnitBuilder::new(UnitLimits::default())
    }

    /// Words of `text`, 300 ms each with 100 ms between, from `from_ms`.
    fn words(text: &str, from_ms: u64) -> Vec<Word> {
        text.split(' ')
            .enumerate()
            .map(|(k, w)| {
                let start = (from_ms + 400 * k as u64) * MS;
                Word::new(w, start, start + 300 * MS)
            })
            .collect()
    }

    fn push_all(b: &mut UnitBuilder, words: Vec<Word>) -> Vec<Unit> {
        words.into_iter().flat_map(|w| b.push(w)).collect()
    }

    fn texts(units: &[Unit]) -> Vec<&str> {
        units.iter().map(|u| u.text.as_str()).collect()
    }

    #[test]
    fn a_sentence_end_closes_the_unit_with_its_first_start_and_last_end() {
        let mut b = builder();
        let units = push_all(&mut b, words("Good evening. Welcome", 1000));
        assert_eq!(
            units,
            [Unit {
                text: "Good evening.".into(),
                start_ns: 1000 * MS,
                end_ns: 1700 * MS,
                speaker: None,
                words: 2,
            }]
        );
        assert_eq!(b.open().unwrap().text, "Welcome");
    }

    #[test]
    fn questions_exclamations_ellipses_and_cjk_marks_end_sentences() {
        for word in [
            "why?",
            "now!",
            "well…",
            "好。",
            "吗？",
            "啊！",
            "\"Stop!\"",
            "(see above.)",
            "「はい。」",
        ] {
            assert!(ends_sentence(word), "{word}");
        }
        for word in ["so,", "well", "3.5", "e.g", "\"quoted\"", ""] {
            assert!(!ends_sentence(word), "{word}");
        }
    }

    #[test]
    fn a_pause_of_at_least_the_limit_starts_a_new_unit() {
        let mut b = builder();
        let mut units = push_all(&mut b, words("so then", 0));
        // "then" ends at 700 ms: a word 699 ms later joins, 700 ms later not.
        units.extend(b.push(Word::new("we", 1399 * MS, 1500 * MS)));
        assert!(units.is_empty());
        units.extend(b.push(Word::new("left", 2200 * MS, 2400 * MS)));
        assert_eq!(texts(&units), ["so then we"]);
        assert_eq!(units[0].end_ns, 1500 * MS);
        assert_eq!(b.flush().unwrap().text, "left");
    }

    #[test]
    fn a_new_speakers_word_starts_a_new_unit() {
        let mut b = builder();
        let mut units = Vec::new();
        units.extend(b.push(Word::new("Thank", 0, 300 * MS).by("Host")));
        units.extend(b.push(Word::new("you", 400 * MS, 600 * MS).by("Host")));
        units.extend(b.push(Word::new("Hello", 700 * MS, 900 * MS).by("Guest")));
        assert_eq!(texts(&units), ["Thank you"]);
        assert_eq!(units[0].speaker.as_deref(), Some("Host"));
        let guest = b.flush().unwrap();
        assert_eq!(
            (guest.text.as_str(), guest.speaker.as_deref()),
            ("Hello", Some("Guest"))
        );
    }

    #[test]
    fn a_unit_spans_at_most_the_lookahead() {
        let mut b = builder();
        // Ten words of 300 ms every 400 ms: the eighth ends at 3100 ms.
        let units = push_all(
            &mut b,
            words("one two three four five six seven eight nine ten", 0),
        );
        assert_eq!(texts(&units), ["one two three four five six seven"]);
        assert_eq!(units[0].end_ns, 2700 * MS);
        assert_eq!(units[0].words, 7);
        assert_eq!(b.open().unwrap().start_ns, 2800 * MS);
    }

    #[test]
    fn a_word_longer_than_the_lookahead_is_a_unit_alone() {
        let mut b = builder();
        let units = b.push(Word::new("Aaaaah", 0, 3500 * MS));
        assert_eq!(texts(&units), ["Aaaaah"]);
        assert!(b.open().is_none());
    }

    #[test]
    fn the_deadline_is_the_first_words_start_plus_the_lookahead() {
        let mut b = UnitBuilder::new(UnitLimits {
            lookahead: Duration::from_millis(2000),
            pause: Duration::from_secs(10),
        });
        assert_eq!(b.deadline(), None);
        push_all(&mut b, words("and then", 5000));
        assert_eq!(b.deadline(), Some(7000 * MS));
        assert_eq!(b.close_if_due(6999 * MS), None);
        let unit = b.close_if_due(7000 * MS).unwrap();
        assert_eq!(unit.text, "and then");
        assert_eq!(b.deadline(), None);
    }

    #[test]
    fn a_unit_closes_once_the_pause_after_its_last_word_has_passed() {
        let mut b = builder();
        // "and then": 0-300 and 400-700 ms; no word comes after.
        push_all(&mut b, words("and then", 0));
        assert_eq!(b.deadline(), Some(1400 * MS));
        assert_eq!(b.close_if_due(1399 * MS), None);
        assert_eq!(b.close_if_due(1400 * MS).unwrap().text, "and then");
    }

    #[test]
    fn utterances_have_no_lookahead() {
        let mut b = UnitBuilder::new(UnitLimits::utterances());
        let units = push_all(
            &mut b,
            words("one two three four five six seven eight nine ten", 0),
        );
        assert!(units.is_empty());
        assert_eq!(b.deadline(), Some((3900 + 700) * MS));
        let next = Word::new("later", 5000 * MS, 5200 * MS);
        assert!(b.closes_before(&next));
        assert!(!b.closes_before(&Word::new("eleven", 4000 * MS, 4200 * MS)));
        assert!(!b.closes_before(&Word::new(" ", 9000 * MS, 9100 * MS)));
    }

    #[test]
    fn flush_closes_what_is_open_once() {
        let mut b = builder();
        push_all(&mut b, words("unfinished thought", 0));
        assert_eq!(b.flush().unwrap().text, "unfinished thought");
        assert_eq!(b.flush(), None);
    }

    #[test]
    fn words_are_kept_as_written() {
        let mut b = builder();
        let mut units = push_all(&mut b, words("GStreamer's Voxtral, 4B!", 0));
        assert_eq!(texts(&units), ["GStreamer's Voxtral, 4B!"]);
        assert_eq!(units[0].words, 3);
        // A blank word adds nothing, not even to the count.
        units = push_all(&mut b, vec![Word::new(" ", 2000 * MS, 2100 * MS)]);
        assert!(units.is_empty() && b.open().is_none());
    }

    #[test]
    fn a_cjk_sentence_closes_at_its_full_stop() {
        let mut b = builder();
        let units = push_all(&mut b, words("今天 天气 很好。 我们", 0));
        assert_eq!(texts(&units), ["今天 天气 很好。"]);
    }
}
