// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Who is speaking: speaker names as the application gives them (checked
//! here), and the changes of speaker on a stream's timeline, so that each
//! word is told its speaker by where it starts, whatever the model's delay.
//! Pure: no GStreamer.

use std::collections::VecDeque;

/// The custom downstream event an application sends on a sink pad to say
/// who speaks from that point of the stream on (string field `speaker`).
pub const SPEAKER_EVENT: &str = "voxtralrt/speaker";
/// The custom downstream event the transcriber sends before the first word
/// of each new speaker, as gst-plugins-rs transcribers do (field `speaker`).
pub const SPEAKER_CHANGE_EVENT: &str = "rstranscribe/speaker-change";
/// The longest name taken: a CEA-608 row.
pub const MAX_NAME_CHARS: usize = 32;

/// Why a name was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadName {
    Empty,
    TooLong(usize),
    ControlCharacter,
}

impl std::fmt::Display for BadName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadName::Empty => write!(f, "the name is empty"),
            BadName::TooLong(n) => write!(
                f,
                "the name has {n} characters, more than the {MAX_NAME_CHARS} a caption row holds"
            ),
            BadName::ControlCharacter => write!(f, "the name holds a control character"),
        }
    }
}

/// `name` as given (surrounding whitespace trimmed), if outputs can carry it.
pub fn check_name(name: &str) -> Result<String, BadName> {
    let name = name.trim();
    if name.is_empty() {
        return Err(BadName::Empty);
    }
    if name.chars().any(char::is_control) {
        return Err(BadName::ControlCharacter);
    }
    let n = name.chars().count();
    if n > MAX_NAME_CHARS {
        return Err(BadName::TooLong(n));
    }
    Ok(name.to_owned())
}

/// The changes of speaker on one input's timeline (ns).
#[derive(Debug, Clone, Default)]
pub struct SpeakerTrack {
    /// (from, speaker), in time order; before the first, nobody is named.
    changes: VecDeque<(u64, String)>,
}

impl SpeakerTrack {
    /// `speaker` speaks from `at` on. A change at or before the last one's
    /// time replaces what came after it.
    pub fn change_at(&mut self, at: u64, speaker: String) {
        while self.changes.back().is_some_and(|&(t, _)| t >= at) {
            self.changes.pop_back();
        }
        if self.changes.back().is_some_and(|(_, s)| *s == speaker) {
            return;
        }
        self.changes.push_back((at, speaker));
    }

    /// Who speaks at `t`.
    pub fn speaker_at(&self, t: u64) -> Option<&str> {
        self.changes
            .iter()
            .rev()
            .find(|&&(from, _)| from <= t)
            .map(|(_, s)| s.as_str())
    }

    /// The times of the changes after `t`.
    pub fn changes_after(&self, t: u64) -> impl Iterator<Item = u64> + '_ {
        self.changes
            .iter()
            .map(|&(from, _)| from)
            .filter(move |&from| from > t)
    }

    /// Forgets the changes no word from `t` on can need (the one in force
    /// at `t` stays).
    pub fn forget_before(&mut self, t: u64) {
        while self.changes.len() > 1 && self.changes[1].0 <= t {
            self.changes.pop_front();
        }
    }

    /// Whether any speaker was ever named.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    pub fn clear(&mut self) {
        self.changes.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_belongs_to_whoever_speaks_where_it_starts() {
        let mut track = SpeakerTrack::default();
        assert_eq!(track.speaker_at(0), None);
        track.change_at(1_000, "Alice".into());
        track.change_at(5_000, "Bob".into());
        assert_eq!(track.speaker_at(999), None);
        assert_eq!(track.speaker_at(1_000), Some("Alice"));
        assert_eq!(track.speaker_at(4_999), Some("Alice"));
        assert_eq!(track.speaker_at(5_000), Some("Bob"));
        assert_eq!(track.changes_after(1_000).collect::<Vec<_>>(), [5_000]);
    }

    #[test]
    fn a_change_back_in_time_replaces_the_later_ones_and_repeats_are_one_turn() {
        let mut track = SpeakerTrack::default();
        track.change_at(1_000, "Alice".into());
        track.change_at(5_000, "Bob".into());
        track.change_at(3_000, "Carol".into());
        assert_eq!(track.speaker_at(6_000), Some("Carol"));
        track.change_at(7_000, "Carol".into());
        assert_eq!(track.changes_after(0).collect::<Vec<_>>(), [1_000, 3_000]);
    }

    #[test]
    fn forgetting_keeps_the_speaker_in_force() {
        let mut track = SpeakerTrack::default();
        track.change_at(1_000, "Alice".into());
        track.change_at(5_000, "Bob".into());
        track.forget_before(6_000);
        assert_eq!(track.speaker_at(6_000), Some("Bob"));
        assert_eq!(track.changes_after(0).collect::<Vec<_>>(), [5_000]);
    }

    #[test]
    fn names_outputs_cannot_carry_are_refused_with_the_reason() {
        assert_eq!(check_name(" Alice "), Ok("Alice".into()));
        assert_eq!(check_name("Zoë Łukasz 王"), Ok("Zoë Łukasz 王".into()));
        assert_eq!(check_name("  "), Err(BadName::Empty));
        assert_eq!(check_name("a\u{7}b"), Err(BadName::ControlCharacter));
        assert_eq!(check_name(&"x".repeat(33)), Err(BadName::TooLong(33)));
        assert!(check_name(&"x".repeat(32)).is_ok());
    }
}
