// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Every example runs on a short input with the fixture model, so none can
//! rot. The client build (no local engine) checks only what needs no model.

mod common;

use std::process::{Command, Output};

fn example(name: &str, args: &[&str]) -> Output {
    Command::new(common::process::examples_dir().join(name))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("VOXTRAL_MODEL")
        .output()
        .unwrap()
}

fn text(output: &Output) -> String {
    common::output_text(output)
}

#[test]
fn every_example_prints_its_help() {
    for name in [
        "transcribe_file",
        "live_captions",
        "mkv_subtitles",
        "rtsp_captions",
        "rtmp_captions",
        "webrtc_captions",
    ] {
        let out = example(name, &["--help"]);
        assert!(out.status.success(), "{name}: {}", text(&out));
        assert!(
            text(&out).contains(&format!("cargo run --example {name}")),
            "{name}"
        );
    }
}

/// The examples that build a transcriber for live input take the
/// element's `overload` (their live tests pass `--overload queue` where
/// they are about delivery rather than overload).
#[test]
fn the_live_examples_take_overload_skip_or_queue_and_nothing_else() {
    for name in [
        "live_captions",
        "rtsp_captions",
        "rtmp_captions",
        "webrtc_captions",
    ] {
        let help = text(&example(name, &["--help"]));
        assert!(help.contains("--overload MODE"), "{name}: {help}");
        // rtmp_captions checks its --url first; the others ignore it.
        let out = example(
            name,
            &["--url", "rtmp://127.0.0.1/live/KEY", "--overload", "drop"],
        );
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        assert!(
            text(&out).contains("--overload takes skip or queue, not drop"),
            "{name}: {}",
            text(&out)
        );
    }
}

#[test]
fn rtmp_captions_needs_an_rtmp_url() {
    for args in [&[][..], &["--url", "http://127.0.0.1/live/KEY"]] {
        let out = example("rtmp_captions", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains("--url"), "{}", text(&out));
    }
}

#[cfg(feature = "local")]
#[test]
fn rtmp_captions_with_a_missing_model_is_an_error_naming_it() {
    let out = example(
        "rtmp_captions",
        &[
            "--model",
            "/nonexistent/model.gguf",
            "--audio",
            "examples/data/sample.wav",
            "--url",
            "rtmp://127.0.0.1:9/live/KEY",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("error: ") && text(&out).contains("/nonexistent/model.gguf"),
        "{}",
        text(&out)
    );
}

#[cfg(feature = "local")]
#[test]
fn transcribe_file_writes_each_format_and_reports_progress() {
    let dir = common::scratch_dir("example-file");
    for ext in ["srt", "vtt", "txt", "jsonl"] {
        let out_path = dir.join(format!("sample.{ext}"));
        let out = example(
            "transcribe_file",
            &[
                "examples/data/sample.wav",
                out_path.to_str().unwrap(),
                "--threads",
                "1",
            ],
        );
        let log = text(&out);
        assert!(out.status.success(), "{ext}: {log}");
        assert!(
            log.contains("synthetic test model"),
            "no note about the test model"
        );
        assert!(log.contains("real-time factor"), "{log}");
        let written = std::fs::read_to_string(&out_path).unwrap();
        assert!(written.contains("hello from the tiny"), "{ext}: {written}");
    }
}

#[test]
fn transcribe_file_refuses_a_missing_input() {
    let out = example("transcribe_file", &["/nonexistent.wav", "/tmp/x.srt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("is not a file"));
}

#[cfg(feature = "local")]
#[test]
fn live_captions_runs_headless_on_a_test_source() {
    let out = example(
        "live_captions",
        &[
            "--source",
            "test",
            "--seconds",
            "2",
            "--headless",
            "--threads",
            "1",
            // Checks that the option reaches the element (a launch line
            // with a wrong property fails); the run asserts no words.
            "--overload",
            "queue",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
}

#[cfg(feature = "local")]
#[test]
fn mkv_subtitles_writes_audio_and_a_subtitle_track() {
    let path = common::scratch_dir("example-mkv").join("out.mkv");
    let out = example(
        "mkv_subtitles",
        &[
            "examples/data/sample.wav",
            path.to_str().unwrap(),
            "--threads",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let bytes = std::fs::read(&path).unwrap();
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"S_TEXT/UTF8") && has(b"A_OPUS"), "tracks missing");
    assert!(has(b"hello from the tiny"), "no subtitle text");
}
