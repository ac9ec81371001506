// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The diarization wrapper (src/engine/diarize.rs) against the real
//! transcribe.cpp `sortformer` code path and a tiny synthetic model
//! (tests/fixtures/sortformer-tiny.gguf, one thread).
//!
//! Built with the `diarize` feature only (no element uses the diarizer):
//! `cargo test --features diarize --test diarize --example diarizer_cost`.
//!
//! PLUMBING ONLY: the fixture's weights are random, so these tests check that
//! runs succeed and give well-formed turns, never which speaker is which.
//! Speaker accuracy is not measured anywhere in this project (docs/diarizer.md).

#![cfg(feature = "diarize")]

mod common;

use std::path::PathBuf;

use gstvoxtralrt::engine::diarize::{
    DiarizePreset, Diarizer, SpeakerSegment, SpeakerTracker, DIARIZE_SAMPLE_RATE,
};
use gstvoxtralrt::engine::Error;

const PRESETS: [DiarizePreset; 4] = [
    DiarizePreset::Default,
    DiarizePreset::VeryHighLatency,
    DiarizePreset::HighLatency,
    DiarizePreset::LowLatency,
];

/// Diarization frames are 80 ms: a turn may end at most one frame past the
/// audio (the last frame is rounded up).
const FRAME_MS: u64 = 80;

fn tiny() -> PathBuf {
    common::fixture("sortformer-tiny.gguf")
}

fn open() -> Diarizer {
    gst::init().unwrap();
    Diarizer::load(&tiny(), 1).expect("the tiny sortformer fixture loads")
}

/// Two "voices" taking turns: 1.2 s of a 180 Hz buzz (with harmonics), a
/// pause, 1.2 s of a 620 Hz one, and so on, over `seconds`.
fn turns(seconds: f32) -> Vec<f32> {
    let rate = DIARIZE_SAMPLE_RATE as f32;
    (0..(seconds * rate) as usize)
        .map(|i| {
            let t = i as f32 / rate;
            let slot = (t / 1.5) as usize;
            if t - slot as f32 * 1.5 > 1.2 {
                return 0.0;
            }
            let f = if slot % 2 == 0 { 180.0 } else { 620.0 };
            let w = 2.0 * std::f32::consts::PI * f * t;
            0.3 * w.sin() + 0.15 * (2.0 * w).sin() + 0.07 * (3.0 * w).sin()
        })
        .collect()
}

fn audio_ms(samples: &[f32]) -> u64 {
    samples.len() as u64 * 1000 / DIARIZE_SAMPLE_RATE as u64
}

fn assert_well_formed(segments: &[SpeakerSegment], audio_ms: u64, max_speakers: u32, what: &str) {
    for s in segments {
        assert!(s.start_ms < s.end_ms, "{what}: {s:?} is empty or reversed");
        assert!(
            s.end_ms <= audio_ms + FRAME_MS,
            "{what}: {s:?} ends past the audio ({audio_ms} ms)"
        );
        assert!(
            (1..=max_speakers).contains(&s.speaker),
            "{what}: {s:?} has a speaker outside 1..={max_speakers}"
        );
    }
    assert!(
        segments.windows(2).all(|w| w[0].start_ms <= w[1].start_ms),
        "{what}: not ordered by start: {segments:?}"
    );
}

#[test]
fn the_fixture_loads_as_a_four_speaker_16_khz_diarizer() {
    let d = open();
    assert_eq!(d.max_speakers(), 4);
    assert_eq!(d.sample_rate(), DIARIZE_SAMPLE_RATE);
    assert!(d.load_time().as_secs() < 10);
}

#[test]
fn every_preset_gives_well_formed_turns_within_the_audio() {
    let mut d = open();
    let audio = turns(6.0);
    for preset in PRESETS {
        let segments = d.run(&audio, preset).unwrap();
        assert_well_formed(&segments, audio_ms(&audio), d.max_speakers(), preset.nick());
        // Random weights, but this fixture and audio do give turns (so the
        // checks above are not vacuous); which speakers is meaningless.
        assert!(!segments.is_empty(), "{}: no turns", preset.nick());
    }
}

#[test]
fn short_odd_and_silent_inputs_run_too() {
    let mut d = open();
    // Down to a few frames, and lengths that are no multiple of a frame.
    for n in [2_000, 4_321, 16_000, 17_777] {
        let audio = turns(2.0)[..n].to_vec();
        for preset in PRESETS {
            let segments = d.run(&audio, preset).unwrap();
            let what = format!("{n} samples, {}", preset.nick());
            assert_well_formed(&segments, audio_ms(&audio), d.max_speakers(), &what);
        }
    }
    let silence = vec![0.0; 3 * DIARIZE_SAMPLE_RATE as usize];
    let segments = d.run(&silence, DiarizePreset::LowLatency).unwrap();
    assert_well_formed(&segments, 3000, d.max_speakers(), "silence");
}

#[test]
fn runs_are_deterministic_and_independent_of_each_other() {
    let mut d = open();
    let audio = turns(4.0);
    let first = d.run(&audio, DiarizePreset::LowLatency).unwrap();
    d.run(&turns(2.5), DiarizePreset::HighLatency).unwrap();
    assert_eq!(d.run(&audio, DiarizePreset::LowLatency).unwrap(), first);
    // A second model instance agrees.
    assert_eq!(
        open().run(&audio, DiarizePreset::LowLatency).unwrap(),
        first
    );
}

#[test]
fn nan_infinite_or_no_audio_is_an_error_not_a_crash() {
    let mut d = open();
    let mut audio = turns(2.0);
    audio[12_345] = f32::NAN;
    let err = d.run(&audio, DiarizePreset::LowLatency).unwrap_err();
    assert!(err.to_string().contains("sample 12345 is NaN"), "{err}");
    audio[12_345] = f32::INFINITY;
    let err = d.run(&audio, DiarizePreset::Default).unwrap_err();
    assert!(err.to_string().contains("finite"), "{err}");
    let err = d.run(&[], DiarizePreset::Default).unwrap_err();
    assert!(err.to_string().contains("no samples"), "{err}");
    // The diarizer is still usable.
    audio[12_345] = 0.0;
    d.run(&audio, DiarizePreset::LowLatency).unwrap();
}

#[test]
fn a_missing_file_or_a_model_that_does_not_diarize_is_a_readable_error() {
    gst::init().unwrap();
    let missing = PathBuf::from("/nonexistent/sortformer.gguf");
    let err = Diarizer::load(&missing, 1).err().expect("no such file");
    assert!(matches!(err, Error::ModelUnreadable { .. }), "{err:?}");
    assert!(
        err.to_string().contains("/nonexistent/sortformer.gguf"),
        "{err}"
    );

    // The Voxtral fixture loads, but serves no DIARIZE role.
    let err = Diarizer::load(&common::tiny_model(), 1)
        .err()
        .expect("a transcription model is no diarizer");
    assert!(
        err.to_string().contains("is not a diarization model"),
        "{err}"
    );

    let dir = common::scratch_dir("diarize-not-gguf");
    let junk = dir.join("junk.gguf");
    std::fs::write(&junk, b"not a gguf file at all").unwrap();
    let err = Diarizer::load(&junk, 1).err().expect("junk does not load");
    assert!(err.to_string().contains("junk.gguf"), "{err}");
}

/// The live design of docs/diarizer.md on the fixture: a run over the last
/// 4 s every second, labels carried across windows by the tracker.
#[test]
fn sliding_windows_with_the_tracker_give_stream_wide_labels() {
    let mut d = open();
    let audio = turns(8.0);
    let rate = DIARIZE_SAMPLE_RATE as usize;
    let (window, hop) = (4 * rate, rate);
    let mut tracker = SpeakerTracker::new();
    let mut end = window;
    while end <= audio.len() {
        let start = end - window;
        let local = d
            .run(&audio[start..end], DiarizePreset::LowLatency)
            .unwrap();
        assert_well_formed(&local, 4000, d.max_speakers(), "window");
        let start_ms = (start / rate) as u64 * 1000;
        for s in tracker.label(start_ms, &local) {
            assert!(s.speaker >= 1, "{s:?}");
            assert!(
                s.start_ms >= start_ms && s.end_ms <= start_ms + 4000 + FRAME_MS,
                "{s:?}"
            );
        }
        end += hop;
    }
}

fn example(name: &str, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::process::examples_dir().join(name))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

fn text(output: &std::process::Output) -> String {
    common::output_text(output)
}

/// The diarizer cost example (docs/diarizer.md) on the tiny random-weight
/// fixture: it runs and prints its tables; the figures mean nothing here.
#[test]
fn diarizer_cost_prints_its_live_and_offline_tables() {
    let out = example("diarizer_cost", &["--help"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("cargo run --release --features diarize --example diarizer_cost"));
    let out = example(
        "diarizer_cost",
        &[
            "--model",
            "tests/fixtures/sortformer-tiny.gguf",
            "--threads",
            "1",
            "--windows",
            "4",
            "--reps",
            "1",
            "--offline-secs",
            "5",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    for row in [
        "| 1 | low-latency | 4 |",
        "| 1 | very-high-latency | 4 |",
        "| 1 | low-latency | 1.04 |",
    ] {
        assert!(text(&out).contains(row), "no row {row}: {}", text(&out));
    }
    let out = example(
        "diarizer_cost",
        &["--model", "/nonexistent/sortformer.gguf"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("/nonexistent/sortformer.gguf"),
        "{}",
        text(&out)
    );
}
