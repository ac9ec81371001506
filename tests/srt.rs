// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The SRT line of docs/streaming.md ("Over SRT"): the transcriber's
//! captions in H.264 SEI, in MPEG-TS, sent by `srtsink` as a caller to
//! ffmpeg listening on 127.0.0.1, which records what arrives; ffmpeg's
//! subcc then reads the captions from the recording.
//!
//! The line runs as the guide gives it, with the timing fixture (one word
//! "x" per 80 ms frame of 1 kHz tone, tests/fixtures/README-tone.md) for
//! the sample and a free port for 7001.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::process::Command;
use std::time::Duration;

use common::process;
use common::readback::{self, assert_shown_in_time, Recording, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_frames, tone_model};

/// The longest one step may take on a loaded machine before the test fails
/// instead of waiting on.
const STEP: Duration = Duration::from_secs(120);

/// ffmpeg as the SRT receiver: listens on 127.0.0.1:`port` and records
/// what comes into `ts`, until the sender closes.
fn start_receiver(port: u16, ts: &std::path::Path) -> Recording {
    let url = format!("srt://127.0.0.1:{port}?mode=listener");
    let receiver = Recording::start(&["-i", &url], ts);
    // The sender calls once: the listener must be up first.
    assert!(
        process::wait_until(STEP, || process::udp_port_bound(port)),
        "ffmpeg never listened on 127.0.0.1:{port}"
    );
    receiver
}

#[test]
fn the_readme_srt_line_delivers_every_word_to_an_ffmpeg_receiver() {
    let dir = common::scratch_dir("srt");
    let wav = dir.join("tone.wav");
    common::write_wav(&wav, &tone_audio(66, &tone_frames()));
    let line = common::doc_launch_line("srtsink");
    for part in ["examples/data/sample.wav", "srt://127.0.0.1:7001", "$MODEL"] {
        assert!(line.contains(part), "{part} is not in {line}");
    }
    let port = process::free_udp_port();
    let line = line
        .replace("examples/data/sample.wav", &wav.display().to_string())
        .replace("srt://127.0.0.1:7001", &format!("srt://127.0.0.1:{port}"));
    let plugins = common::plugin_dir();

    let ts = dir.join("received.ts");
    let receiver = start_receiver(port, &ts);
    let started = std::time::Instant::now();
    let sender = Command::new("timeout")
        .arg(STEP.as_secs().to_string())
        .args(["sh", "-c", &line])
        .current_dir(&dir)
        .env("MODEL", tone_model())
        .env("GST_PLUGIN_PATH", plugins)
        .output()
        .unwrap();
    let log = common::output_text(&sender);
    assert!(sender.status.success(), "{line}\n{log}");
    assert!(!log.contains("ERROR"), "{line}\n{log}");
    let sent_in = started.elapsed();

    // The receiver ends when the sender closes the connection.
    receiver.assert_ends_well(STEP, "ffmpeg still receiving after the sender ended", "");

    let shown = readback::x_times(&ts);
    let worst = assert_shown_in_time("ffmpeg over SRT", &shown, ROLL_UP_BOUND_MS);
    eprintln!(
        "SRT: {} words, worst {worst} ms after their place; the sender ran {:.1} s",
        shown.len(),
        sent_in.as_secs_f64()
    );
}
