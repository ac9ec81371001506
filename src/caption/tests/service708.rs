// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

#[test]
fn service_1_defines_its_window_writes_the_words_and_deletes_it_after_the_silence() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    enc.push_word("world", 300 * MS, 600 * MS);
    let codes = service_codes(&mut enc, 6_000 * MS);
    let Code708::DefineWindow(window) = &codes[0].1 else {
        panic!("first {:?}", codes[0]);
    };
    assert_eq!(
        (window.window_id, window.row_count, window.column_count),
        (0, 1, 31)
    );
    assert!(window.visible && window.row_lock && window.column_lock);
    assert!(matches!(codes[1].1, Code708::SetPenAttributes(_)));
    assert!(matches!(codes[2].1, Code708::SetPenLocation(l) if l.row == 1));
    let text: String = codes.iter().filter_map(|(_, c)| c.char()).collect();
    assert_eq!(text, "hello world");
    // Each word goes out on its own first frame.
    let world = codes.iter().find(|(_, c)| *c == Code708::Space).unwrap();
    assert_eq!(world.0, 9 * 1_001_000_000_000 / 30_000);
    let (t, last) = codes.last().unwrap();
    assert!(
        matches!(last, Code708::DeleteWindows(w) if *w == cea708_types::tables::WindowBits::ZERO)
    );
    assert!(*t >= 600 * MS + DEFAULT_CLEAR_AFTER_MS * MS);
}

#[test]
fn service_1_pop_on_loads_a_hidden_window_and_swaps() {
    let mut enc = encoder(Mode::PopOn);
    enc.push_word("One.", 0, 300 * MS);
    enc.push_word("Two.", 1_000 * MS, 1_300 * MS);
    let codes: Vec<Code708> = service_codes(&mut enc, 2_000 * MS)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    let windows: Vec<(u8, bool)> = codes
        .iter()
        .filter_map(|c| match c {
            Code708::DefineWindow(w) => Some((w.window_id, w.visible)),
            _ => None,
        })
        .collect();
    assert_eq!(windows, vec![(0, false), (1, false)]);
    let shows: Vec<&Code708> = codes
        .iter()
        .filter(|c| matches!(c, Code708::DisplayWindows(_)))
        .collect();
    assert_eq!(shows.len(), 2);
}

#[test]
fn service_1_carries_latin_1_that_608_lacks() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("cœur", 0, 300 * MS);
    enc.push_word("ÿ", 300 * MS, 400 * MS);
    assert_eq!(service_text(&mut enc, 1_000 * MS), "cœur ÿ");
    let losses = enc.losses();
    assert_eq!(losses.cea708_replaced, 0);
    // 608 has neither "œ" nor "ÿ".
    assert_eq!(losses.cea608_replaced, 2);
}

#[test]
fn service_1_starts_a_new_speaker_on_a_new_row_with_the_prefix() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    enc.speaker_change(">> ");
    enc.push_word("hi", 400 * MS, 600 * MS);
    assert_eq!(service_text(&mut enc, 2_000 * MS), "hello\r>> hi");
}
