// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 6: model reuse, first word on the first and second start.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gstvoxtralrt::engine::ModelPool;

use crate::harness::{Audio, Report, Rig};
use crate::options::{die, Opts};
use crate::DEFAULT_INTERVAL_MS;

pub(crate) fn reuse(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    rep.line("\n## 6. Model reuse (same element: NULL -> PLAYING, first word; twice)\n");
    // A private path, so no other instance of the pool is reused.
    let dir = std::env::temp_dir().join(format!("voxtralrt-bench-reuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let private = dir.join("model.gguf");
    std::os::unix::fs::symlink(&opts.model, &private).expect("linking the model");
    let rig = Rig::new(opts, &private, DEFAULT_INTERVAL_MS, false);
    let words = rig.count_words();
    rep.line("| start | NULL -> READY (model) ms | READY requested -> first word ms | model loads so far |");
    rep.line("|---|---|---|---|");
    let mut firsts = Vec::new();
    for start in 1..=2 {
        *words.lock().unwrap() = (0, None);
        let t0 = Instant::now();
        rig.set(gst::State::Ready);
        let ready = t0.elapsed();
        rig.set(gst::State::Playing);
        let feeder = rig.feed(audio, 30);
        let deadline = Instant::now() + Duration::from_secs(600);
        let first = loop {
            if let Some(t) = words.lock().unwrap().1 {
                break t - t0;
            }
            if Instant::now() > deadline {
                die("no word within 600 s");
            }
            std::thread::sleep(Duration::from_micros(200));
        };
        rig.wait_eos(Duration::from_secs(600));
        rig.set(gst::State::Null);
        feeder.join().expect("feeder");
        let loads = ModelPool::global().loads_of(&private);
        rep.line(format!(
            "| {} | {:.1} | {:.1} | {loads} |",
            if start == 1 { "first" } else { "second" },
            ready.as_secs_f64() * 1e3,
            first.as_secs_f64() * 1e3
        ));
        firsts.push(first.as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    rep.line(format!(
        "\nSecond start / first start: {:.2} (the input is 3 s non-live; the first word needs about 0.6 s of audio decoded).",
        firsts[1] / firsts[0]
    ));
    rep.goal(format!(
        "model reuse: first word {:.1} ms on the second start vs {:.1} ms on the first (no numeric goal)",
        firsts[1] * 1e3,
        firsts[0] * 1e3
    ));
}
