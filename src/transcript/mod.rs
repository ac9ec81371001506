// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Turns the model's text, as it grows, into timed words or caption lines.
//!
//! Voxtral Realtime publishes no timestamps. What is known is how far the
//! audio reaches that each piece of text can be about: the model writes one
//! token per 80 ms frame, a delay behind it, so the engine knows the end of
//! the last frame it has decoded. Text that appears with a decode was spoken
//! between the previous decode's end and this one's; its letters are spread
//! over that stretch in order (spaces take no time). At the end of a stream
//! the remaining text covers up to the end of the audio. Each closed word
//! passes through the house's wording ([`crate::wording`]) before it becomes
//! a cue or part of a line.
//!
//! Times here are nanoseconds from the start of one engine stream; the
//! elements map them onto the pipeline's running time. Nothing in this module
//! knows about GStreamer.
//!
//! [`Word`] (`word.rs`) is a closed word with its time and speaker: what the
//! subtitle styles make cues of and the translation units gather.

#[cfg(test)]
mod tests;
mod word;

use crate::wording::{Rewriter, SharedRules, Timed};

pub use word::Word;

/// What to cut the transcript into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segmentation {
    /// One cue per word, as gst-plugins-rs transcribers output.
    Words,
    /// Caption lines of at most `max_chars` characters (a longer single word
    /// is a line of its own).
    Lines { max_chars: usize },
}

/// How timing is derived and when held-back text is let go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TranscriptConfig {
    /// A word is normally held until the next word starts (it may still
    /// grow). When no text came for this long after its last character, it
    /// is let go anyway, so a pause in speech does not hold it back.
    pub release_after_ns: u64,
    /// Shortest duration given to a cue, where the audio allows it.
    pub min_duration_ns: u64,
    pub segmentation: Segmentation,
}

impl Default for TranscriptConfig {
    fn default() -> Self {
        Self {
            release_after_ns: 480_000_000,
            min_duration_ns: 80_000_000,
            segmentation: Segmentation::Words,
        }
    }
}

/// A timed piece of transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cue {
    pub text: String,
    pub start: u64,
    pub end: u64,
}

impl Cue {
    pub fn duration(&self) -> u64 {
        self.end - self.start
    }
}

/// What the transcript hands on, in time order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    Cue(Cue),
    /// Nothing will be said between `start` and `end`.
    Gap {
        start: u64,
        end: u64,
    },
}

/// A word placed on the audio it was heard in, open to more text until
/// closed.
#[derive(Debug, Clone)]
struct Placed {
    text: String,
    start: u64,
    end: u64,
    /// Whitespace followed it, or it was let go: it takes no more text.
    closed: bool,
}

#[derive(Debug, Clone, Default)]
struct Line {
    words: Vec<Placed>,
    chars: usize,
}

impl Line {
    fn chars_with(&self, word: &Placed) -> usize {
        let len = word.text.chars().count();
        if self.words.is_empty() {
            len
        } else {
            self.chars + 1 + len
        }
    }

    fn push(&mut self, word: Placed) {
        self.chars = self.chars_with(&word);
        self.words.push(word);
    }

    fn cue(&mut self) -> Option<Cue> {
        let words = std::mem::take(&mut self.words);
        self.chars = 0;
        let first = words.first()?;
        let start = first.start;
        let end = words.last().map_or(start, |w| w.end);
        let text = words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Some(Cue { text, start, end })
    }
}

/// The transcript of one engine stream.
#[derive(Debug, Clone)]
pub struct Transcript {
    config: TranscriptConfig,
    /// End of the audio stretch that text has been placed on so far.
    covered: u64,
    /// Everything before this has been handed on as cues or gaps.
    handed_on: u64,
    word: Option<Placed>,
    /// Closed words on their way to the house's wording.
    rewriter: Rewriter,
    line: Line,
    /// Where a new speaker starts (stream positions, in order): a line
    /// never holds two speakers.
    turns: Vec<u64>,
    finished: bool,
}

impl Transcript {
    pub fn new(config: TranscriptConfig) -> Self {
        Self::with_rules(config, SharedRules::default())
    }

    /// A transcript whose words are worded by `rules` (dictionary and
    /// profanity).
    pub fn with_rules(config: TranscriptConfig, rules: SharedRules) -> Self {
        Self {
            config,
            covered: 0,
            handed_on: 0,
            word: None,
            rewriter: Rewriter::new(rules),
            line: Line::default(),
            turns: Vec::new(),
            finished: false,
        }
    }

    /// A new speaker starts at `at`: the line in progress ends before the
    /// first word that starts there or later.
    pub fn turn_at(&mut self, at: u64) {
        self.turns.retain(|&t| t < at);
        self.turns.push(at);
    }

    pub fn config(&self) -> &TranscriptConfig {
        &self.config
    }

    /// Position up to which output has been handed on.
    pub fn handed_on(&self) -> u64 {
        self.handed_on
    }

    /// Text held back because it may still grow.
    pub fn held_text(&self) -> String {
        let mut parts: Vec<&str> = self.line.words.iter().map(|w| w.text.as_str()).collect();
        parts.extend(self.rewriter.held().iter().map(|w| w.text.as_str()));
        if let Some(w) = &self.word {
            parts.push(&w.text);
        }
        parts.join(" ")
    }

    /// Places `text`, which is about the audio up to `heard_until`, and
    /// returns what can be handed on.
    pub fn push(&mut self, text: &str, heard_until: u64) -> Vec<Output> {
        if self.finished {
            return Vec::new();
        }
        self.place(text, heard_until)
    }

    /// Places the last text of the stream, which covers up to the end of the
    /// audio, and hands on everything that was held.
    pub fn finish(&mut self, text: &str, audio_end: u64) -> Vec<Output> {
        if self.finished {
            return Vec::new();
        }
        let mut out = self.place(text, audio_end);
        self.finished = true;
        self.close_word(audio_end, &mut out);
        self.flush_rewriter(&mut out);
        self.flush_line(&mut out);
        self.gap_until(audio_end.max(self.covered), &mut out);
        out
    }

    /// Hands on everything held, as if the speaker had paused: for when the
    /// input stalls and downstream may be waiting for this text (a muxer
    /// whose other input is full, say).
    pub fn release_held(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        self.close_word(self.covered, &mut out);
        self.flush_rewriter(&mut out);
        self.flush_line(&mut out);
        self.gap_until(self.covered, &mut out);
        out
    }

    fn place(&mut self, text: &str, until: u64) -> Vec<Output> {
        let from = self.covered;
        let to = until.max(from);
        let mut out = Vec::new();
        let letters = text.chars().filter(|c| !c.is_whitespace()).count() as u64;
        let mut i = 0;
        for ch in text.chars() {
            let t0 = from + (to - from) * i / letters.max(1);
            if ch.is_whitespace() {
                self.close_word(t0, &mut out);
            } else {
                let t1 = from + (to - from) * (i + 1) / letters;
                self.add_char(ch, t0, t1, &mut out);
                i += 1;
            }
        }
        self.covered = to;
        if let Some(word) = self.word.as_ref().filter(|w| !w.closed) {
            let ready = self.rewriter.next_word_begins(&word.text);
            self.emit_worded(ready, &mut out);
        }
        self.release_stale_word(&mut out);
        let stale = self.rewriter.release_stale(self.covered);
        self.emit_worded(stale, &mut out);
        self.flush_paused_line(&mut out);
        let horizon = self.horizon();
        self.gap_until(horizon, &mut out);
        out
    }

    fn add_char(&mut self, ch: char, t0: u64, t1: u64, out: &mut Vec<Output>) {
        match &mut self.word {
            Some(word) if !word.closed => {
                word.text.push(ch);
                word.end = t1;
            }
            _ => {
                self.close_word(t0, out);
                self.word = Some(Placed {
                    text: ch.to_string(),
                    start: t0,
                    end: t1,
                    closed: false,
                });
            }
        }
    }

    /// Hands on the current word; `limit` is where the next one may start.
    fn close_word(&mut self, limit: u64, out: &mut Vec<Output>) {
        let Some(mut word) = self.word.take() else {
            return;
        };
        let stretched = word.start + self.config.min_duration_ns;
        word.end = word.end.max(stretched.min(limit.max(word.end)));
        let ready = self.rewriter.push(Timed {
            text: word.text,
            start: word.start,
            end: word.end,
        });
        self.emit_worded(ready, out);
    }

    fn flush_rewriter(&mut self, out: &mut Vec<Output>) {
        let ready = self.rewriter.flush();
        self.emit_worded(ready, out);
    }

    fn emit_worded(&mut self, words: Vec<Timed>, out: &mut Vec<Output>) {
        for w in words {
            let word = Placed {
                text: w.text,
                start: w.start,
                end: w.end,
                closed: true,
            };
            self.emit_word(word, out);
        }
    }

    fn release_stale_word(&mut self, out: &mut Vec<Output>) {
        let stale = self
            .word
            .as_ref()
            .is_some_and(|w| self.covered.saturating_sub(w.end) >= self.config.release_after_ns);
        if stale {
            self.close_word(self.covered, out);
        }
    }

    fn emit_word(&mut self, word: Placed, out: &mut Vec<Output>) {
        match self.config.segmentation {
            Segmentation::Words => self.emit(
                Cue {
                    text: word.text,
                    start: word.start,
                    end: word.end,
                },
                out,
            ),
            Segmentation::Lines { max_chars } => {
                let full = self.line.chars_with(&word) > max_chars;
                if !self.line.words.is_empty() && (full || self.turn_before(word.start)) {
                    self.flush_line(out);
                }
                self.turns.retain(|&t| t > word.start);
                let ends_sentence = word.text.ends_with(['.', '?', '!', '。', '？', '！']);
                self.line.push(word);
                if ends_sentence {
                    self.flush_line(out);
                }
            }
        }
    }

    /// Whether a new speaker starts after the line's first word and at or
    /// before `start`.
    fn turn_before(&self, start: u64) -> bool {
        let Some(first) = self.line.words.first() else {
            return false;
        };
        self.turns.iter().any(|&t| first.start < t && t <= start)
    }

    fn flush_line(&mut self, out: &mut Vec<Output>) {
        if let Some(cue) = self.line.cue() {
            self.emit(cue, out);
        }
    }

    /// A line whose speaker paused is handed on rather than held for words
    /// that may come much later.
    fn flush_paused_line(&mut self, out: &mut Vec<Output>) {
        let paused = self.word.is_none()
            && self.line.words.last().is_some_and(|w| {
                self.covered.saturating_sub(w.end) >= self.config.release_after_ns
            });
        if paused {
            self.flush_line(out);
        }
    }

    fn emit(&mut self, cue: Cue, out: &mut Vec<Output>) {
        self.gap_until(cue.start, out);
        self.handed_on = self.handed_on.max(cue.end);
        out.push(Output::Cue(cue));
    }

    /// Earliest time at which output not handed on yet can start.
    fn horizon(&self) -> u64 {
        let held = self.line.words.first().map(|w| w.start);
        let worded = self.rewriter.held().first().map(|w| w.start);
        held.or(worded)
            .or(self.word.as_ref().map(|w| w.start))
            .unwrap_or(self.covered)
    }

    fn gap_until(&mut self, end: u64, out: &mut Vec<Output>) {
        if end > self.handed_on {
            out.push(Output::Gap {
                start: self.handed_on,
                end,
            });
            self.handed_on = end;
        }
    }
}
