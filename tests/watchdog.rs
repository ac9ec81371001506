// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The stall watchdog (issue 21): a model that writes nothing while people
//! talk is restarted from the current audio, with a WARNING per episode, a
//! `voxtralrt-stalled` message per restart and `stalls` in stats; restarts
//! back off; silence, noise and music never trigger it. Speech is
//! espeak-ng's, resampled to 16 kHz by the pipeline.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};

use common::recognizers::MuteAfter;
use common::remote::Run;
use common::speech::{speech, transcribe_wav as run, Wrap};
use common::vllm_double::{Double, Faults, SERVED_MODEL};

/// A WAV of `secs` seconds made by `f(i)` at 16 kHz.
fn signal(dir: &Path, name: &str, secs: usize, f: impl Fn(usize) -> f32) -> PathBuf {
    let path = dir.join(name);
    let samples: Vec<f32> = (0..secs * 16_000).map(f).collect();
    common::write_wav(&path, &samples);
    path
}

/// WARNING messages about a stall.
fn stall_warnings(run: &Run) -> usize {
    run.warnings
        .iter()
        .filter(|w| w.contains("stall-timeout"))
        .count()
}

/// The `voxtralrt-stalled` messages.
fn stalled(run: &Run) -> Vec<&gst::Structure> {
    run.messages_named("voxtralrt-stalled")
}

fn tiny() -> String {
    format!("model-path={}", common::tiny_model().display())
}

#[test]
fn a_model_that_falls_silent_over_speech_is_restarted_and_speaks_again() {
    let dir = common::scratch_dir("watchdog-restart");
    let wav = speech(&dir);
    // The tiny model writes over the whole clip; silenced after 3 s until a
    // restart, the watchdog (2 s of speech) must bring it back.
    let reference = run(&wav, &format!("{} stall-timeout=2000", tiny()), None);
    assert_eq!(reference.stat("stalls"), 0, "{:?}", reference.stats);
    let last_reference = reference.words.last().unwrap().0;
    let run = run(
        &wav,
        &format!("{} stall-timeout=2000", tiny()),
        Some(Box::new(|inner| {
            Box::new(MuteAfter::new(inner, 3 * 16_000, false))
        })),
    );
    assert_eq!(run.stat("stalls"), 1, "{:?}", run.stats);
    assert_eq!(stall_warnings(&run), 1, "{:?}", run.warnings);
    assert_eq!(stalled(&run).len(), 1);
    let restart = stalled(&run)[0].get::<u64>("pts").unwrap();
    // Speech from 3 s on without text: the restart after 2 s of it.
    assert!(
        (4_000_000_000..8_000_000_000).contains(&restart),
        "restart at {restart}"
    );
    assert!(
        run.words.iter().any(|w| w.0 > restart),
        "no word after the restart: {:?}",
        run.words
    );
    assert!(run.words.last().unwrap().0 + 3_000_000_000 >= last_reference);
}

#[test]
fn restarts_back_off_for_a_model_that_never_speaks_again() {
    // Silent from the start, restarts or not. Three clips of speech:
    // about 30 s of it.
    let dir = common::scratch_dir("watchdog-backoff");
    let one = speech(&dir);
    let three = dir.join("three.wav");
    let out = std::process::Command::new("sox")
        .args([&one, &one, &one, &three])
        .output()
        .expect("sox");
    assert!(out.status.success(), "{}", common::output_text(&out));
    let run = run(
        &three,
        &format!("{} stall-timeout=1000", tiny()),
        Some(Box::new(|inner| Box::new(MuteAfter::new(inner, 0, true)))),
    );
    // Without backoff: a restart a second of speech (about 30). With it,
    // after 1, 2, 4, 8, 16 s of speech: at most 5.
    let stalls = run.stat("stalls");
    assert!(
        (3..=5).contains(&stalls),
        "{stalls} restarts: {:?}",
        run.stats
    );
    assert_eq!(
        stall_warnings(&run),
        1,
        "one WARNING per episode: {:?}",
        run.warnings
    );
    assert_eq!(stalled(&run).len() as u64, stalls);
}

#[test]
fn a_real_model_that_never_speaks_over_speech_is_restarted_with_backoff() {
    // No wrapper: the tone fixture is a model built to write "x" for a
    // frame with a 1 kHz tone and nothing for anything else, so over speech
    // without its 700-1300 Hz band it stays silent from the start, as a
    // stalled serving does.
    let dir = common::scratch_dir("watchdog-tone-model");
    let wav = dir.join("notched.wav");
    let out = std::process::Command::new("sox")
        .arg(speech(&dir))
        .arg(&wav)
        .args(["sinc", "-a", "120", "1300-700"])
        .output()
        .expect("sox");
    assert!(out.status.success(), "{}", common::output_text(&out));
    let run = run(
        &wav,
        &format!("model-path={} stall-timeout=1000", common::tone_model()),
        None,
    );
    assert!(run.words.is_empty(), "{:?}", run.words);
    // About 13 s of speech: restarts after 1, 2, 4 and 8 s of it (without
    // the backoff, about 13).
    let stalls = run.stat("stalls");
    assert!((2..=4).contains(&stalls), "{stalls}: {:?}", run.stats);
    assert_eq!(stall_warnings(&run), 1, "{:?}", run.warnings);
    assert_eq!(stalled(&run).len() as u64, stalls);
}

#[test]
fn silence_noise_and_music_never_trigger_the_watchdog() {
    let dir = common::scratch_dir("watchdog-not-speech");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut noise = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let noise: Vec<f32> = (0..20 * 16_000).map(|_| 0.6 * noise()).collect();
    let music = |i: usize| {
        // A chord that changes every half second (C, F, G major).
        let t = i as f32 / 16_000.0;
        let roots = [261.63f32, 349.23, 392.0];
        let root = roots[(i / 8_000) % 3];
        [1.0, 1.26, 1.5]
            .iter()
            .map(|r| 0.15 * (2.0 * std::f32::consts::PI * root * r * t).sin())
            .sum()
    };
    for (name, wav) in [
        ("silence", signal(&dir, "silence.wav", 20, |_| 0.0)),
        ("noise", signal(&dir, "noise.wav", 20, |i| noise[i])),
        ("music", signal(&dir, "music.wav", 20, music)),
    ] {
        let run = run(
            &wav,
            &format!("{} stall-timeout=1000", tiny()),
            Some(Box::new(|inner| Box::new(MuteAfter::new(inner, 0, true)))),
        );
        assert_eq!(run.stat("stalls"), 0, "{name}: {:?}", run.stats);
        assert_eq!(stall_warnings(&run), 0, "{name}");
    }
}

#[test]
fn the_watchdog_restarts_a_silent_vllm_session_too() {
    // The vLLM double runs the tone fixture, a model constructed to write
    // only for a 1 kHz tone: silent for most of the speech.
    let server = Double::start(common::fixture("voxtral-rt-tone.gguf"), Faults::default());
    let dir = common::scratch_dir("watchdog-vllm");
    let wav = speech(&dir);
    let run = run(
        &wav,
        &format!(
            "engine=vllm url={} model={SERVED_MODEL} stall-timeout=2000",
            server.url()
        ),
        None,
    );
    // The tone fixture writes now and then over speech (its 1 kHz parts):
    // each silence after such a word is an episode with its WARNING.
    let stalls = run.stat("stalls");
    assert!(stalls >= 1, "{:?}", run.stats);
    assert!(
        (1..=stalls as usize).contains(&stall_warnings(&run)),
        "{:?}",
        run.warnings
    );
    // A restart is a new session, not a reconnection.
    assert_eq!(run.stat("reconnects"), 0);
    assert!(server.seen.lock().unwrap().utterances >= 2);
}

/// Speech as sparse or dense as `every_ms` makes it: one espeak-ng word
/// (about 0.4 s) every `every_ms`, for `secs` seconds, at 16 kHz.
fn spaced_words(dir: &Path, every_ms: u32, secs: u32) -> PathBuf {
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    let every = format!("{:.3}", f64::from(every_ms) / 1000.0);
    let mut pieces = Vec::new();
    for i in 0..secs * 1000 / every_ms {
        let word = dir.join(format!("word{i}.wav"));
        let piece = dir.join(format!("piece{i}.wav"));
        let spoke = std::process::Command::new("espeak-ng")
            .arg("-w")
            .arg(&word)
            .arg(words[i as usize % words.len()])
            .status()
            .expect("espeak-ng (Debian package espeak-ng)");
        assert!(spoke.success());
        let padded = std::process::Command::new("sox")
            .arg("-V1")
            .arg(&word)
            .args(["-r", "16000"])
            .arg(&piece)
            .args(["pad", "0", &every, "trim", "0", &every])
            .status()
            .expect("sox");
        assert!(padded.success());
        pieces.push(piece);
    }
    let wav = dir.join("spaced.wav");
    let joined = std::process::Command::new("sox")
        .args(&pieces)
        .arg(&wav)
        .status()
        .expect("sox");
    assert!(joined.success());
    wav
}

/// A model that goes silent 6 s into each stream over speech with a word
/// every `every_ms` (stall-timeout 5 s): the watchdog restarts it however
/// sparse the speech, and words come out again after each restart.
fn check_sparse_speech(every_ms: u32, vllm: bool) {
    let name = format!(
        "watchdog-every-{every_ms}-{}",
        if vllm { "vllm" } else { "local" }
    );
    let dir = common::scratch_dir(&name);
    let wav = spaced_words(&dir, every_ms, 40);
    let server;
    let (props, wrap): (String, Option<Wrap>) = if vllm {
        let faults = Faults {
            blank_after_steps: Some(6_000 / 80),
            ..Faults::default()
        };
        server = Double::start(common::tiny_model(), faults);
        let props = format!(
            "engine=vllm url={} model={SERVED_MODEL} stall-timeout=5000",
            server.url()
        );
        (props, None)
    } else {
        let wrap: Wrap = Box::new(|inner| Box::new(MuteAfter::new(inner, 6 * 16_000, false)));
        (format!("{} stall-timeout=5000", tiny()), Some(wrap))
    };
    let run = run(&wav, &props, wrap);
    let restarts: Vec<u64> = stalled(&run)
        .iter()
        .map(|s| s.get::<u64>("pts").unwrap())
        .collect();
    assert!(!restarts.is_empty(), "{name}: no restart: {:?}", run.stats);
    // One WARNING per episode: a restarted model that writes and falls
    // silent again starts another.
    let warned = stall_warnings(&run);
    assert!(
        (1..=restarts.len()).contains(&warned),
        "{name}: {:?}",
        run.warnings
    );
    let first = restarts[0];
    assert!(
        first > 6_000_000_000,
        "{name}: restart at {first} ns, before the model fell silent"
    );
    // 5 s of speech after 6 s: with a word of about 0.4 s every 2 s, about
    // 25 s of audio later (and 30 % to spare for the detector).
    let bound = 6_000_000_000 + 5_000_000_000 * u64::from(every_ms) / 400 * 13 / 10;
    assert!(
        first < bound,
        "{name}: first restart at {first} ns, not before {bound}"
    );
    assert!(
        run.words.iter().any(|w| w.0 > first),
        "{name}: no word after the restart at {first}: {:?}",
        run.words
    );
    eprintln!(
        "{name}: restarts at {:?} ms, {} words",
        restarts.iter().map(|r| r / 1_000_000).collect::<Vec<_>>(),
        run.words.len()
    );
}

#[test]
fn a_silent_model_is_restarted_over_sparse_speech_20_percent() {
    check_sparse_speech(2000, false);
}

#[test]
fn a_silent_model_is_restarted_over_sparse_speech_40_percent() {
    check_sparse_speech(1000, false);
}

#[test]
fn a_silent_model_is_restarted_over_dense_speech() {
    check_sparse_speech(500, false);
}

#[test]
fn a_silent_vllm_session_is_restarted_over_sparse_speech_20_percent() {
    check_sparse_speech(2000, true);
}

#[test]
fn a_silent_vllm_session_is_restarted_over_sparse_speech_40_percent() {
    check_sparse_speech(1000, true);
}

#[test]
fn a_silent_vllm_session_is_restarted_over_dense_speech() {
    check_sparse_speech(500, true);
}

#[test]
fn with_speech_only_the_watchdog_counts_the_speech_across_the_gates_streams() {
    // A word every 2 s: the gate (hangover 1 s) closes between words, so
    // each word is a stream of its own; the model is mute from 6 s of audio
    // fed on. The speech still adds up to the timeout across the streams.
    let dir = common::scratch_dir("watchdog-gate");
    let wav = spaced_words(&dir, 2000, 40);
    let run = run(
        &wav,
        &format!("{} stall-timeout=5000 speech-only=true", tiny()),
        Some(Box::new(|inner| {
            Box::new(MuteAfter::new(inner, 6 * 16_000, true))
        })),
    );
    let opens = run
        .messages_named("voxtralrt-speech")
        .iter()
        .filter(|m| m.get::<bool>("speaking").unwrap())
        .count();
    assert!(opens >= 10, "the gate opened {opens} times");
    assert!(run.stat("stalls") >= 1, "{:?}", run.stats);
    assert_eq!(stall_warnings(&run), 1, "{:?}", run.warnings);
    assert!(run.stat("audio-gated") > 0, "{:?}", run.stats);
}
