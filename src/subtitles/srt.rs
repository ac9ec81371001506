// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! SubRip (`.srt`): numbered cues, `HH:MM:SS,mmm` times, the lines, a
//! blank line. A new speaker is named at the start of their first cue.

use super::{Cue, Format};

/// `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT).
pub(super) fn clock(ns: u64, separator: char) -> String {
    let ms = ns / 1_000_000;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

#[derive(Debug, Default)]
pub struct Srt {
    cues: u64,
    speaker: Option<String>,
}

impl Format for Srt {
    fn header(&self) -> String {
        String::new()
    }

    fn cue(&mut self, cue: &Cue) -> String {
        self.cues += 1;
        let mut text = cue.text();
        if let Some(speaker) = cue.speaker.as_deref() {
            if self.speaker.as_deref() != Some(speaker) {
                text = format!("{speaker}: {text}");
            }
        }
        self.speaker = cue.speaker.clone();
        format!(
            "{}\n{} --> {}\n{text}\n\n",
            self.cues,
            clock(cue.start_ns, ','),
            clock(cue.end_ns, ',')
        )
    }

    fn tail(&self) -> String {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cue(lines: &[&str], speaker: Option<&str>) -> Cue {
        Cue {
            lines: lines.iter().map(|l| l.to_string()).collect(),
            start_ns: 3_723_456_000_000,
            end_ns: 3_724_000_000_000,
            speaker: speaker.map(str::to_owned),
        }
    }

    #[test]
    fn srt_cues_are_numbered_with_comma_milliseconds_and_their_lines() {
        let mut srt = Srt::default();
        assert_eq!(srt.header(), "");
        assert_eq!(
            srt.cue(&cue(&["hello"], None)),
            "1\n01:02:03,456 --> 01:02:04,000\nhello\n\n"
        );
        assert_eq!(
            srt.cue(&cue(&["two lines", "of text"], None)),
            "2\n01:02:03,456 --> 01:02:04,000\ntwo lines\nof text\n\n"
        );
    }

    #[test]
    fn srt_names_a_speaker_where_they_start() {
        let mut srt = Srt::default();
        assert!(srt
            .cue(&cue(&["hi", "there"], Some("Bob <2>")))
            .ends_with("\nBob <2>: hi\nthere\n\n"));
        assert!(srt
            .cue(&cue(&["again"], Some("Bob <2>")))
            .ends_with("\nagain\n\n"));
    }
}
