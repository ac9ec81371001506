// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Checks of a caption file's reading (tests/common/readers.rs) against the
//! cues it was written from: no problem reported, every word in order, and
//! in time (SCC: each cue's first word within 5 frames of its start, every
//! caption at least 5/6 s on screen; TTML: each cue's times to the
//! millisecond).

use gstvoxtralrt::caption::charset::map_608;
use gstvoxtralrt::subtitles::Cue;

use super::readers::{words, Caption, Reading};

/// One frame at 29.97 fps, in seconds.
pub const FRAME_S: f64 = 1001.0 / 30000.0;
/// An SCC caption shows within 5 frames of its cue's start ...
pub const SCC_SHOW_WITHIN_S: f64 = 5.0 * FRAME_S;
/// ... and stays at least 5/6 s (25 frames), less a frame that a reader
/// may round away.
pub const MIN_ON_SCREEN_S: f64 = 24.0 * FRAME_S;
/// TTML times are the cue's to the millisecond.
pub const TTML_WITHIN_S: f64 = 0.001;

/// Whether each cue starts a new speaker's turn.
pub fn turns(cues: &[Cue]) -> Vec<bool> {
    let mut last = None;
    cues.iter()
        .map(|c| {
            let turn = c.speaker.is_some() && c.speaker != last;
            last.clone_from(&c.speaker);
            turn
        })
        .collect()
}

/// The words each cue shows in SCC: CEA-608's characters, the rest
/// transliterated as the caption path does (">>" marks a new speaker and
/// is no word).
pub fn scc_words(cues: &[Cue]) -> Vec<Vec<String>> {
    cues.iter()
        .map(|c| {
            let shown: String = c
                .lines
                .iter()
                .flat_map(|l| {
                    let mut glyphs: Vec<char> = map_608(l)
                        .glyphs
                        .iter()
                        .filter_map(|g| g.code.char())
                        .collect();
                    glyphs.push(' ');
                    glyphs
                })
                .collect();
            words(&shown)
        })
        .collect()
}

/// The words each cue shows in TTML: a new speaker's name, then the lines.
pub fn ttml_words(cues: &[Cue]) -> Vec<Vec<String>> {
    cues.iter()
        .zip(turns(cues))
        .map(|(c, turn)| {
            let mut shown = if turn {
                words(c.speaker.as_deref().unwrap_or_default())
            } else {
                Vec::new()
            };
            shown.extend(words(&c.lines.join(" ")));
            shown
        })
        .collect()
}

pub fn assert_clean(what: &str, reading: &Reading) {
    assert!(
        reading.problems.is_empty(),
        "{what} reported problems: {:#?}",
        reading.problems
    );
}

/// Asserts the reading shows exactly `expected` (each cue's words), in
/// order, and returns for each cue the caption its first word shows in.
pub fn assert_words(what: &str, reading: &Reading, expected: &[Vec<String>]) -> Vec<Caption> {
    let all: Vec<String> = expected.iter().flatten().cloned().collect();
    assert_eq!(reading.words(), all, "{what}: the words shown");
    let mut owner = Vec::new();
    for caption in &reading.captions {
        owner.extend(std::iter::repeat_n(caption, words(&caption.text).len()));
    }
    let mut first = Vec::new();
    let mut at = 0;
    for cue_words in expected {
        first.push(owner[at].clone());
        at += cue_words.len();
    }
    first
}

/// SCC timing: each cue's first word on screen within 5 frames of its
/// start, every caption on screen at least 5/6 s. Returns the largest
/// start error, in frames.
pub fn assert_scc_timing(what: &str, reading: &Reading, cues: &[Cue], first: &[Caption]) -> f64 {
    let mut worst: f64 = 0.0;
    for (c, shown) in cues.iter().zip(first) {
        let error = shown.begin - c.start_ns as f64 / 1e9;
        worst = worst.max(error.abs());
        assert!(
            error.abs() <= SCC_SHOW_WITHIN_S,
            "{what}: {:?} shows at {:.3} s, {:.1} frames from its cue's start {:.3} s",
            c.lines,
            shown.begin,
            error / FRAME_S,
            c.start_ns as f64 / 1e9
        );
    }
    for caption in &reading.captions {
        let end = caption.end.expect("every caption ends");
        assert!(
            end - caption.begin >= MIN_ON_SCREEN_S,
            "{what}: {:?} is on screen {:.3} s only",
            caption.text,
            end - caption.begin
        );
    }
    worst / FRAME_S
}

/// Roll-up screens show rows that rolled up from the screen before: the
/// rows each caption adds, with the time they first show.
pub fn new_rows(reading: &Reading) -> Vec<(f64, String)> {
    let mut rows = Vec::new();
    let mut previous: Vec<&str> = Vec::new();
    for caption in &reading.captions {
        let screen: Vec<&str> = caption.text.lines().collect();
        let kept = (0..=screen.len().min(previous.len()))
            .rev()
            .find(|&k| screen[..k] == previous[previous.len() - k..])
            .unwrap_or(0);
        for row in &screen[kept..] {
            rows.push((caption.begin, row.to_string()));
        }
        previous = screen;
    }
    rows
}

/// TTML timing: one caption per cue, its begin and end the cue's within a
/// millisecond. Returns the largest error (ms).
pub fn assert_ttml_timing(what: &str, reading: &Reading, cues: &[Cue]) -> f64 {
    assert_eq!(
        reading.captions.len(),
        cues.len(),
        "{what}: {:#?}",
        reading.captions
    );
    let mut worst: f64 = 0.0;
    for (caption, c) in reading.captions.iter().zip(cues) {
        let begin = caption.begin - c.start_ns as f64 / 1e9;
        let end = caption.end.expect("an end") - c.end_ns as f64 / 1e9;
        worst = worst.max(begin.abs()).max(end.abs());
        assert!(
            begin.abs() <= TTML_WITHIN_S && end.abs() <= TTML_WITHIN_S,
            "{what}: {caption:?} for {c:?}"
        );
    }
    worst * 1000.0
}

/// A pop-on SCC reading of `cues`: clean, every word in order, each
/// caption in time; what it found is printed.
pub fn check_scc(what: &str, reading: &Reading, cues: &[Cue]) {
    assert_clean(what, reading);
    let first = assert_words(what, reading, &scc_words(cues));
    let worst = assert_scc_timing(what, reading, cues, &first);
    eprintln!(
        "{what}: {} captions, {} words, start errors up to {worst:.2} frames",
        reading.captions.len(),
        reading.words().len()
    );
}

/// A TTML or SRT reading of `cues`: clean, every word in order, each cue's
/// times to the millisecond; what it found is printed.
pub fn check_timed_text(what: &str, reading: &Reading, cues: &[Cue]) {
    assert_clean(what, reading);
    assert_words(what, reading, &ttml_words(cues));
    let worst = assert_ttml_timing(what, reading, cues);
    eprintln!(
        "{what}: {} captions, {} words, times within {worst:.3} ms",
        reading.captions.len(),
        reading.words().len()
    );
}
