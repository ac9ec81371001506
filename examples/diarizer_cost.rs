// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What live speaker labels from transcribe.cpp's Streaming Sortformer would
//! cost on this machine: the compute time of one diarization run over a
//! sliding window, the real-time factor and added latency that follow, and
//! the offline real-time factor of each preset (docs/diarizer.md).
//!
//! Random weights (scripts/models/make-sortformer-model) cost the same as the real
//! ones: every shape is the real model's and the work does not depend on the
//! audio. The labels are noise; accuracy is not measured.

mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gstvoxtralrt::engine::diarize::{DiarizePreset, Diarizer, SpeakerTracker, DIARIZE_SAMPLE_RATE};

const USAGE: &str = "\
Measure the cost of Sortformer diarization, live (sliding windows) and offline.

usage: cargo run --release --features diarize --example diarizer_cost -- --model MODEL [options]

  --model PATH       a sortformer GGUF, e.g. the same-shape stand-in written by
                     scripts/models/make-sortformer-model (random weights)
  --threads LIST     thread counts, each a diarizer of its own (default 1,2)
  --windows LIST     live window lengths in seconds (default 4,8,16)
  --live-presets L   presets for the live runs (default
                     low-latency,high-latency,very-high-latency)
  --reps N           timed runs per live case, after one warm-up (default 3)
  --offline-secs S   length of the offline recording (default 60; 0 skips it)
  --offline-reps N   timed runs per offline preset (default 1)
  --budget-ms MS     the added-latency budget (default 2000)
  --max-rtf X        the real-time factor budget (default 0.5)

Compute times are medians over the reps (min-max in brackets), measured in
this one process, the thread counts interleaved. On a shared machine, repeat.";

/// The look-ahead a label waits for before it is final: LOW_LATENCY's chunk
/// plus right context (6 + 7 frames of 80 ms). Live runs of any preset commit
/// labels up to this far before the window's end, so that every committed
/// frame had this much audio after it.
const LOOKAHEAD: Duration = Duration::from_millis(1040);

fn list<T: std::str::FromStr>(args: &common::Args, name: &str, default: &str) -> Vec<T> {
    let text = args.value(name).unwrap_or_else(|| default.into());
    text.split(',')
        .map(|v| {
            v.trim()
                .parse()
                .unwrap_or_else(|_| common::fail(USAGE, &format!("--{name}: not a number: {v}")))
        })
        .collect()
}

fn preset(nick: &str) -> DiarizePreset {
    [
        DiarizePreset::Default,
        DiarizePreset::VeryHighLatency,
        DiarizePreset::HighLatency,
        DiarizePreset::LowLatency,
    ]
    .into_iter()
    .find(|p| p.nick() == nick.trim())
    .unwrap_or_else(|| common::fail(USAGE, &format!("unknown preset {nick}")))
}

/// Two tone "voices" taking turns with pauses (the cost does not depend on
/// what is said).
fn audio(seconds: f64) -> Vec<f32> {
    let rate = DIARIZE_SAMPLE_RATE as f64;
    (0..(seconds * rate) as usize)
        .map(|i| {
            let t = i as f64 / rate;
            let slot = (t / 2.5) as usize;
            if t - slot as f64 * 2.5 > 2.0 {
                return 0.0;
            }
            let f = [150.0, 240.0, 410.0][slot % 3];
            let w = 2.0 * std::f64::consts::PI * f * t;
            (0.3 * w.sin() + 0.1 * (3.0 * w).sin()) as f32
        })
        .collect()
}

/// Resident and peak resident memory of this process, in MiB.
fn rss_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Median and range of some durations, in seconds.
struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

impl Stats {
    fn of(times: &[Duration]) -> Stats {
        let mut s: Vec<f64> = times.iter().map(Duration::as_secs_f64).collect();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Stats {
            median,
            min: s[0],
            max: s[n - 1],
        }
    }

    fn show(&self) -> String {
        format!("{:.3} [{:.3}-{:.3}]", self.median, self.min, self.max)
    }
}

fn main() {
    let args = common::Args::parse(USAGE, &[]);
    let model = PathBuf::from(
        args.value("model")
            .unwrap_or_else(|| common::fail(USAGE, "--model is needed")),
    );
    let threads: Vec<u32> = list(&args, "threads", "1,2");
    let windows: Vec<f64> = list(&args, "windows", "4,8,16");
    let live_presets: Vec<DiarizePreset> = args
        .value("live-presets")
        .unwrap_or_else(|| "low-latency,high-latency,very-high-latency".into())
        .split(',')
        .map(preset)
        .collect();
    let reps = args.number("reps", 3usize, USAGE).max(1);
    let offline_secs = args.number("offline-secs", 60.0f64, USAGE);
    let offline_reps = args.number("offline-reps", 1usize, USAGE).max(1);
    let budget = Duration::from_millis(args.number("budget-ms", 2000u64, USAGE));
    let max_rtf = args.number("max-rtf", 0.5f64, USAGE);
    gst::init().unwrap();

    let size_mib = std::fs::metadata(&model).map_or(f64::NAN, |m| m.len() as f64 / 1048576.0);
    let (rss_before, _) = rss_mib();
    let mut diarizers = Vec::new();
    for &t in &threads {
        let d = Diarizer::load(&model, t).unwrap_or_else(|e| {
            eprintln!("error: {e}");
            std::process::exit(1)
        });
        let (rss, _) = rss_mib();
        println!(
            "loaded {} ({size_mib:.0} MiB) for {t} thread(s) in {} ms; RSS {rss:.0} MiB \
             (before any load {rss_before:.0} MiB)",
            model.display(),
            d.load_time().as_millis()
        );
        diarizers.push((t, d));
    }
    let load_avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine: {} CPUs, load average at start {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_avg
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    let longest = windows.iter().cloned().fold(offline_secs, f64::max);
    let samples = audio(longest + 1.0);
    let rate = DIARIZE_SAMPLE_RATE as usize;

    // Live: a run over the last W s, as every hop would do. One warm-up run
    // per case, then the reps, thread counts interleaved.
    let cases: Vec<(DiarizePreset, f64)> = live_presets
        .iter()
        .flat_map(|&p| windows.iter().map(move |&w| (p, w)))
        .collect();
    let mut live: Vec<Vec<Vec<Duration>>> = vec![vec![Vec::new(); cases.len()]; threads.len()];
    // The warm-up runs: the first after the load pages the weights in.
    let mut first: Vec<Vec<Duration>> = vec![Vec::new(); threads.len()];
    for rep in 0..=reps {
        for (ti, (_, d)) in diarizers.iter_mut().enumerate() {
            for (ci, &(p, w)) in cases.iter().enumerate() {
                let n = (w * rate as f64) as usize;
                // A window further into the stream on each rep.
                let start = (rep * rate / 2) % (samples.len() - n + 1);
                let mut tracker = SpeakerTracker::new();
                let started = Instant::now();
                let segments = d.run(&samples[start..start + n], p).unwrap();
                tracker.label((start * 1000 / rate) as u64, &segments);
                let took = started.elapsed();
                if rep > 0 {
                    live[ti][ci].push(took);
                } else {
                    first[ti].push(took);
                }
            }
        }
    }

    println!();
    for (ti, &t) in threads.iter().enumerate() {
        if let (Some(&(p, w)), Some(took)) = (cases.first(), first[ti].first()) {
            println!(
                "{t} thread(s): the first run after the load ({}, {w} s; it pages the weights \
                 in) took {:.3} s; median of the later ones {:.3} s",
                p.nick(),
                took.as_secs_f64(),
                Stats::of(&live[ti][0]).median
            );
        }
    }

    println!();
    println!(
        "LIVE: every hop, one run over the last W s; labels committed up to {:.2} s before \
         the window's end (look-ahead). compute = one run, seconds, median [min-max] of {reps}.",
        LOOKAHEAD.as_secs_f64()
    );
    println!(
        "RTF = compute / hop; the shortest hop with RTF <= {max_rtf} is compute / {max_rtf}; \
         added latency = look-ahead + hop + compute; meets = at that hop, latency <= {:.1} s",
        budget.as_secs_f64()
    );
    println!();
    println!(
        "| threads | preset | W (s) | compute (s) | RTF at hop 1 s | latency at hop 1 s (s) \
         | hop for RTF {max_rtf} (s) | latency at that hop (s) | meets |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (ti, &t) in threads.iter().enumerate() {
        for (ci, &(p, w)) in cases.iter().enumerate() {
            let c = Stats::of(&live[ti][ci]);
            let look = LOOKAHEAD.as_secs_f64();
            let hop = c.median / max_rtf;
            let latency = look + hop + c.median;
            let meets = latency <= budget.as_secs_f64();
            println!(
                "| {t} | {} | {w} | {} | {:.2} | {:.2} | {hop:.2} | {latency:.2} | {} |",
                p.nick(),
                c.show(),
                c.median, // over a 1 s hop
                look + 1.0 + c.median,
                if meets { "yes" } else { "no" }
            );
        }
    }

    if offline_secs > 0.0 {
        let n = (offline_secs * rate as f64) as usize;
        let presets = [
            DiarizePreset::VeryHighLatency,
            DiarizePreset::HighLatency,
            DiarizePreset::LowLatency,
        ];
        let mut offline: Vec<Vec<Vec<Duration>>> =
            vec![vec![Vec::new(); presets.len()]; threads.len()];
        for _ in 0..offline_reps {
            for (ti, (_, d)) in diarizers.iter_mut().enumerate() {
                for (pi, &p) in presets.iter().enumerate() {
                    let started = Instant::now();
                    d.run(&samples[..n], p).unwrap();
                    offline[ti][pi].push(started.elapsed());
                }
            }
        }
        println!();
        println!(
            "OFFLINE: one {offline_secs} s recording per run; compute in seconds, median \
             [min-max] of {offline_reps}; RTF = compute / {offline_secs} s"
        );
        println!();
        println!("| threads | preset | look-ahead (s) | compute (s) | RTF |");
        println!("|---|---|---|---|---|");
        for (ti, &t) in threads.iter().enumerate() {
            for (pi, &p) in presets.iter().enumerate() {
                let c = Stats::of(&offline[ti][pi]);
                println!(
                    "| {t} | {} | {:.2} | {} | {:.3} |",
                    p.nick(),
                    p.lookahead().map_or(f64::NAN, |l| l.as_secs_f64()),
                    c.show(),
                    c.median / offline_secs
                );
            }
        }
    }

    let (rss, peak) = rss_mib();
    let load_avg = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!();
    println!(
        "RSS at the end {rss:.0} MiB, peak {peak:.0} MiB ({} diarizer(s) loaded); load \
         average at the end {}",
        diarizers.len(),
        load_avg
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
