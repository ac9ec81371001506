// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Runs the Python example (examples/python/transcribe.py, PyGObject) against
//! the debug build of the plugin, loaded through GST_PLUGIN_PATH as a user
//! would, so the "From Python" section of docs/from-code.md keeps working.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python/transcribe.py")
}

/// A Python that can import GStreamer's bindings. Debian's python3-gi is only
/// in the system Python's path, so a `python3` from pyenv or a virtualenv
/// first on PATH is passed over for /usr/bin/python3.
fn python() -> &'static str {
    static PYTHON: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();
    PYTHON.get_or_init(|| {
        ["python3", "/usr/bin/python3"]
            .into_iter()
            .find(|python| {
                Command::new(python)
                    .args([
                        "-c",
                        "import gi; gi.require_version('Gst', '1.0'); from gi.repository import Gst",
                    ])
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
            .expect(
                "no python3 can import gi.repository.Gst: install the Debian packages \
                 python3-gi gir1.2-gstreamer-1.0 (scripts/setup does)",
            )
    })
}

fn run(args: &[&str]) -> Output {
    Command::new(python())
        .arg(script())
        .args(args)
        .env("GST_PLUGIN_PATH", common::plugin_dir())
        .env_remove("VOXTRAL_MODEL")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running examples/python/transcribe.py")
}

/// One printed transcript line: "pts P duration D  running A..B  stream C..E  final  TEXT"
/// (seconds).
#[derive(Debug)]
struct Cue {
    pts: f64,
    duration: f64,
    running: (f64, f64),
    stream: (f64, f64),
    is_final: bool,
    text: String,
}

fn parse_cue(line: &str) -> Option<Cue> {
    let range = |s: &str| -> Option<(f64, f64)> {
        let (a, b) = s.split_once("..")?;
        Some((a.parse().ok()?, b.parse().ok()?))
    };
    let mut words = line.split_whitespace();
    let mut field = |name: &str| -> Option<&str> {
        (words.next()? == name).then_some(())?;
        words.next()
    };
    let pts = field("pts")?.parse().ok()?;
    let duration = field("duration")?.parse().ok()?;
    let running = range(field("running")?)?;
    let stream = range(field("stream")?)?;
    let is_final = words.next()? == "final";
    let text = words.collect::<Vec<_>>().join(" ");
    Some(Cue {
        pts,
        duration,
        running,
        stream,
        is_final,
        text,
    })
}

#[test]
fn the_python_example_prints_every_word_with_increasing_times() {
    let model = common::tiny_model();
    let out = run(&[
        "examples/data/sample.wav",
        "--model",
        model.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let text = common::output_text(&out);
    assert!(out.status.success(), "transcribe.py failed:\n{text}");

    let cues: Vec<Cue> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| parse_cue(l).unwrap_or_else(|| panic!("unexpected line {l:?} in:\n{text}")))
        .collect();
    // The tiny model says "hello from the tiny voxtral test model" over and
    // over, one message per word.
    assert!(cues.len() >= 7, "too few words:\n{text}");
    let words: Vec<&str> = cues.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        words[..7],
        ["hello", "from", "the", "tiny", "voxtral", "test", "model"],
        "{text}"
    );

    let mut previous_end = 0.0;
    for (i, cue) in cues.iter().enumerate() {
        assert!(cue.is_final, "cue {i} not final: {cue:?}");
        assert!(cue.duration > 0.0, "cue {i} has no duration: {cue:?}");
        // The file starts at 0 with a plain segment: every time line agrees.
        assert_eq!(cue.running.0, cue.pts, "cue {i}: {cue:?}");
        assert_eq!(cue.stream.0, cue.pts, "cue {i}: {cue:?}");
        // Printed with millisecond precision, so the sum may round once.
        assert!(
            (cue.running.1 - (cue.pts + cue.duration)).abs() <= 0.0015,
            "cue {i}: end is not pts + duration: {cue:?}"
        );
        assert_eq!(cue.stream.1, cue.running.1, "cue {i}: {cue:?}");
        // Words follow each other without overlapping.
        assert!(
            cue.pts >= previous_end - 0.0015,
            "cue {i} starts before the previous one ends ({previous_end}): {cue:?}"
        );
        if i > 0 {
            assert!(
                cue.pts > cues[i - 1].pts,
                "cue {i} does not move on: {cue:?}"
            );
        }
        previous_end = cue.running.1;
    }
    // The sample is about 5.8 s long: the words reach close to its end.
    assert!(
        previous_end > 5.0,
        "the last word ends at {previous_end} s:\n{text}"
    );
}

#[test]
fn the_python_example_fails_with_the_error_on_a_missing_model() {
    let dir = common::scratch_dir("python-missing-model");
    let model = dir.join("no-such-model.gguf");
    let out = run(&["--model", model.to_str().unwrap(), "--threads", "1"]);
    let text = common::output_text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "expected exit status 1:\n{text}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("transcribe.py: error from sink:"),
        "no error line on stderr:\n{text}"
    );
    assert!(
        stderr.contains(model.to_str().unwrap()),
        "the error does not name the model file:\n{text}"
    );
    assert!(
        out.stdout.is_empty(),
        "words printed without a model:\n{text}"
    );
}
