// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 4: memory over hours of audio, in a child process.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;

use crate::harness::{init_gst, progress, rss_kib, run_child, Audio, Report, Rig};
use crate::options::Opts;
use crate::{BUFFER_SAMPLES, DEFAULT_INTERVAL_MS, RATE, SECOND};

/// The child of `memory`: streams `secs` of audio (non-live, fast) through
/// one element and prints RSS lines at checkpoints of the input's timeline.
pub(crate) fn memory_child(opts: &Opts, secs: u64) {
    init_gst();
    let audio = Arc::new(Audio::load());
    let rig = Rig::new(opts, &opts.model, DEFAULT_INTERVAL_MS, false);
    let checkpoints: Vec<u64> = [60, 600, 3600, 7200]
        .into_iter()
        .filter(|&c| c < secs)
        .collect();
    let next = Arc::new(Mutex::new(0usize));
    let t0 = Instant::now();
    {
        let next = next.clone();
        rig.transcriber
            .static_pad("src")
            .expect("src pad")
            .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
                let pts = info
                    .buffer()
                    .and_then(|b| b.pts())
                    .map_or(0, gst::ClockTime::nseconds);
                let mut next = next.lock().unwrap();
                while *next < checkpoints.len() && pts >= checkpoints[*next] * SECOND {
                    let (rss, hwm) = rss_kib();
                    println!(
                        "MEM {} {rss} {hwm} {:.1}",
                        checkpoints[*next],
                        t0.elapsed().as_secs_f64()
                    );
                    *next += 1;
                }
                gst::PadProbeReturn::Ok
            });
    }
    rig.set(gst::State::Playing);
    let feeder = rig.feed(&audio, (secs * RATE) as usize / BUFFER_SAMPLES);
    rig.wait_eos(Duration::from_secs(secs.max(600)));
    let (rss, hwm) = rss_kib();
    println!("MEM {secs} {rss} {hwm} {:.1}", t0.elapsed().as_secs_f64());
    let restarts = rig.stats().get::<u64>("stream-restarts").unwrap_or(0);
    println!("RESTARTS {restarts}");
    rig.set(gst::State::Null);
    feeder.join().expect("feeder");
}

pub(crate) fn memory(opts: &Opts, rep: &mut Report) {
    rep.line(format!(
        "\n## 4. Memory (one element, {} s of audio non-live, in a child process)\n",
        opts.memory_s
    ));
    progress(&format!("memory: {} s of audio", opts.memory_s));
    let text = run_child(
        opts,
        &["--memory-child", &opts.memory_s.to_string()],
        "memory",
    );
    rep.line("| audio streamed | VmRSS MiB | peak RSS (VmHWM) MiB | wall s |");
    rep.line("|---|---|---|---|");
    let mut points = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f.as_slice() {
            ["MEM", at, rss, hwm, wall] => {
                let p = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
                let label = match p(at) as u64 {
                    s if s % 3600 == 0 => format!("{} h", s / 3600),
                    s if s % 60 == 0 => format!("{} min", s / 60),
                    s => format!("{s} s"),
                };
                rep.line(format!(
                    "| {label} | {:.1} | {:.1} | {} |",
                    p(rss) / 1024.0,
                    p(hwm) / 1024.0,
                    wall
                ));
                points.push((p(at), p(hwm)));
            }
            ["RESTARTS", n] => rep.line(format!(
                "\nEngine stream restarts (max-stream-duration 3600 s): {n}"
            )),
            _ => {}
        }
    }
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let growth = (last.1 - first.1) / 1024.0;
        rep.line(format!(
            "\nPeak RSS growth from {} s to {} s of audio: {growth:.2} MiB.",
            first.0, last.0
        ));
        rep.goal(format!(
            "memory growth < 10 MB from 1 min to {} s: {growth:.2} MiB -> {}",
            last.0,
            if growth * 1.048_576 < 10.0 {
                "met"
            } else {
                "NOT met"
            }
        ));
    }
}
