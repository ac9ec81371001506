// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Any dictionary file and any words as the transcript closes them (in
//! order, none before the previous one's end): the house's wording never
//! panics, holds at most a rule's words, and hands words on in the same
//! order, not overlapping, within the span of the words they came from.

#![no_main]

use gstvoxtralrt::wording::{
    Dictionary, Profanity, ProfanityMode, Rewriter, SharedRules, Timed, MAX_RULE_WORDS,
};
use libfuzzer_sys::fuzz_target;

const MS: u64 = 1_000_000;
const MODES: [ProfanityMode; 4] = [
    ProfanityMode::Off,
    ProfanityMode::Mask,
    ProfanityMode::Remove,
    ProfanityMode::Tag,
];

fuzz_target!(|data: &[u8]| {
    // The dictionary up to the first 0xff, then a mode byte, then words
    // (separated by 0xfe), each with a leading byte: the pause before it
    // (high nibble, x 40 ms) and its length (low nibble + 1, x 40 ms).
    let mut parts = data.splitn(2, |&b| b == 0xff);
    let dictionary = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let Some((&mode, words)) = parts.next().unwrap_or_default().split_first() else {
        return;
    };
    let (dictionary, bad) = Dictionary::parse(&dictionary);
    assert!(bad.iter().all(|b| b.line >= 1));
    let rules = SharedRules::default();
    rules.update(|r| {
        r.dictionary = dictionary;
        r.profanity = Profanity {
            mode: MODES[usize::from(mode) % MODES.len()],
            extra: Profanity::parse_list("frak, gorram"),
        };
    });
    let mut rewriter = Rewriter::new(rules);
    let mut out = Vec::new();
    let mut at = 0u64;
    let mut first_start = None;
    for word in words.split(|&b| b == 0xfe) {
        let Some((&timing, text)) = word.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(text);
        let Some(text) = text.split_whitespace().next() else {
            continue;
        };
        let start = at + u64::from(timing >> 4) * 40 * MS;
        at = start + u64::from(timing & 0xf) * 40 * MS + 40 * MS;
        first_start.get_or_insert(start);
        out.extend(rewriter.push(Timed {
            text: text.to_owned(),
            start,
            end: at,
        }));
        assert!(rewriter.held().len() < MAX_RULE_WORDS);
        if timing & 1 == 1 {
            let first: String = text.chars().take(1).collect();
            out.extend(rewriter.next_word_begins(&first));
        }
        out.extend(rewriter.release_stale(at));
    }
    out.extend(rewriter.flush());
    assert!(rewriter.held().is_empty());
    let mut pos = first_start.unwrap_or(0);
    for w in &out {
        assert!(w.start >= pos && w.end >= w.start, "{out:?}");
        assert!(!w.text.is_empty() && !w.text.contains(char::is_whitespace));
        pos = w.end;
    }
    assert!(out.last().is_none_or(|w| w.end <= at));
});
