// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 1: throughput overhead, element against engine.

use std::sync::Arc;

use crate::harness::{median, min_max, progress, run_element, run_engine, Audio, Report, Usage};
use crate::options::Opts;

pub(crate) fn throughput(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    rep.line(format!(
        "\n## 1. Throughput overhead ({} s of audio, non-live, repetitions: {}, threads: {})\n",
        opts.audio_s, opts.reps, opts.threads
    ));
    rep.line("| decode interval | engine wall (median, min-max) | element wall (median, min-max) | ratio element/engine (median, min-max) | engine RTF | element RTF | CPU ms per audio s, engine / element (of which kernel) | context switches per audio s, engine / element | words: engine / element |");
    rep.line("|---|---|---|---|---|---|---|---|---|");
    for &interval in &opts.throughput_intervals {
        // Warm up both paths (page cache, pool, allocator).
        let warm = opts.warmup_s;
        run_engine(opts, audio, interval, warm);
        run_element(opts, audio, interval, warm);
        let (mut eng, mut ele, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        let (mut eng_cpu, mut ele_cpu) = (Vec::new(), Vec::new());
        let (mut eng_sys, mut ele_sys) = (Vec::new(), Vec::new());
        let (mut eng_csw, mut ele_csw) = (Vec::new(), Vec::new());
        let mut words = (0, 0);
        for r in 0..opts.reps {
            // Alternate the order so that drift on a noisy machine is shared.
            let (e, g) = if r % 2 == 0 {
                let e = run_engine(opts, audio, interval, opts.audio_s);
                (e, run_element(opts, audio, interval, opts.audio_s))
            } else {
                let g = run_element(opts, audio, interval, opts.audio_s);
                (run_engine(opts, audio, interval, opts.audio_s), g)
            };
            progress(&format!(
                "throughput {interval} ms rep {}: engine {:.3} s, element {:.3} s, ratio {:.3}",
                r + 1,
                e.wall.as_secs_f64(),
                g.wall.as_secs_f64(),
                g.wall.as_secs_f64() / e.wall.as_secs_f64()
            ));
            eng.push(e.wall.as_secs_f64());
            ele.push(g.wall.as_secs_f64());
            ratio.push(g.wall.as_secs_f64() / e.wall.as_secs_f64());
            let switches = |u: &Usage| (u.voluntary_switches + u.involuntary_switches) as f64;
            eng_cpu.push((e.usage.user + e.usage.sys).as_secs_f64());
            ele_cpu.push((g.usage.user + g.usage.sys).as_secs_f64());
            eng_sys.push(e.usage.sys.as_secs_f64());
            ele_sys.push(g.usage.sys.as_secs_f64());
            eng_csw.push(switches(&e.usage));
            ele_csw.push(switches(&g.usage));
            words = (e.words, g.words);
        }
        let audio_s = opts.audio_s as f64;
        let span = |v: &[f64]| {
            let (a, b) = min_max(v);
            format!("{:.3} s ({a:.3}-{b:.3})", median(v))
        };
        let (rlo, rhi) = min_max(&ratio);
        let rmed = median(&ratio);
        rep.line(format!(
            "| {interval} ms | {} | {} | {rmed:.3} ({rlo:.3}-{rhi:.3}) | {:.4} | {:.4} | {:.2} ({:.2}) / {:.2} ({:.2}) | {:.1} / {:.1} | {} / {} |",
            span(&eng),
            span(&ele),
            median(&eng) / audio_s,
            median(&ele) / audio_s,
            1e3 * median(&eng_cpu) / audio_s,
            1e3 * median(&eng_sys) / audio_s,
            1e3 * median(&ele_cpu) / audio_s,
            1e3 * median(&ele_sys) / audio_s,
            median(&eng_csw) / audio_s,
            median(&ele_csw) / audio_s,
            words.0,
            words.1
        ));
        rep.goal(format!(
            "throughput ratio <= 1.05 at {interval} ms: median {rmed:.3} -> {}",
            if rmed <= 1.05 { "met" } else { "NOT met" }
        ));
    }
}
