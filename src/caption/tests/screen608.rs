// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

#[test]
fn frames_are_on_the_grid_from_the_origin_with_padding_when_nothing_is_said() {
    let mut enc = Encoder::new(Config::default(), 5 * MS);
    let frames = enc.frames_until(5 * MS + 1_000 * MS);
    assert_eq!(
        frames.len(),
        30,
        "29.97 fps: 30 frames start in the first second"
    );
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(f.index, i as u64);
        assert_eq!(f.pts, 5 * MS + i as u64 * 1_001_000_000_000 / 30_000);
        assert_eq!(
            f.pts + f.duration,
            5 * MS + (i as u64 + 1) * 1_001_000_000_000 / 30_000
        );
        assert_eq!(f.cea608, Some(cea608::PADDING));
        assert!(f.cea708.is_empty());
    }
}

#[test]
fn a_word_starts_on_the_first_frame_at_or_after_its_start() {
    let mut enc = encoder(Mode::RollUp2);
    // Frame 3 starts at 100.1 ms: a word at 100 ms starts there, one at
    // 100.2 ms on frame 4.
    enc.push_word("hi", 100 * MS, 300 * MS);
    let (_, pairs) = play(&mut enc, 1_000 * MS);
    let first = pairs.iter().position(|(_, p)| !is_padding(p)).unwrap();
    assert_eq!(first, 3);

    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("hi", 100_200_000, 300 * MS);
    let (_, pairs) = play(&mut enc, 1_000 * MS);
    assert_eq!(pairs.iter().position(|(_, p)| !is_padding(p)), Some(4));
}

#[test]
fn roll_up_sets_its_mode_and_row_once_then_sends_two_characters_a_frame() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    enc.push_word("world", 300 * MS, 600 * MS);
    let (screen, pairs) = play(&mut enc, 1_000 * MS);
    let sent: Vec<[u8; 2]> = pairs
        .iter()
        .map(|(_, p)| strip(*p))
        .filter(|p| *p != [0, 0])
        .collect();
    assert_eq!(
        sent,
        vec![
            [0x14, 0x25], // RU2, twice
            [0x14, 0x25],
            [0x14, 0x70], // row 15, column 0, twice
            [0x14, 0x70],
            *b"he",
            *b"ll",
            [b'o', 0],
            *b" w",
            *b"or",
            *b"ld",
        ]
    );
    assert_eq!(screen.text(), "hello world");
    // "world" starts on its own frame (at 300 ms: frame 9), not after.
    let world = pairs.iter().position(|(_, p)| strip(*p) == *b" w").unwrap();
    assert_eq!(world, 9);
}

#[test]
fn lines_hold_at_most_32_columns_and_roll_up() {
    let mut enc = encoder(Mode::RollUp2);
    let words = "the quick brown fox jumps over the lazy dog and keeps running far away";
    for (i, w) in words.split(' ').enumerate() {
        enc.push_word(w, i as u64 * 300 * MS, (i as u64 + 1) * 300 * MS);
    }
    let mut screen = Screen::default();
    let mut widest = 0;
    for frame in enc.frames_until(6_000 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        widest = widest.max(screen.shown.iter().map(|r| r.len()).max().unwrap_or(0));
        assert!(screen.shown.len() <= 2, "roll-up 2 shows two rows");
    }
    assert!(widest <= 32);
    assert_eq!(screen.text(), "the lazy dog and keeps running / far away");
    let all: Vec<String> = screen.word_times().into_iter().map(|(w, _)| w).collect();
    assert_eq!(all.join(" "), words);
}

#[test]
fn a_word_wider_than_a_line_is_cut_at_32_columns() {
    let word = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"; // 40 characters
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("so", 0, 100 * MS);
    enc.push_word(word, 100 * MS, 900 * MS);
    let (screen, _) = play(&mut enc, 3_000 * MS);
    assert_eq!(
        screen.shown,
        vec![word[..32].to_owned(), word[32..].to_owned()]
    );
    // 708 cuts it the same way.
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word(word, 0, 900 * MS);
    let text = service_text(&mut enc, 3_000 * MS);
    assert_eq!(text, format!("{}\r{}", &word[..32], &word[32..]));
}

#[test]
fn the_screen_clears_after_the_silence() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("bye", 0, 200 * MS);
    let mut cleared_at = None;
    let mut screen = Screen::default();
    for frame in enc.frames_until(6_000 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        let wrote = screen.written.iter().any(|(_, c)| *c != ' ');
        if cleared_at.is_none() && wrote && screen.shown.is_empty() {
            cleared_at = Some(frame.pts);
        }
    }
    let cleared_at = cleared_at.expect("cleared");
    let due = 200 * MS + DEFAULT_CLEAR_AFTER_MS * MS;
    assert!(
        (due..due + NTSC_FRAME + 1).contains(&cleared_at),
        "cleared at {cleared_at}"
    );
    assert!(!enc.has_captions());
}

#[test]
fn pop_on_shows_a_line_whole_at_the_end_of_a_sentence_or_after_a_pause() {
    let mut enc = encoder(Mode::PopOn);
    enc.push_word("Good", 0, 200 * MS);
    enc.push_word("morning.", 200 * MS, 600 * MS);
    enc.push_word("Hello", 2_000 * MS, 2_300 * MS);
    let mut screen = Screen::default();
    let mut seen = Vec::new();
    for frame in enc.frames_until(4_000 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        let text = screen.text();
        if seen.last().map(|(_, s): &(u64, String)| s) != Some(&text) {
            seen.push((frame.pts, text));
        }
    }
    let texts: Vec<&str> = seen.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(texts, vec!["", "Good morning.", "Hello"]);
    // The sentence shows as soon as it is loaded; "Hello" a pause (500 ms)
    // after it ends.
    assert!(seen[1].0 < 900 * MS, "{seen:?}");
    let hello_due = 2_300 * MS + 500 * MS;
    assert!((hello_due..hello_due + 2 * NTSC_FRAME).contains(&seen[2].0));
}

#[test]
fn pop_on_shows_a_full_line_before_loading_the_next() {
    let mut enc = encoder(Mode::PopOn);
    let words = "one two three four five six seven eight nine ten";
    for (i, w) in words.split(' ').enumerate() {
        enc.push_word(w, i as u64 * 400 * MS, (i as u64 + 1) * 400 * MS);
    }
    let mut screen = Screen::default();
    let mut shown = Vec::new();
    for frame in enc.frames_until(8_000 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        let text = screen.text();
        if !text.is_empty() && shown.last() != Some(&text) {
            shown.push(text);
        }
    }
    assert_eq!(
        shown,
        vec!["one two three four five six", "seven eight nine ten"]
    );
}

#[test]
fn paint_on_shows_characters_as_they_come() {
    let mut enc = encoder(Mode::PaintOn);
    enc.push_word("now", 0, 200 * MS);
    let mut screen = Screen::default();
    let frames = enc.frames_until(1_000 * MS);
    let mut texts = Vec::new();
    for frame in frames.iter().take(6) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        texts.push(screen.text());
    }
    // RDC twice, row twice, then "no", "w".
    assert_eq!(texts, vec!["", "", "", "", "no", "now"]);
    assert_eq!(screen.mode, Some(Mode608::PaintOn));
}

#[test]
fn roll_up_3_and_4_show_that_many_rows() {
    for (mode, rows) in [(Mode::RollUp3, 3), (Mode::RollUp4, 4)] {
        let mut enc = encoder(mode);
        for i in 0..12u64 {
            enc.push_word(
                "abcdefghijklmnopqrstuvwxyz0123",
                i * 1_000 * MS,
                (i + 1) * 1_000 * MS,
            );
        }
        let (screen, _) = play(&mut enc, 13_000 * MS);
        assert_eq!(screen.mode.and_then(|m| m.rollup_rows()), Some(rows));
        assert_eq!(screen.shown.len(), rows as usize);
    }
}

#[test]
fn accented_latin_letters_use_the_extended_sets_with_a_basic_fallback_first() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("Über", 0, 300 * MS);
    enc.push_word("déjà", 300 * MS, 600 * MS);
    enc.push_word("Ärger", 600 * MS, 900 * MS);
    let (screen, pairs) = play(&mut enc, 2_000 * MS);
    assert_eq!(screen.text(), "Über déjà Ärger");
    assert_eq!(enc.losses().cea608_replaced, 0);
    // A decoder without the extended sets shows "U" (the fallback) before
    // the extended "Ü" replaces it; the extended code is sent twice.
    let text: Vec<[u8; 2]> = pairs.iter().map(|(_, p)| strip(*p)).collect();
    let u = text.iter().position(|p| p[0] == b'U').unwrap();
    assert_eq!(text[u + 1], text[u + 2]);
    assert_eq!(text[u + 1][0] & 0xf6, 0x12, "an extended character code");
}

#[test]
fn text_608_cannot_show_is_transliterated_and_counted() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("привет", 0, 300 * MS);
    enc.push_word("北京", 300 * MS, 600 * MS);
    enc.push_word("łódź", 600 * MS, 900 * MS);
    enc.push_word("\u{e000}", 900 * MS, 1_000 * MS);
    let (screen, _) = play(&mut enc, 3_000 * MS);
    // Cyrillic and CJK become ASCII; "ó" is in the extended set; a
    // private-use character with no transliteration becomes "?".
    assert_eq!(screen.text(), "privet Bei Jing lódz ?");
    let losses = enc.losses();
    // п р и в е т, 北 京, ł ź, U+E000.
    assert_eq!(losses.cea608_replaced, 11);
    // 708 has "ó" too, and no more.
    assert_eq!(losses.cea708_replaced, 11);
}

#[test]
fn a_backlog_is_caught_up_by_dropping_the_oldest_words_never_by_drifting() {
    // 20 words a second of 11 characters: six times what 608 carries.
    let mut enc = encoder(Mode::RollUp2);
    let n = 200u64;
    for i in 0..n {
        enc.push_word(&format!("w{i:03}-abcdefg"), i * 50 * MS, (i + 1) * 50 * MS);
    }
    let (screen, _) = play(&mut enc, 12_000 * MS);
    let shown = screen.word_times();
    let dropped = enc.losses().cea608_dropped_words;
    assert_eq!(shown.len() as u64 + dropped, n);
    assert!(dropped > n / 2, "dropped {dropped}");
    // Words that are shown come in order, and each within the lag bound
    // (plus the frames its own characters take) of its start.
    let mut last = None;
    for (word, done) in &shown {
        let i: u64 = word[1..4].parse().unwrap();
        assert!(last < Some(i), "{word} out of order");
        last = Some(i);
        let delay = done - i * 50 * MS;
        assert!(
            delay <= Timing::default().max_lag_ns + 9 * NTSC_FRAME,
            "{word} shown {} ms late",
            delay / MS
        );
    }
    // The stream caught up: the last word shown is one of the last second
    // of speech (later ones may miss the bound too).
    let last = last.unwrap();
    assert!(
        last >= n - 1 - Timing::default().max_lag_ns / (50 * MS),
        "last {last}"
    );
}

#[test]
fn above_30_fps_field_1_has_room_on_every_other_frame() {
    for fps in [
        Framerate::new(50, 1),
        Framerate::new(60000, 1001),
        Framerate::new(60, 1),
    ] {
        let mut enc = at(fps, Mode::RollUp2);
        enc.push_word("abc", 0, 100 * MS);
        let frames = enc.frames_until(1_000 * MS);
        for f in &frames {
            assert_eq!(
                f.cea608.is_some(),
                f.index % 2 == 0,
                "{fps:?} frame {}",
                f.index
            );
        }
    }
    for fps in [
        Framerate::new(25, 1),
        Framerate::NTSC,
        Framerate::new(30, 1),
    ] {
        let mut enc = at(fps, Mode::RollUp2);
        assert!(enc
            .frames_until(1_000 * MS)
            .iter()
            .all(|f| f.cea608.is_some()));
    }
}

#[test]
fn a_new_frame_rate_goes_on_from_where_the_next_frame_would_start() {
    let mut enc = encoder(Mode::RollUp2);
    let before = enc.frames_until(100 * MS);
    let next = enc.next_frame_time();
    assert_eq!(next, before.last().map(|f| f.pts + f.duration).unwrap());
    enc.regrid(Framerate::new(25, 1));
    let after = enc.frames_until(next + 200 * MS);
    assert_eq!(after[0].pts, next);
    assert_eq!(after[0].index, 0);
    assert_eq!(after[1].pts, next + 40 * MS);
}

#[test]
fn a_cue_of_several_words_shares_its_time_by_length() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_cue("ab cdef", 0, 600 * MS);
    let (screen, _) = play(&mut enc, 2_000 * MS);
    let words = screen.word_times();
    assert_eq!(words[0].0, "ab");
    assert_eq!(words[1].0, "cdef");
    // "cdef" starts at 200 ms (2 of 6 letters): frame 6.
    assert!(words[1].1 >= 200 * MS);
}

#[test]
fn a_new_speaker_starts_a_new_roll_up_row_with_the_prefix() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    enc.push_word("there", 300 * MS, 600 * MS);
    enc.speaker_change(">> ");
    enc.push_word("hi", 700 * MS, 900 * MS);
    enc.push_word("you", 900 * MS, 1_100 * MS);
    let (screen, _) = play(&mut enc, 2_000 * MS);
    assert_eq!(screen.text(), "hello there / >> hi you");
}

#[test]
fn a_new_speaker_in_pop_on_starts_a_new_caption_with_the_prefix() {
    let mut enc = encoder(Mode::PopOn);
    enc.push_word("hello", 0, 300 * MS);
    enc.speaker_change(">> ");
    enc.push_word("hi", 400 * MS, 600 * MS);
    let mut screen = Screen::default();
    let mut seen = Vec::new();
    for frame in enc.frames_until(3_000 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
        let text = screen.text();
        if seen.last() != Some(&text) {
            seen.push(text);
        }
    }
    assert_eq!(seen, vec!["", "hello", ">> hi"]);
}
