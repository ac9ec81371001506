// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Timed words into cues of a style, as they come.
//!
//! A cue holds whole words of one speaker. It closes at a sentence end or
//! a pause once it can stay its minimum on screen before the next word,
//! at a change of speaker, and when the next word would not fit its lines
//! or its longest time; then the cue ends at the best break among its
//! words (see [`super::lines`]), and the words after it start the next.
//! A cue stays on screen past its last word, into the silence after it, up
//! to the style's minimum and the time its text takes to read, never
//! closer to the next cue than the style's gap.
//!
//! A cue goes out once its end is decided: when the next word comes, or
//! when the silence seen reaches the end it wants and the gap. So the
//! cues do not depend on when the words and the silence are told, only on
//! their times: a live element and a file give the same cues, the live
//! one later by at most [`Style::hold_ns`] after a cue's first word.
//!
//! Speech faster than the reading speed: the cue ends where the next one
//! must start (less the gap) and is counted in [`Counts::too_fast`]; a cue
//! that the next word cuts below the minimum, in [`Counts::short`].

#[cfg(test)]
mod tests;

use super::lines::{self, layout, line_chars, LineWord};
use super::style::Style;
use super::Cue;

use crate::transcript::Word;

/// What the cues so far were like.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub cues: u64,
    /// Cues faster to read than the style allows: the speech was.
    pub too_fast: u64,
    /// Cues shorter than the style's minimum: the next word came first.
    pub short: u64,
    /// Characters a file's format could not carry, transliterated (SCC).
    pub chars_replaced: u64,
}

/// The shortest a cue is shown, however close the next one.
const FLOOR_NS: u64 = 40_000_000;
/// What the break cost of a cue's end weighs against the characters it
/// leaves unused.
const CUE_CHARS_PER_COST: usize = 6;
/// A cut that leaves a cue below its minimum, or too fast to read, when
/// another cut does not.
const SHORT_CUT: usize = 100;
const FAST_CUT: usize = 50;

/// A cue whose words are settled, waiting for its end.
#[derive(Debug, Clone)]
struct Closing {
    words: Vec<Word>,
    start: u64,
    /// Where it ends if nothing comes before.
    wanted_end: u64,
}

/// Builds the cues of one stream of words.
#[derive(Debug, Clone)]
pub struct CueBuilder {
    style: Style,
    /// The words of the cue being made.
    pending: Vec<Word>,
    closing: Option<Closing>,
    /// The next cue starts no earlier: the last one's end and the gap.
    not_before: u64,
    counts: Counts,
}

impl CueBuilder {
    pub fn new(style: Style) -> CueBuilder {
        CueBuilder {
            style,
            pending: Vec::new(),
            closing: None,
            not_before: 0,
            counts: Counts::default(),
        }
    }

    pub fn style(&self) -> &Style {
        &self.style
    }

    /// Cues decided from now on follow `style` (a language learnt while
    /// words are held: their reading speed).
    pub fn set_style(&mut self, style: Style) {
        self.style = style;
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The next word, in time order; returns the cues it decides.
    pub fn push(&mut self, mut word: Word) -> Vec<Cue> {
        let mut out = Vec::new();
        if word.text.trim().is_empty() {
            return out;
        }
        if let Some(last) = self.pending.last() {
            // Words come in order; one placed earlier (a merge's re-timing)
            // is taken where the last one starts.
            word.start_ns = word.start_ns.max(last.start_ns);
            word.end_ns = word.end_ns.max(word.start_ns);
        }
        if let Some(closing) = self.closing.take() {
            out.push(self.settle(closing, Some(word.start_ns)));
        }
        if !self.pending.is_empty() && self.boundary_closes(&word) {
            let closing = self.close_pending();
            out.push(self.settle(closing, Some(word.start_ns)));
        }
        self.add(word, &mut out);
        out
    }

    /// No word starts before `t`; returns the cues that decides.
    pub fn silence_until(&mut self, t: u64) -> Vec<Cue> {
        let mut out = Vec::new();
        if let Some(closing) = self.closing.take() {
            if t < closing.wanted_end + self.style.min_gap_ns {
                self.closing = Some(closing);
                return out;
            }
            out.push(self.settle(closing, None));
        }
        let Some(last) = self.pending.last() else {
            return out;
        };
        let paused = lines::ends_sentence(&last.text) || t >= last.end_ns + self.style.pause_ns;
        if paused && self.can_stay_minimum(t) {
            let closing = self.close_pending();
            if t >= closing.wanted_end + self.style.min_gap_ns {
                out.push(self.settle(closing, None));
            } else {
                self.closing = Some(closing);
            }
        }
        out
    }

    /// Everything held goes out (end of stream, a stall, a new segment):
    /// the last cue ends where it wants to, but not past `until` (if it
    /// is after its last word).
    pub fn finish(&mut self, until: Option<u64>) -> Vec<Cue> {
        let mut out = Vec::new();
        if let Some(closing) = self.closing.take() {
            out.push(self.settle_until(closing, until));
        }
        if !self.pending.is_empty() {
            let closing = self.close_pending();
            out.push(self.settle_until(closing, until));
        }
        out
    }

    /// Where the earliest cue not out yet starts, if any is held.
    pub fn horizon(&self) -> Option<u64> {
        let held = self.closing.as_ref().map(|c| c.start).or_else(|| {
            self.pending
                .first()
                .map(|w| w.start_ns.max(self.not_before))
        })?;
        Some(held)
    }

    /// Forgets what is held (a flush): the next word starts afresh.
    pub fn reset(&mut self) {
        self.pending.clear();
        self.closing = None;
        self.not_before = 0;
    }

    fn cue_start(&self, first: &Word) -> u64 {
        first.start_ns.max(self.not_before)
    }

    /// The pending cue could stay its minimum before a word at `next`.
    fn can_stay_minimum(&self, next: u64) -> bool {
        let start = self.cue_start(&self.pending[0]);
        next.saturating_sub(self.style.min_gap_ns) >= start + self.style.min_duration_ns
    }

    /// Whether the pending cue ends before `word`: a new speaker, or a
    /// sentence end or a pause after which the cue can stay its minimum.
    fn boundary_closes(&self, word: &Word) -> bool {
        let last = self.pending.last().expect("pending words");
        if word.speaker != last.speaker {
            return true;
        }
        let paused = lines::ends_sentence(&last.text)
            || word.start_ns.saturating_sub(last.end_ns) >= self.style.pause_ns;
        paused && self.can_stay_minimum(word.start_ns)
    }

    /// Adds `word` to the pending cue; while it does not fit, a cue of the
    /// pending words' best beginning goes out.
    fn add(&mut self, word: Word, out: &mut Vec<Cue>) {
        while !self.pending.is_empty() && !self.fits(&self.pending, Some(&word)) {
            let cut = self.best_cut(&word);
            let rest = self.pending.split_off(cut);
            let words = std::mem::replace(&mut self.pending, rest);
            let next = self.pending.first().unwrap_or(&word).start_ns;
            let closing = self.closing_of(words);
            out.push(self.settle(closing, Some(next)));
        }
        self.pending.push(word);
    }

    /// Whether `words` (and `more`) make one cue: their lines fit and they
    /// span no more than the longest cue.
    fn fits(&self, words: &[Word], more: Option<&Word>) -> bool {
        let all: Vec<&Word> = words.iter().chain(more).collect();
        let (Some(first), Some(last)) = (all.first(), all.last()) else {
            return true;
        };
        if all.len() > 1 && last.end_ns.saturating_sub(first.start_ns) > self.style.max_duration_ns
        {
            return false;
        }
        layout(
            &self.line_words(&all),
            self.style.max_lines,
            self.style.max_chars,
        )
        .is_some()
    }

    /// Where to end a cue of the pending words that `word` does not fit
    /// beside: the break a person would take, the cue as full as it can be,
    /// readable before the words after it.
    fn best_cut(&self, word: &Word) -> usize {
        let n = self.pending.len();
        let all: Vec<&Word> = self.pending.iter().chain(Some(word)).collect();
        let line_words = self.line_words(&all);
        let start = self.cue_start(&self.pending[0]);
        let capacity = self.style.capacity();
        (1..=n)
            .filter(|&k| k == n || self.fits(&self.pending[k..], Some(word)))
            .map(|k| {
                let chars = line_chars(&line_words[..k]);
                let room = all[k]
                    .start_ns
                    .saturating_sub(self.style.min_gap_ns)
                    .saturating_sub(start);
                let mut score = lines::cost_at(&line_words, k) as usize * CUE_CHARS_PER_COST
                    + capacity.saturating_sub(chars);
                if room < self.style.min_duration_ns {
                    score += SHORT_CUT;
                }
                if let Some(speed) = self.style.max_speed {
                    if room < speed.reading_ns(chars, k) {
                        score += FAST_CUT;
                    }
                }
                // The later cut of two that score the same.
                (score, n - k)
            })
            .min()
            .map_or(n, |(_, back)| n - back)
    }

    fn line_words<'a>(&self, words: &[&'a Word]) -> Vec<LineWord<'a>> {
        words
            .iter()
            .enumerate()
            .map(|(i, w)| LineWord {
                text: &w.text,
                pause_after: words.get(i + 1).is_some_and(|next| {
                    next.start_ns.saturating_sub(w.end_ns) >= self.style.pause_ns
                }),
            })
            .collect()
    }

    fn close_pending(&mut self) -> Closing {
        let words = std::mem::take(&mut self.pending);
        self.closing_of(words)
    }

    fn closing_of(&self, words: Vec<Word>) -> Closing {
        let start = self.cue_start(&words[0]);
        let last_end = words.last().map_or(start, |w| w.end_ns).max(start);
        let all: Vec<&Word> = words.iter().collect();
        let chars = line_chars(&self.line_words(&all));
        let reading = self
            .style
            .target_speed
            .map_or(0, |s| s.reading_ns(chars, words.len()));
        let wanted = (start + self.style.min_duration_ns.max(reading))
            .min(start + self.style.max_duration_ns)
            .max(last_end);
        Closing {
            words,
            start,
            wanted_end: wanted,
        }
    }

    fn settle_until(&mut self, closing: Closing, until: Option<u64>) -> Cue {
        let last_end = closing.words.last().map_or(0, |w| w.end_ns);
        let cap = until.map(|u| u.max(last_end));
        let closing = Closing {
            wanted_end: cap.map_or(closing.wanted_end, |c| closing.wanted_end.min(c)),
            ..closing
        };
        self.settle(closing, None)
    }

    /// The cue, ending where it wants to or before the next word at
    /// `next` (less the gap).
    fn settle(&mut self, closing: Closing, next: Option<u64>) -> Cue {
        let Closing {
            words,
            start,
            wanted_end,
        } = closing;
        let mut end = wanted_end;
        if let Some(next) = next {
            end = end.min(next.saturating_sub(self.style.min_gap_ns));
        }
        let end = end.max(start + FLOOR_NS.min(wanted_end.saturating_sub(start).max(1)));
        self.not_before = end + self.style.min_gap_ns;
        self.count(&words, end - start);
        let all: Vec<&Word> = words.iter().collect();
        let line_words = self.line_words(&all);
        let lines =
            layout(&line_words, self.style.max_lines, self.style.max_chars).unwrap_or_else(|| {
                vec![all
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")]
            });
        Cue {
            lines,
            start_ns: start,
            end_ns: end,
            speaker: words[0].speaker.clone(),
        }
    }

    fn count(&mut self, words: &[Word], duration: u64) {
        self.counts.cues += 1;
        if duration < self.style.min_duration_ns {
            self.counts.short += 1;
        }
        let all: Vec<&Word> = words.iter().collect();
        let chars = line_chars(&self.line_words(&all));
        if let Some(speed) = self.style.max_speed {
            if speed.of(chars, words.len(), duration) > speed.limit() * 1.001 {
                self.counts.too_fast += 1;
            }
        }
    }
}

/// The words of `text` (split at white space) spread over `start_ns` to
/// `end_ns`, each taking its share of the letters' share of the time (as
/// the transcript places text).
pub fn spread_words(text: &str, start_ns: u64, end_ns: u64, speaker: Option<&str>) -> Vec<Word> {
    let end_ns = end_ns.max(start_ns);
    let words: Vec<&str> = text.split_whitespace().collect();
    let total: u64 = words.iter().map(|w| w.chars().count() as u64).sum();
    let at = |letters: u64| start_ns + (end_ns - start_ns) * letters / total.max(1);
    let mut before = 0;
    words
        .into_iter()
        .map(|text| {
            let len = text.chars().count() as u64;
            let mut word = Word::new(text, at(before), at(before + len));
            word.speaker = speaker.map(str::to_owned);
            before += len;
            word
        })
        .collect()
}

/// A translation of the speech from `start_ns` to `end_ns` in cues of
/// `style`, each spanning its words' share of that time (shared by their
/// letters, as the transcript places text); broadcast leaves it one cue.
pub fn split_text(
    style: &Style,
    text: &str,
    start_ns: u64,
    end_ns: u64,
    speaker: Option<&str>,
) -> Vec<Cue> {
    let end_ns = end_ns.max(start_ns);
    let words = spread_words(text, start_ns, end_ns, speaker);
    if words.is_empty() {
        return Vec::new();
    }
    if style.is_broadcast() {
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        return vec![Cue {
            lines: vec![texts.join(" ")],
            start_ns,
            end_ns,
            speaker: speaker.map(str::to_owned),
        }];
    }
    let mut builder = CueBuilder::new(style.clone());
    builder.not_before = start_ns;
    let mut cues: Vec<Cue> = words.into_iter().flat_map(|w| builder.push(w)).collect();
    cues.extend(builder.finish(Some(end_ns)));
    cues
}
