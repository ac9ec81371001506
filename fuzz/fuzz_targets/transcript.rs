// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Any sequence of text pieces at any audio positions gives well-formed,
//! time-ordered cues that keep every character.

#![no_main]

use gstvoxtralrt::transcript::{Output, Segmentation, Transcript, TranscriptConfig};
use libfuzzer_sys::fuzz_target;

const MS: u64 = 1_000_000;

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    let segmentation = if head & 1 == 0 {
        Segmentation::Words
    } else {
        Segmentation::Lines {
            max_chars: usize::from(head >> 1).max(1),
        }
    };
    let mut transcript = Transcript::new(TranscriptConfig {
        release_after_ns: u64::from(head % 7 + 1) * 80 * MS,
        min_duration_ns: 80 * MS,
        segmentation,
    });
    // Each record: a position step (one byte, x 10 ms), a flag byte, then
    // text up to the next 0xff.
    let mut out = Vec::new();
    let mut all_text = String::new();
    let mut position = 0u64;
    let mut records = rest.split(|&b| b == 0xff).peekable();
    while let Some(record) = records.next() {
        let (step, flags, text) = match record {
            [step, flags, text @ ..] => (*step, *flags, String::from_utf8_lossy(text).into_owned()),
            _ => continue,
        };
        position += u64::from(step) * 10 * MS;
        all_text.push_str(&text);
        if records.peek().is_none() {
            out.extend(transcript.finish(&text, position));
        } else if flags & 1 == 1 {
            out.extend(transcript.push(&text, position));
            out.extend(transcript.release_held());
        } else {
            out.extend(transcript.push(&text, position));
        }
    }
    out.extend(transcript.finish("", position));

    let mut pos = 0;
    let mut cue_text = String::new();
    for o in &out {
        let (start, end) = match o {
            Output::Cue(c) => {
                assert!(!c.text.is_empty());
                assert!(c.text.split(' ').all(|w| !w.is_empty()), "{:?}", c.text);
                cue_text.push_str(&c.text.replace(' ', ""));
                (c.start, c.end)
            }
            Output::Gap { start, end } => {
                assert!(end > start, "{o:?}");
                (*start, *end)
            }
        };
        assert!(start >= pos && end >= start, "{o:?} after {pos}");
        pos = end;
    }
    let expected: String = all_text.split_whitespace().collect();
    assert_eq!(cue_text, expected);
});
