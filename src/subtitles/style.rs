// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The subtitle styles: how many lines of how many characters a cue holds,
//! how long it stays on screen, the gap between cues and the reading speed.
//! The figures and their sources: docs/files-and-muxing.md, "Subtitle
//! styles".

use std::fmt;

/// A frame at 24 fps (Netflix's gap is 2 of them).
const FRAME_24: u64 = 41_666_667;
/// A frame at 25 fps (the BBC's frame rate).
const FRAME_25: u64 = 40_000_000;
/// A frame at 30000/1001 fps (DCMP's US frame rate).
const FRAME_30: u64 = 33_366_667;
const SECOND: u64 = 1_000_000_000;

/// The named styles (the `subtitle-style` property's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StyleName {
    /// Rows of `max-line-chars`, a cue per row, as live captions roll.
    Broadcast,
    Netflix,
    Bbc,
    Dcmp,
}

impl StyleName {
    pub const ALL: [StyleName; 4] = [
        StyleName::Broadcast,
        StyleName::Netflix,
        StyleName::Bbc,
        StyleName::Dcmp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            StyleName::Broadcast => "broadcast",
            StyleName::Netflix => "netflix",
            StyleName::Bbc => "bbc",
            StyleName::Dcmp => "dcmp",
        }
    }
}

impl fmt::Display for StyleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How fast a cue may ask to be read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// Characters a second, spaces and punctuation counted (line breaks
    /// not).
    CharsPerSecond(f64),
    WordsPerMinute(f64),
}

impl Speed {
    /// The time `chars` characters in `words` words take to read.
    pub fn reading_ns(self, chars: usize, words: usize) -> u64 {
        let seconds = match self {
            Speed::CharsPerSecond(cps) => chars as f64 / cps,
            Speed::WordsPerMinute(wpm) => words as f64 * 60.0 / wpm,
        };
        (seconds * SECOND as f64).ceil() as u64
    }

    /// The speed a cue of `chars` characters in `words` words on screen
    /// for `duration_ns` asks, in this speed's unit.
    pub fn of(self, chars: usize, words: usize, duration_ns: u64) -> f64 {
        let seconds = duration_ns.max(1) as f64 / SECOND as f64;
        match self {
            Speed::CharsPerSecond(_) => chars as f64 / seconds,
            Speed::WordsPerMinute(_) => words as f64 * 60.0 / seconds,
        }
    }

    pub fn limit(self) -> f64 {
        match self {
            Speed::CharsPerSecond(v) | Speed::WordsPerMinute(v) => v,
        }
    }
}

/// The rules a cue follows.
#[derive(Debug, Clone, PartialEq)]
pub struct Style {
    pub name: StyleName,
    pub max_lines: usize,
    /// Characters a line holds.
    pub max_chars: usize,
    /// The least time on screen, where the speech allows it.
    pub min_duration_ns: u64,
    /// The most time on screen; a cue's words span no more.
    pub max_duration_ns: u64,
    /// The least time between two cues.
    pub min_gap_ns: u64,
    /// The fastest a cue may ask to be read (none: no limit).
    pub max_speed: Option<Speed>,
    /// The speed a cue's time on screen is made for, where the silence
    /// after it allows: at most `max_speed`'s.
    pub target_speed: Option<Speed>,
    /// Silence after a word that ends a cue (when it can stay its minimum).
    pub pause_ns: u64,
}

impl Style {
    /// The style `name` for speech in `language` (a BCP-47 tag; none is
    /// taken as English), with `max_line_chars` for broadcast's rows.
    pub fn new(name: StyleName, language: Option<&str>, max_line_chars: usize) -> Style {
        let english = language.is_none_or(|l| {
            let l = l.trim().to_ascii_lowercase();
            l.is_empty() || l == "en" || l.starts_with("en-") || l.starts_with("en_")
        });
        let pause_ns = SECOND / 2;
        match name {
            StyleName::Broadcast => Style {
                name,
                max_lines: 1,
                max_chars: max_line_chars.max(1),
                min_duration_ns: 0,
                max_duration_ns: u64::MAX / 4,
                min_gap_ns: 0,
                max_speed: None,
                target_speed: None,
                pause_ns,
            },
            StyleName::Netflix => {
                let cps = Speed::CharsPerSecond(if english { 20.0 } else { 17.0 });
                Style {
                    name,
                    max_lines: 2,
                    max_chars: 42,
                    min_duration_ns: SECOND * 5 / 6,
                    max_duration_ns: 7 * SECOND,
                    min_gap_ns: 2 * FRAME_24,
                    max_speed: Some(cps),
                    target_speed: Some(cps),
                    pause_ns,
                }
            }
            StyleName::Bbc => Style {
                name,
                max_lines: 2,
                max_chars: 37,
                min_duration_ns: SECOND,
                max_duration_ns: 7 * SECOND,
                min_gap_ns: 2 * FRAME_25,
                max_speed: Some(Speed::WordsPerMinute(180.0)),
                target_speed: Some(Speed::WordsPerMinute(160.0)),
                pause_ns,
            },
            StyleName::Dcmp => Style {
                name,
                max_lines: 2,
                max_chars: 32,
                min_duration_ns: 2 * SECOND,
                max_duration_ns: 7 * SECOND,
                min_gap_ns: 2 * FRAME_30,
                max_speed: Some(Speed::WordsPerMinute(225.0)),
                target_speed: Some(Speed::WordsPerMinute(160.0)),
                pause_ns,
            },
        }
    }

    /// The same style for speech in `language` (its reading speed).
    pub fn for_language(&self, language: Option<&str>) -> Style {
        Style {
            max_chars: self.max_chars,
            ..Style::new(self.name, language, self.max_chars)
        }
    }

    /// The same style with lines of at most `chars` (a format's own limit,
    /// such as CEA-608's 32 columns in SCC).
    pub fn with_line_limit(mut self, chars: usize) -> Style {
        self.max_chars = self.max_chars.min(chars.max(1));
        self
    }

    /// Whether cues are rows as the transcript gives them (no reading
    /// rules).
    pub fn is_broadcast(&self) -> bool {
        self.name == StyleName::Broadcast
    }

    /// Live, the longest a cue is held after its first word's start before
    /// its end is decided: what a live element adds to its latency for it.
    pub fn hold_ns(&self) -> u64 {
        if self.is_broadcast() {
            0
        } else {
            self.max_duration_ns + self.min_gap_ns
        }
    }

    /// Characters a cue holds at most.
    pub fn capacity(&self) -> usize {
        self.max_lines * self.max_chars + self.max_lines.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netflix_reads_20_characters_a_second_in_english_and_17_in_other_languages() {
        let speed = |lang| Style::new(StyleName::Netflix, lang, 32).max_speed;
        assert_eq!(speed(None), Some(Speed::CharsPerSecond(20.0)));
        assert_eq!(speed(Some("en-GB")), Some(Speed::CharsPerSecond(20.0)));
        assert_eq!(speed(Some("es")), Some(Speed::CharsPerSecond(17.0)));
    }

    #[test]
    fn the_styles_follow_their_guides() {
        let n = Style::new(StyleName::Netflix, None, 32);
        assert_eq!((n.max_lines, n.max_chars), (2, 42));
        assert_eq!(n.min_duration_ns, 833_333_333);
        assert_eq!(n.max_duration_ns, 7_000_000_000);
        assert_eq!(n.min_gap_ns, 83_333_334);
        let b = Style::new(StyleName::Bbc, None, 32);
        assert_eq!((b.max_lines, b.max_chars), (2, 37));
        let d = Style::new(StyleName::Dcmp, None, 32);
        assert_eq!(
            (d.max_lines, d.max_chars, d.min_duration_ns),
            (2, 32, 2 * SECOND)
        );
        assert_eq!(d.max_speed, Some(Speed::WordsPerMinute(225.0)));
        let r = Style::new(StyleName::Broadcast, None, 28);
        assert_eq!((r.max_lines, r.max_chars, r.hold_ns()), (1, 28, 0));
    }

    #[test]
    fn reading_time_counts_characters_or_words() {
        assert_eq!(Speed::CharsPerSecond(20.0).reading_ns(40, 7), 2 * SECOND);
        assert_eq!(Speed::WordsPerMinute(180.0).reading_ns(40, 9), 3 * SECOND);
        let cps = Speed::CharsPerSecond(20.0).of(30, 5, SECOND);
        assert!((cps - 30.0).abs() < 1e-9);
    }
}
