// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 5: scale, N live pipelines at once.

use std::sync::Arc;

use gst::prelude::*;

use crate::harness::{ms, percentile, progress, Audio, Report};
use crate::live::run_live;
use crate::options::Opts;
use crate::{DEFAULT_INTERVAL_MS, MS};

pub(crate) fn scale(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    rep.line(format!(
        "\n## 5. Scale (N live pipelines at once in one process, {} s each, decode interval {DEFAULT_INTERVAL_MS} ms, threads {}, {} CPUs)\n",
        opts.scale_s,
        opts.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    ));
    rep.line("| N | words | p50 ms | worst pipeline p95 ms | max ms | late words (vs announced latency) | within latency | sum of element RTFs | process CPU s per audio s |");
    rep.line("|---|---|---|---|---|---|---|---|---|");
    let goal = f64::from(DEFAULT_INTERVAL_MS + 30) * MS as f64;
    let mut single_p95 = None;
    let (mut best, mut best_goal) = (0, 0);
    for &n in &opts.scale {
        progress(&format!("scale: {n} pipelines, {} s live", opts.scale_s));
        let (results, cpu) = run_live(opts, audio, DEFAULT_INTERVAL_MS, opts.scale_s, n);
        let mut all: Vec<f64> = results.iter().flat_map(|r| r.latencies.clone()).collect();
        all.sort_by(f64::total_cmp);
        let worst_p95 = results
            .iter()
            .map(|r| percentile(&r.sorted(), 95.0))
            .fold(f64::NEG_INFINITY, f64::max);
        let late: usize = results.iter().map(|r| r.late).sum();
        let rtf: f64 = results.iter().map(|r| r.rtf).sum();
        let reference = *single_p95.get_or_insert(worst_p95);
        let within = late == 0 && worst_p95 <= reference + 30.0 * MS as f64;
        rep.line(format!(
            "| {n} | {} | {} | {} | {} | {late} | {} | {rtf:.4} | {:.4} |",
            all.len(),
            ms(percentile(&all, 50.0)),
            ms(worst_p95),
            ms(all.last().copied().unwrap_or(f64::NAN)),
            if within { "yes" } else { "no" },
            cpu.as_secs_f64() / opts.scale_s as f64
        ));
        if within && best < n {
            best = n;
        }
        if worst_p95 <= goal && best_goal < n {
            best_goal = n;
        }
    }
    rep.line(format!(
        "\nWithin latency: no word later than the announced latency ({} ms + 20 ms upstream) after its start, \
         and every pipeline's p95 within 30 ms of the first row's. Largest N within latency: {best}. \
         Largest N with every pipeline's p95 within interval + 30 ms (section 2's goal): {best_goal}.",
        default_latency_ms()
    ));
    rep.goal(format!(
        "scale: largest N within latency {best} (of {:?}); with p95 <= interval + 30 ms: {best_goal}",
        opts.scale
    ));
}

/// The element's default `latency` property, in milliseconds.
fn default_latency_ms() -> u32 {
    gst::ElementFactory::make("voxtralrttranscriber")
        .build()
        .map_or(0, |e| e.property::<u32>("latency"))
}
