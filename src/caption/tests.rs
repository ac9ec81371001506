// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use cea608_types::{Cea608, Cea608State, Mode as Mode608};
use cea708_types::tables::Code as Code708;

use super::*;

const MS: u64 = 1_000_000;
/// One frame at 29.97 fps, rounded down.
const NTSC_FRAME: u64 = 33_366_666;

fn encoder(mode: Mode) -> Encoder {
    Encoder::new(
        Config {
            mode,
            ..Config::default()
        },
        0,
    )
}

fn at(fps: Framerate, mode: Mode) -> Encoder {
    Encoder::new(
        Config {
            mode,
            framerate: fps,
            ..Config::default()
        },
        0,
    )
}

/// What a CEA-608 decoder shows, frame by frame.
#[derive(Debug, Default)]
struct Screen {
    state: Cea608State,
    mode: Option<Mode608>,
    /// Rows on screen, oldest first.
    shown: Vec<String>,
    /// Pop-on: the row loading off screen.
    hidden: String,
    /// Every character that reached the screen (or the loading row), with
    /// the time of its frame: when a word was complete.
    written: Vec<(u64, char)>,
}

impl Screen {
    fn feed(&mut self, t: u64, pair: [u8; 2]) {
        let Some(cmd) = self.state.decode(pair).expect("valid parity") else {
            return;
        };
        if !matches!(cmd, Cea608::Text(_)) {
            // A new row, a cleared screen or a shown caption separates
            // words as a space does.
            self.written.push((t, ' '));
        }
        match cmd {
            Cea608::NewMode(_, mode) => self.mode = Some(mode),
            Cea608::Text(text) => {
                if text.needs_backspace {
                    self.row().pop();
                    self.written.pop();
                }
                for c in [text.char1, text.char2].into_iter().flatten() {
                    self.row().push(c);
                    self.written.push((t, c));
                }
            }
            Cea608::CarriageReturn(_) => {
                let rows = self.mode.and_then(|m| m.rollup_rows()).unwrap_or(1);
                self.shown.push(String::new());
                while self.shown.len() > rows as usize {
                    self.shown.remove(0);
                }
            }
            Cea608::EraseDisplay(_) => self.shown.clear(),
            Cea608::EraseNonDisplay(_) => self.hidden.clear(),
            Cea608::EndOfCaption(_) => {
                let old = self.shown.pop().unwrap_or_default();
                self.shown = vec![std::mem::replace(&mut self.hidden, old)];
            }
            Cea608::Preamble(..) if self.mode != Some(Mode608::PopOn) && self.shown.is_empty() => {
                self.shown.push(String::new());
            }
            _ => {}
        }
    }

    fn row(&mut self) -> &mut String {
        if self.mode == Some(Mode608::PopOn) {
            return &mut self.hidden;
        }
        if self.shown.is_empty() {
            self.shown.push(String::new());
        }
        self.shown.last_mut().unwrap()
    }

    fn text(&self) -> String {
        self.shown
            .iter()
            .map(|r| r.trim())
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// When each word (as written, in order) was complete.
    fn word_times(&self) -> Vec<(String, u64)> {
        let mut words = Vec::new();
        let mut current = String::new();
        let mut last = 0;
        for &(t, c) in &self.written {
            if c == ' ' {
                if !current.is_empty() {
                    words.push((std::mem::take(&mut current), last));
                }
            } else {
                current.push(c);
                last = t;
            }
        }
        if !current.is_empty() {
            words.push((current, last));
        }
        words
    }
}

/// Runs frames until `until` (ns) through a screen; returns the screen and
/// the frames' 608 pairs with their times.
fn play(enc: &mut Encoder, until: u64) -> (Screen, Vec<(u64, [u8; 2])>) {
    let mut screen = Screen::default();
    let mut pairs = Vec::new();
    for frame in enc.frames_until(until) {
        if let Some(pair) = frame.cea608 {
            screen.feed(frame.pts, pair);
            pairs.push((frame.pts, pair));
        }
    }
    (screen, pairs)
}

fn is_padding(pair: &[u8; 2]) -> bool {
    *pair == cea608::PADDING
}

/// The pairs carrying text (not padding, not the repeat of a control).
fn strip(pair: [u8; 2]) -> [u8; 2] {
    [pair[0] & 0x7f, pair[1] & 0x7f]
}

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

/// Service 1's codes, in order, from every frame until `until`.
fn service_codes(enc: &mut Encoder, until: u64) -> Vec<(u64, Code708)> {
    let mut codes = Vec::new();
    for frame in enc.frames_until(until) {
        for packet in frame.cea708 {
            for service in packet.services() {
                assert_eq!(service.number(), 1);
                codes.extend(service.codes().iter().cloned().map(|c| (frame.pts, c)));
            }
        }
    }
    codes
}

/// Service 1's text; carriage returns as "\r".
fn service_text(enc: &mut Encoder, until: u64) -> String {
    service_codes(enc, until)
        .into_iter()
        .filter_map(|(_, c)| match c {
            Code708::CR => Some('\r'),
            c => c.char(),
        })
        .collect()
}

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

fn packed(format: CcFormat, fps: Framerate) -> Vec<Vec<u8>> {
    let mut enc = at(fps, Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    let mut packer = Packer::new(format, fps, Channel608::Cc1).unwrap();
    enc.frames_until(1_000 * MS)
        .into_iter()
        .map(|f| packer.pack(f))
        .collect()
}

#[test]
fn raw_608_is_one_pair_per_frame_and_s334_1a_says_field_1() {
    let raw = packed(CcFormat::Cea608Raw, Framerate::NTSC);
    assert!(raw.iter().all(|b| b.len() == 2));
    assert_eq!(strip([raw[0][0], raw[0][1]]), [0x14, 0x25]);
    let s334 = packed(CcFormat::Cea608S334_1a, Framerate::NTSC);
    for (a, b) in s334.iter().zip(&raw) {
        assert_eq!(a[0], 0x80);
        assert_eq!(&a[1..], &b[..]);
    }
}

#[test]
fn cc_data_has_a_constant_count_per_frame_with_cc1_first() {
    for (fps, count) in [
        (Framerate::NTSC, 20),
        (Framerate::new(25, 1), 24),
        (Framerate::new(60, 1), 10),
    ] {
        let frames = packed(CcFormat::Cea708CcData, fps);
        for (i, data) in frames.iter().enumerate() {
            assert_eq!(data.len(), 3 * count, "{fps:?}");
            if i % fps.frames_per_608_pair() as usize == 0 {
                // cc_valid 608 field 1 (or its padding, cc_valid 0).
                assert!(
                    matches!(data[0], 0xfc | 0xf8),
                    "{fps:?} frame {i}: {data:02x?}"
                );
            }
        }
        assert_eq!(frames[0][..3], [0xfc, 0x94, 0x25]);
        // The 708 packet starts on the word's frame (a DTVCC packet start).
        assert!(frames[0].chunks(3).any(|t| t[0] == 0xff), "{fps:?}");
    }
}

#[test]
fn cdp_wraps_the_same_cc_data_and_parses_back() {
    let frames = packed(CcFormat::Cea708Cdp, Framerate::NTSC);
    let mut parser = cdp_types::CDPParser::new();
    let mut cc1 = Vec::new();
    let mut packets = 0;
    for data in &frames {
        assert_eq!(&data[..2], &[0x96, 0x69]);
        parser.parse(data).unwrap();
        assert_eq!(
            parser.framerate().map(|f| (f.numer(), f.denom())),
            Some((30000, 1001))
        );
        if let Some(pairs) = parser.cea608() {
            cc1.extend(pairs.iter().filter_map(|p| match p {
                cea708_types::Cea608::Field1(a, b) => Some([*a, *b]),
                _ => None,
            }));
        }
        while parser.pop_packet().is_some() {
            packets += 1;
        }
    }
    let mut screen = Screen::default();
    for pair in cc1 {
        screen.feed(0, pair);
    }
    assert_eq!(screen.text(), "hello");
    assert_eq!(packets, 1);
}

#[test]
fn cdp_refuses_a_rate_it_cannot_name() {
    assert!(Packer::new(CcFormat::Cea708Cdp, Framerate::new(15, 1), Channel608::Cc1).is_err());
}

/// Speech at `wps` words a second, evenly, from a plain English text.
fn speech(enc: &mut Encoder, wps: u64) -> Vec<(String, u64)> {
    const TEXT: &str = "It was the best of times it was the worst of times it was the age \
        of wisdom it was the age of foolishness it was the epoch of belief it was the epoch of \
        incredulity it was the season of Light it was the season of Darkness it was the spring \
        of hope it was the winter of despair we had everything before us we had nothing before \
        us we were all going direct to Heaven we were all going direct the other way in short \
        the period was so far like the present period that some of its noisiest authorities \
        insisted on its being received for good or for evil in the superlative degree of \
        comparison only";
    let step = 1_000 * MS / wps;
    TEXT.split_whitespace()
        .enumerate()
        .map(|(i, w)| {
            let start = i as u64 * step;
            enc.push_word(w, start, start + step);
            (w.to_owned(), start)
        })
        .collect()
}

/// (worst, p95) delay in ms from a word's start to the frame that
/// completes it on a CEA-608 screen.
fn word_delays(fps: Framerate, wps: u64) -> (u64, u64) {
    let mut enc = at(fps, Mode::RollUp2);
    let words = speech(&mut enc, wps);
    let end = words.last().unwrap().1 + 5_000 * MS;
    let (screen, _) = play(&mut enc, end);
    let shown = screen.word_times();
    assert_eq!(enc.losses().cea608_dropped_words, 0, "{fps:?} {wps} w/s");
    assert_eq!(shown.len(), words.len());
    let mut delays: Vec<u64> = shown
        .iter()
        .zip(&words)
        .map(|((s, done), (w, start))| {
            assert_eq!(s, w);
            (done - start) / MS
        })
        .collect();
    delays.sort_unstable();
    let p95 = delays[(delays.len() * 95).div_ceil(100) - 1];
    (*delays.last().unwrap(), p95)
}

/// The figures in the README's "Closed captions" section:
/// `cargo test --lib caption::tests::word_delay -- --nocapture`.
#[test]
fn word_delay_at_3_and_5_words_a_second_stays_small() {
    for fps in [Framerate::new(25, 1), Framerate::NTSC] {
        for wps in [3, 5] {
            let (worst, p95) = word_delays(fps, wps);
            eprintln!(
                "CEA-608 roll-up, {:.2} fps, {wps} words/s: worst {worst} ms, p95 {p95} ms",
                fps.numer as f64 / fps.denom as f64
            );
            assert!(worst <= 500, "{fps:?} {wps} w/s: worst {worst} ms");
        }
    }
}

/// The 608 controls a drain sends after the last word, in order.
fn controls_of_drain(mode: Mode) -> (Vec<[u8; 2]>, u64, Encoder) {
    let mut enc = encoder(mode);
    enc.push_word("short", 0, 200 * MS);
    enc.push_word("clip", 200 * MS, 400 * MS);
    let mut screen = Screen::default();
    for frame in enc.frames_until(500 * MS) {
        screen.feed(frame.pts, frame.cea608.unwrap());
    }
    let drained = enc.drain();
    let last = drained.last().map_or(0, |f| f.pts);
    let pairs = drained
        .into_iter()
        .filter_map(|f| f.cea608)
        .filter(|p| !is_padding(p))
        .map(strip)
        .collect();
    (pairs, last, enc)
}

#[test]
fn at_the_end_of_the_stream_a_roll_up_row_is_committed_and_the_screen_erased() {
    for mode in [
        Mode::RollUp2,
        Mode::RollUp3,
        Mode::RollUp4,
        Mode::PaintOn,
        Mode::PopOn,
    ] {
        let (pairs, last, enc) = controls_of_drain(mode);
        let cr = [0x14, 0x2d];
        let edm = [0x14, 0x2c];
        let eoc = [0x14, 0x2f];
        let edm_at = pairs.iter().rposition(|p| *p == edm);
        assert!(
            edm_at.is_some(),
            "{mode:?}: no erase after the last word: {pairs:x?}"
        );
        if mode.is_roll_up() {
            assert!(
                pairs[..edm_at.unwrap()].contains(&cr),
                "{mode:?}: the row is not committed: {pairs:x?}"
            );
        }
        if mode == Mode::PopOn {
            assert!(
                pairs.contains(&eoc),
                "{mode:?}: the loaded caption is not shown"
            );
        }
        // Within the stream's last frames, not after the 4 s silence.
        assert!(
            last < 500 * MS + 10 * NTSC_FRAME,
            "{mode:?}: last frame at {last}"
        );
        assert!(!enc.has_captions(), "{mode:?}");
    }
}

#[test]
fn at_the_end_of_the_stream_service_1_deletes_its_windows() {
    let mut enc = encoder(Mode::RollUp2);
    enc.push_word("short", 0, 200 * MS);
    let _ = service_codes(&mut enc, 300 * MS);
    let codes: Vec<Code708> = enc
        .drain()
        .into_iter()
        .flat_map(|f| f.cea708)
        .flat_map(|p| {
            p.services()
                .iter()
                .flat_map(|s| s.codes().to_vec())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        codes.iter().any(|c| matches!(c, Code708::DeleteWindows(_))),
        "{codes:?}"
    );
}
