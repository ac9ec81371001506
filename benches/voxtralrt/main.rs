// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! voxtralrttranscriber against its floor, the same engine driven directly
//! with no GStreamer around it (issue 6). A plain binary (`harness = false`):
//!
//! ```text
//! cargo bench --bench voxtralrt                 # full run (about 10 minutes, fixture)
//! cargo bench --bench voxtralrt -- --quick      # quick mode (about a minute)
//! scripts/bench/voxtralrt --model voxtral.gguf --backend cuda
//! cargo bench --bench voxtralrt -- --help
//! ```
//!
//! Sections (select with `--sections 1,2,...`):
//!
//! 1. throughput: the same long non-live input through the element and
//!    through the engine API, side by side, several repetitions;
//! 2. latency: live input paced in real time, per word;
//! 3. CPU outside the engine: instructions per second of audio, counted by
//!    callgrind in child processes of this binary;
//! 4. memory: peak RSS of a child process streaming hours of audio;
//! 5. scale: N live pipelines at once in one process;
//! 6. model reuse: READY to first word, first and second start;
//! 7. start: a fresh process to the first word, cold and warm page cache;
//! 8. live run: one long live run with the default overload policy (lag,
//!    audio skipped, RSS over time);
//! 9. remote engine: words through the element against a bare vLLM client,
//!    many streams against a zero-cost double, sessions a server keeps up
//!    with (`--vllm-url`).
//!
//! CI runs it through `cargo test --all-targets`, which starts it without
//! arguments (no `--bench`): that is quick mode, in a debug build.
//!
//! Each section is a module of its own (throughput.rs, latency.rs, cpu.rs,
//! memory.rs, scale.rs, reuse.rs, start.rs, live_run.rs) on a shared harness: harness.rs (input,
//! measuring helpers, non-live runs, the report), live.rs (live pipelines)
//! and options.rs (the command line).
//!
//! The figures go in docs/benchmarks.md; this binary checks no goal itself
//! (it only fails when a pipeline fails), it prints them with the figures.

mod cpu;
mod harness;
mod latency;
mod live;
mod live_run;
mod memory;
mod options;
mod remote;
mod reuse;
mod scale;
mod start;
mod throughput;

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use gstvoxtralrt::engine::Stream;

use cpu::{callgrind, callgrind_child};
use harness::{init_gst, Audio, Report};
use latency::latency;
use live_run::live_run;
use memory::{memory, memory_child};
use options::{die, parse_args, Mode};
use remote::{double_child, remote};
use reuse::reuse;
use scale::scale;
use start::{start, start_child};
use throughput::throughput;

const RATE: u64 = 16_000;
const MS: u64 = 1_000_000;
const SECOND: u64 = 1_000_000_000;
/// Non-live input comes in buffers of 100 ms.
const BUFFER_SAMPLES: usize = 1600;
/// Live input comes in buffers of 20 ms, as from a capture device.
const LIVE_BUFFER_SAMPLES: usize = 320;
const DEFAULT_DELAY_MS: u32 = 480;
const DEFAULT_INTERVAL_MS: u32 = 160;
const CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Mode::Bench(opts) => opts,
        Mode::CallgrindChild {
            opts,
            element,
            secs,
        } => return callgrind_child(&opts, element, secs),
        Mode::MemoryChild { opts, secs } => return memory_child(&opts, secs),
        Mode::StartChild { opts } => return start_child(&opts),
        Mode::DoubleChild => return double_child(),
    };
    init_gst();
    let audio = Arc::new(Audio::load());
    let started = Instant::now();
    let mut rep = Report {
        text: String::new(),
        goals: Vec::new(),
    };
    let mut head = String::new();
    let _ = write!(
        head,
        "# voxtralrt benchmark ({} mode)\n\n- model: {}\n- backend: {}, threads: {}, delay: {} ms\n- input: examples/data/sample.wav looped (F32LE 16 kHz mono)",
        if opts.quick { "quick" } else { "full" },
        if opts.fixture {
            format!(
                "the tiny fixture {} (synthetic, not a speech model: pass --model for a real one)",
                opts.model.display()
            )
        } else {
            opts.model.display().to_string()
        },
        opts.backend_nick(),
        opts.threads,
        opts.delay_ms
    );
    if cfg!(debug_assertions) {
        head.push_str("\n- NOTE: a debug build (cargo test): the figures mean nothing, this only checks that the benchmark runs");
    }
    rep.line(head);
    {
        // Which backend the engine actually chose.
        let stream = Stream::open(&opts.spec(&opts.model), opts.threads)
            .unwrap_or_else(|e| die(&format!("loading {}: {e}", opts.model.display())));
        rep.line(format!(
            "- engine backend in use: {} (load {:.1} ms)",
            stream.backend_name(),
            stream.model().load_time().as_secs_f64() * 1e3
        ));
    }
    for s in opts.sections.clone() {
        match s {
            1 => throughput(&opts, &audio, &mut rep),
            2 => latency(&opts, &audio, &mut rep),
            3 => callgrind(&opts, &mut rep),
            4 => memory(&opts, &mut rep),
            5 => scale(&opts, &audio, &mut rep),
            6 => reuse(&opts, &audio, &mut rep),
            7 => start(&opts, &mut rep),
            8 => live_run(&opts, &audio, &mut rep),
            9 => remote(&opts, &mut rep),
            _ => unreachable!(),
        }
    }
    println!("\n## Goals\n");
    for g in &rep.goals {
        println!("- {g}");
    }
    println!(
        "\n(total {:.0} s; goals are reported, not enforced)",
        started.elapsed().as_secs_f64()
    );
}
