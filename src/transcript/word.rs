// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The closed, timed word the transcript hands on: what the subtitle
//! styles make cues of and the translation units gather, one type for both
//! rooms (neither reaches into the other for it).

/// A closed word of the transcript, with its speaker when one is known.
/// Times are nanoseconds on whatever timeline the caller uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub speaker: Option<String>,
}

impl Word {
    /// A word from `start_ns` to `end_ns` (no earlier than its start).
    pub fn new(text: &str, start_ns: u64, end_ns: u64) -> Word {
        Word {
            text: text.to_owned(),
            start_ns,
            end_ns: end_ns.max(start_ns),
            speaker: None,
        }
    }

    pub fn by(mut self, speaker: &str) -> Word {
        self.speaker = Some(speaker.to_owned());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_never_ends_before_it_starts() {
        let word = Word::new("late", 900, 400);
        assert_eq!((word.start_ns, word.end_ns), (900, 900));
    }

    #[test]
    fn by_names_the_speaker() {
        assert_eq!(
            Word::new("hi", 0, 1).by("Host").speaker.as_deref(),
            Some("Host")
        );
    }
}
