// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 2: latency per word, live, against its floor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gstvoxtralrt::engine::Stream;

use crate::harness::{ms, percentile, progress, Audio, Report};
use crate::live::run_live;
use crate::options::{die, Opts};
use crate::{LIVE_BUFFER_SAMPLES, MS, RATE, SECOND};

/// The floor for latency: the engine and the element's own word placement
/// (`gstvoxtralrt::transcript`, with the element's settings), fed 20 ms
/// pieces paced in real time on one thread, with no GStreamer and no worker
/// thread. Returns the same per-word figure as the element's.
fn floor_latency(opts: &Opts, audio: &Audio, interval_ms: u32, secs: u64) -> Vec<f64> {
    use gstvoxtralrt::settings::Settings;
    use gstvoxtralrt::transcript::{Output, Transcript};
    let settings = Settings {
        delay_ms: opts.delay_ms,
        decode_interval_ms: interval_ms,
        ..Settings::default()
    };
    let mut transcript = Transcript::new(settings.transcript_config());
    let mut stream = Stream::open(&opts.spec(&opts.model), opts.threads)
        .unwrap_or_else(|e| die(&format!("opening the engine stream: {e}")));
    stream
        .begin(settings.stream_config())
        .unwrap_or_else(|e| die(&format!("starting the engine stream: {e}")));
    let step = LIVE_BUFFER_SAMPLES as u64 * SECOND / RATE;
    let delay = u64::from(opts.delay_ms) * MS;
    let mut arrivals: Vec<(u64, Instant)> = Vec::new();
    let mut latencies = Vec::new();
    let t0 = Instant::now();
    for i in 0..(secs * SECOND / step) as usize {
        let end = (i as u64 + 1) * step;
        let due = t0 + Duration::from_nanos(end);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        arrivals.push((end, Instant::now()));
        let updates = stream
            .feed(audio.chunk_of(i, LIVE_BUFFER_SAMPLES))
            .unwrap_or_else(|e| die(&format!("engine feed: {e}")));
        for update in updates {
            let placed = transcript.push(&update.text, update.heard_until * SECOND / RATE);
            let left = Instant::now();
            for item in placed {
                if let Output::Cue(cue) = item {
                    let at = arrivals.partition_point(|&(e, _)| e < cue.end);
                    let arrived = arrivals.get(at).or(arrivals.last()).map_or(t0, |a| a.1);
                    latencies.push((left - arrived).as_nanos() as f64 - delay as f64);
                }
            }
        }
    }
    latencies.sort_by(f64::total_cmp);
    latencies
}

pub(crate) fn latency(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    rep.line(format!(
        "\n## 2. Latency (live, paced in real time, {} s per interval, 20 ms buffers, delay {} ms)\n",
        opts.live_s, opts.delay_ms
    ));
    rep.line(
        "Per word: time it left the src pad - time the audio at its end reached the sink pad - delay. \
         Floor: the same figure for the engine with the element's word placement (`gstvoxtralrt::transcript`) \
         fed in real time on one thread, no GStreamer; it runs at the same time as the element. \
         A word ends where its last 80 ms frame ends; the model can write it once 15 ms of mel window past \
         that are in too, beyond the delay, and the last word of a decode is known to be complete only at \
         the next decode, one interval later.\n",
    );
    rep.line("| decode interval | words | p50 ms | p95 ms | max ms | floor p50 / p95 / max ms | p95 over the floor ms | goal p95 <= interval + 30 ms | late vs announced latency | element RTF |");
    rep.line("|---|---|---|---|---|---|---|---|---|---|");
    for &interval in &opts.intervals {
        progress(&format!("latency: {interval} ms, {} s live", opts.live_s));
        let floor = {
            let (opts, audio) = (opts.clone(), audio.clone());
            std::thread::spawn(move || floor_latency(&opts, &audio, interval, opts.live_s))
        };
        let (results, _) = run_live(opts, audio, interval, opts.live_s, 1);
        let floor = floor.join().expect("the floor thread");
        let r = &results[0];
        let s = r.sorted();
        let p95 = percentile(&s, 95.0);
        let floor_p95 = percentile(&floor, 95.0);
        let bound = f64::from(interval + 30) * MS as f64;
        let met = p95 <= bound;
        rep.line(format!(
            "| {interval} ms | {} (+{} at EOS) | {} | {} | {} | {} / {} / {} | {} | {} ({}) | {} | {:.4} |",
            s.len(),
            r.at_eos,
            ms(percentile(&s, 50.0)),
            ms(p95),
            ms(s.last().copied().unwrap_or(f64::NAN)),
            ms(percentile(&floor, 50.0)),
            ms(floor_p95),
            ms(floor.last().copied().unwrap_or(f64::NAN)),
            ms(p95 - floor_p95),
            if met { "met" } else { "NOT met" },
            ms(bound),
            r.late,
            r.rtf
        ));
        rep.goal(format!(
            "latency p95 <= {} ms at {interval} ms: p95 {} ms (floor {} ms) -> {}",
            ms(bound),
            ms(p95),
            ms(floor_p95),
            if met { "met" } else { "NOT met" }
        ));
    }
}
