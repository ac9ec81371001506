// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The house's wording of the model's words: a dictionary of replacements,
//! then profanity rules. Applied to each word as the transcript closes it,
//! before words become lines, captions, messages or file entries, so that
//! every output says the same.
//!
//! A word that could start a rule of several words is held until the rule
//! matches or cannot; the hold is bounded by [`MAX_RULE_WORDS`] words and
//! [`MAX_HOLD_NS`] of audio. A replacement takes the start of its first word
//! and the end of its last. Nothing here knows about GStreamer pads.

pub mod dictionary;
pub mod profanity;
#[cfg(test)]
mod tests;

use std::sync::{Arc, Mutex};

pub use dictionary::{BadLine, Dictionary, MAX_RULE_WORDS};
pub use profanity::{Profanity, ProfanityMode};

/// The longest a word waits (audio after its end) for the rest of a rule
/// it may start: two or three words of ordinary speech.
pub const MAX_HOLD_NS: u64 = 1_000_000_000;

/// The rules in force.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub dictionary: Dictionary,
    pub profanity: Profanity,
}

impl Rules {
    /// The most a word can be held back (ns): only a rule of several words
    /// holds any.
    pub fn max_hold_ns(&self) -> u64 {
        if self.dictionary.max_words() > 1 {
            MAX_HOLD_NS
        } else {
            0
        }
    }
}

/// The rules an element's streams use, changed in place when a property
/// changes: clones share them, so a running stream takes the change from
/// its next word on.
#[derive(Debug, Clone, Default)]
pub struct SharedRules(Arc<Mutex<Arc<Rules>>>);

impl SharedRules {
    pub fn current(&self) -> Arc<Rules> {
        self.0.lock().unwrap().clone()
    }

    pub fn update(&self, change: impl FnOnce(&mut Rules)) {
        let mut guard = self.0.lock().unwrap();
        let mut rules = Rules::clone(&guard);
        change(&mut rules);
        *guard = Arc::new(rules);
    }
}

/// A timed word, times in ns on the transcript's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed {
    pub text: String,
    pub start: u64,
    pub end: u64,
}

/// Applies the rules to a stream's words, in order.
#[derive(Debug, Clone, Default)]
pub struct Rewriter {
    rules: SharedRules,
    held: Vec<Timed>,
}

impl Rewriter {
    pub fn new(rules: SharedRules) -> Rewriter {
        Rewriter {
            rules,
            held: Vec::new(),
        }
    }

    /// Takes the next word, which starts at or after the previous one's
    /// end (as the transcript closes them); returns the words that are
    /// ready, in the same order and not overlapping.
    pub fn push(&mut self, word: Timed) -> Vec<Timed> {
        self.held.push(word);
        self.resolve(None, false)
    }

    /// The next word has begun with `partial`: held words that no rule
    /// can join to it need not wait for the rest of it.
    pub fn next_word_begins(&mut self, partial: &str) -> Vec<Timed> {
        if self.held.is_empty() {
            return Vec::new();
        }
        let next = dictionary::key(partial);
        self.resolve(Some(&next), false)
    }

    /// Lets go of words that waited [`MAX_HOLD_NS`] by `now` (the end of the
    /// audio heard): the rule they may start is given up.
    pub fn release_stale(&mut self, now: u64) -> Vec<Timed> {
        let stale = self
            .held
            .first()
            .is_some_and(|w| now.saturating_sub(w.end) >= MAX_HOLD_NS);
        if stale {
            self.resolve(None, true)
        } else {
            Vec::new()
        }
    }

    /// Lets go of every held word (the stream ends or pauses).
    pub fn flush(&mut self) -> Vec<Timed> {
        self.resolve(None, true)
    }

    pub fn held(&self) -> &[Timed] {
        &self.held
    }

    fn resolve(&mut self, next: Option<&str>, give_up_waiting: bool) -> Vec<Timed> {
        let rules = self.rules.current();
        let mut ready = Vec::new();
        while !self.held.is_empty() {
            let keys: Vec<String> = self.held.iter().map(|w| dictionary::key(&w.text)).collect();
            if !give_up_waiting && rules.dictionary.could_grow(&keys, next) {
                break;
            }
            let words = match rules.dictionary.longest_match(&keys) {
                Some((n, rule)) => replaced(self.held.drain(..n).collect(), &rule.to),
                None => vec![self.held.remove(0)],
            };
            ready.extend(
                words
                    .into_iter()
                    .filter_map(|w| censored(w, &rules.profanity)),
            );
        }
        ready
    }
}

/// The replacement of `words`, a word at a time (outputs are a buffer per
/// word): together they span the originals, each a share by its letters.
fn replaced(words: Vec<Timed>, to: &str) -> Vec<Timed> {
    let original: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let text = dictionary::written_like(to, &original);
    let start = words.first().map_or(0, |w| w.start);
    let end = words.last().map_or(start, |w| w.end);
    let parts: Vec<&str> = text.split_whitespace().collect();
    let weight = |p: &str| p.chars().count().max(1) as u64;
    let total: u64 = parts.iter().map(|p| weight(p)).sum();
    let mut done = 0;
    parts
        .iter()
        .map(|p| {
            let from = start + (end - start) * done / total;
            done += weight(p);
            Timed {
                text: (*p).to_owned(),
                start: from,
                end: start + (end - start) * done / total,
            }
        })
        .collect()
}

fn censored(word: Timed, profanity: &Profanity) -> Option<Timed> {
    let text = profanity.apply(&word.text)?;
    Some(Timed { text, ..word })
}
