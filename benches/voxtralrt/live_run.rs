// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 8: one long live run, paced in real time, with the element's
//! default overload policy: how far behind the words come, how much audio
//! is skipped to stay live, and whether memory stays flat.

use std::sync::Arc;
use std::time::Duration;

use crate::harness::{percentile, progress, Audio, Report};
use crate::live::{run_live_sampled, Sample};
use crate::options::Opts;
use crate::{DEFAULT_INTERVAL_MS, MS, SECOND};

pub(crate) fn live_run(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    let secs = opts.live_run_s;
    rep.line(format!(
        "\n## 8. A long live run ({secs} s paced in real time, 20 ms buffers, threads {}, delay {} ms, decode interval {} ms, overload=skip (the default))\n",
        opts.threads, opts.delay_ms, DEFAULT_INTERVAL_MS
    ));
    progress(&format!("live run: {secs} s"));
    let run = run_live_sampled(
        opts,
        audio,
        DEFAULT_INTERVAL_MS,
        secs,
        Duration::from_secs(1),
    );
    let (result, samples) = (&run.result, &run.samples);
    let words = result.sorted();
    let ms_of = |ns: f64| ns / MS as f64;
    rep.line("Word lag: the time a word left the src pad - the time the audio at its end arrived - the delay (as in section 2). Queue lag: the element's `stats` lag (audio waiting for the model), sampled every second.\n");
    rep.line("| words | word lag p50 / p95 / max ms | queue lag p50 / p95 / max ms | audio skipped | skip episodes (WARNINGs) | VmRSS at 1 min / at the end / max MiB | element RTF |");
    rep.line("|---|---|---|---|---|---|---|");
    let lags: Vec<f64> = {
        let mut l: Vec<f64> = samples
            .iter()
            .map(|s| s.stats.get::<u64>("lag").unwrap_or(0) as f64)
            .collect();
        l.sort_by(f64::total_cmp);
        l
    };
    let last = samples.last().map(|s| &s.stats);
    let stat = |name: &str| last.and_then(|s| s.get::<u64>(name).ok()).unwrap_or(0);
    let (received, skipped) = (stat("audio-received"), stat("audio-skipped"));
    let rss_at = |t: Duration| -> f64 {
        samples
            .iter()
            .find(|s| s.at >= t)
            .or(samples.last())
            .map_or(f64::NAN, |s| s.rss_kib as f64 / 1024.0)
    };
    let rss_max = samples.iter().map(|s| s.rss_kib).max().unwrap_or(0) as f64 / 1024.0;
    let rss_end = samples
        .last()
        .map_or(f64::NAN, |s| s.rss_kib as f64 / 1024.0);
    rep.line(format!(
        "| {} (+{} at EOS) | {:.0} / {:.0} / {:.0} | {:.0} / {:.0} / {:.0} | {:.1} % ({:.1} s of {:.1} s) | {} | {:.0} / {:.0} / {:.0} | {:.2} |",
        words.len(),
        result.at_eos,
        ms_of(percentile(&words, 50.0)),
        ms_of(percentile(&words, 95.0)),
        ms_of(words.last().copied().unwrap_or(f64::NAN)),
        ms_of(percentile(&lags, 50.0)),
        ms_of(percentile(&lags, 95.0)),
        ms_of(lags.last().copied().unwrap_or(f64::NAN)),
        if received > 0 { skipped as f64 * 100.0 / received as f64 } else { 0.0 },
        skipped as f64 / SECOND as f64,
        received as f64 / SECOND as f64,
        run.warnings,
        rss_at(Duration::from_secs(60)),
        rss_end,
        rss_max,
        result.rtf,
    ));
    rep.line(format!(
        "\nRSS over the run (MiB, every {} s): {}",
        rss_step(samples),
        rss_series(samples)
    ));
}

fn rss_step(samples: &[Sample]) -> u64 {
    (samples.len() as u64 / 20).max(1)
}

fn rss_series(samples: &[Sample]) -> String {
    let step = rss_step(samples) as usize;
    samples
        .iter()
        .step_by(step)
        .map(|s| format!("{:.0}", s.rss_kib as f64 / 1024.0))
        .collect::<Vec<_>>()
        .join(", ")
}
