// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

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

/// The figures in docs/closed-captions.md:
/// `cargo test --lib caption::tests::delays::word_delay -- --nocapture`.
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
