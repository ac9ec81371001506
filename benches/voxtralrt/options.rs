// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The command line.

use std::path::{Path, PathBuf};

use gstvoxtralrt::engine::{Backend, ModelSpec};

use crate::{DEFAULT_DELAY_MS, DEFAULT_INTERVAL_MS};

#[derive(Debug, Clone)]
pub(crate) struct Opts {
    pub(crate) quick: bool,
    pub(crate) model: PathBuf,
    pub(crate) fixture: bool,
    backend: Backend,
    pub(crate) threads: u32,
    pub(crate) delay_ms: u32,
    pub(crate) sections: Vec<u8>,
    /// Throughput: seconds of audio per run, repetitions, decode intervals.
    pub(crate) audio_s: u64,
    pub(crate) reps: usize,
    /// Throughput: seconds of audio each path runs first, unmeasured.
    pub(crate) warmup_s: u64,
    pub(crate) throughput_intervals: Vec<u32>,
    /// Latency: seconds of live audio per decode interval.
    pub(crate) live_s: u64,
    pub(crate) intervals: Vec<u32>,
    /// CPU: the two input lengths whose difference is the steady state.
    pub(crate) callgrind_s: (u64, u64),
    /// Memory: seconds of audio in all, and where RSS is read.
    pub(crate) memory_s: u64,
    /// Scale: the pipeline counts and seconds of live audio each.
    pub(crate) scale: Vec<usize>,
    pub(crate) scale_s: u64,
    /// Live run: seconds of live audio.
    pub(crate) live_run_s: u64,
    /// Remote engine: a vLLM realtime server and its model; without one
    /// the section runs against a zero-cost double in a child process.
    pub(crate) vllm_url: Option<String>,
    pub(crate) vllm_model: String,
    /// Remote engine: element streams at once against the double, and
    /// sessions at once against the server.
    pub(crate) remote_streams: usize,
    pub(crate) remote_sessions: Vec<usize>,
}

const USAGE: &str = "\
voxtralrt benchmark: voxtralrttranscriber against the bare engine (issue 6)

usage: cargo bench --bench voxtralrt -- [OPTIONS]
       scripts/bench/voxtralrt [OPTIONS]

  --quick                small sizes (CI): 60 s of audio, 2 repetitions, 5 s live
                         runs, 5 min of audio for memory, up to 2 pipelines
  --model PATH           a Voxtral Realtime GGUF (default: the tiny fixture model,
                         which is not a speech model; the input is then irrelevant)
  --backend B            auto | cpu | cuda | vulkan (default auto; cuda and vulkan
                         need a build with that cargo feature)
  --threads N            CPU threads for the model (default 1)
  --delay MS             transcription delay (default 480)
  --sections LIST        which sections, e.g. 1,2 or throughput,latency
                         (1 throughput, 2 latency, 3 cpu, 4 memory, 5 scale,
                         6 reuse, 7 start, 8 live-run, 9 remote; default 1-6
                         with the fixture, 1,2,6 with --model)
  --audio-secs S         throughput input length (default 600, quick 60)
  --reps N               throughput repetitions (default 5, quick 2)
  --warmup-secs S        throughput warm-up per path and interval (default the
                         smaller of --audio-secs and 10)
  --throughput-intervals LIST   decode intervals for throughput (default 160,80)
  --live-secs S          live audio per decode interval (default 30, quick 5)
  --intervals LIST       decode intervals for latency (default 80,160,320,1000)
  --memory-secs S        audio for the memory section (default 10800, quick 300)
  --scale LIST           pipeline counts (default 1,2,4,8, quick 1,2)
  --scale-secs S         live audio per pipeline (default 20, quick 5)
  --live-run-secs S      the long live run's length (default 600, quick 5)
  --vllm-url URL         remote engine: a vLLM realtime server (default: a
                         zero-cost double in a child process, for the client's cost)
  --vllm-model NAME      its served model (default tiny-voxtral-realtime)
  --remote-streams N     element streams at once against the double (default 100, quick 4)
  --remote-sessions LIST sessions at once against --vllm-url (default 1,2,4,8,16)
  --help                 this text
";

fn parse_list<T: std::str::FromStr>(s: &str, what: &str) -> Vec<T> {
    s.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.trim()
                .parse()
                .unwrap_or_else(|_| die(&format!("{what}: cannot read {p:?}")))
        })
        .collect()
}

pub(crate) fn die(msg: &str) -> ! {
    eprintln!("voxtralrt bench: {msg}");
    std::process::exit(2)
}

fn fixture_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/voxtral-rt-tiny.gguf")
}

fn backend_of(nick: &str) -> Backend {
    match nick {
        "auto" => Backend::Auto,
        "cpu" => Backend::Cpu,
        "cuda" => Backend::Cuda,
        "vulkan" => Backend::Vulkan,
        other => die(&format!(
            "unknown backend {other:?} (auto, cpu, cuda, vulkan)"
        )),
    }
}

fn section_of(name: &str) -> u8 {
    match name {
        "1" | "throughput" => 1,
        "2" | "latency" => 2,
        "3" | "cpu" | "callgrind" => 3,
        "4" | "memory" => 4,
        "5" | "scale" => 5,
        "6" | "reuse" => 6,
        "7" | "start" => 7,
        "8" | "live-run" => 8,
        "9" | "remote" => 9,
        other => die(&format!("unknown section {other:?}")),
    }
}

/// What the command line asks for: a benchmark run or a child's part of one.
pub(crate) enum Mode {
    Bench(Opts),
    CallgrindChild {
        opts: Opts,
        element: bool,
        secs: u64,
    },
    MemoryChild {
        opts: Opts,
        secs: u64,
    },
    StartChild {
        opts: Opts,
    },
    DoubleChild,
}

pub(crate) fn parse_args(args: &[String]) -> Mode {
    let mut quick = false;
    let mut model = None;
    let mut backend = "auto".to_string();
    let mut threads = 1;
    let mut delay_ms = DEFAULT_DELAY_MS;
    let mut sections = None;
    let mut audio_s = None;
    let mut reps = None;
    let mut warmup_s = None;
    let mut throughput_intervals = None;
    let mut live_s = None;
    let mut intervals = None;
    let mut memory_s = None;
    let mut scale = None;
    let mut scale_s = None;
    let mut live_run_s = None;
    let mut vllm_url = None;
    let mut vllm_model = "tiny-voxtral-realtime".to_string();
    let mut remote_streams = None;
    let mut remote_sessions = None;
    let mut child = None;
    let mut under_cargo_bench = false;
    // `--option=value` is `--option value`.
    let args: Vec<String> = args
        .iter()
        .flat_map(|a| match a.split_once('=') {
            Some((opt, v)) if opt.starts_with("--") => vec![opt.to_string(), v.to_string()],
            _ => vec![a.clone()],
        })
        .collect();
    let mut it = args.iter();
    let value = |it: &mut std::slice::Iter<String>, flag: &str| -> String {
        it.next()
            .cloned()
            .unwrap_or_else(|| die(&format!("{flag} needs a value")))
    };
    while let Some(arg) = it.next() {
        let num = |s: String| -> u64 {
            s.parse()
                .unwrap_or_else(|_| die(&format!("{arg}: not a number: {s}")))
        };
        match arg.as_str() {
            // cargo bench passes --bench to harness = false targets;
            // cargo test runs them without it.
            "--bench" => under_cargo_bench = true,
            "--quick" => quick = true,
            "--help" | "-h" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--model" => model = Some(PathBuf::from(value(&mut it, arg))),
            "--backend" => backend = value(&mut it, arg),
            "--threads" => threads = num(value(&mut it, arg)) as u32,
            "--delay" => delay_ms = num(value(&mut it, arg)) as u32,
            "--sections" => {
                sections = Some(
                    value(&mut it, arg)
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(section_of)
                        .collect::<Vec<_>>(),
                )
            }
            "--audio-secs" => audio_s = Some(num(value(&mut it, arg))),
            "--reps" => reps = Some(num(value(&mut it, arg)) as usize),
            "--warmup-secs" => warmup_s = Some(num(value(&mut it, arg))),
            "--throughput-intervals" => {
                throughput_intervals = Some(parse_list(&value(&mut it, arg), arg))
            }
            "--live-secs" => live_s = Some(num(value(&mut it, arg))),
            "--intervals" => intervals = Some(parse_list(&value(&mut it, arg), arg)),
            "--memory-secs" => memory_s = Some(num(value(&mut it, arg))),
            "--scale" => scale = Some(parse_list(&value(&mut it, arg), arg)),
            "--scale-secs" => scale_s = Some(num(value(&mut it, arg))),
            "--live-run-secs" => live_run_s = Some(num(value(&mut it, arg))),
            "--callgrind-child" => {
                let kind = value(&mut it, arg);
                let secs = num(value(&mut it, arg));
                child = Some((kind, secs));
            }
            "--memory-child" => child = Some(("memory".into(), num(value(&mut it, arg)))),
            "--start-child" => child = Some(("start".into(), 0)),
            "--double-child" => child = Some(("double".into(), 0)),
            "--vllm-url" => vllm_url = Some(value(&mut it, arg)),
            "--vllm-model" => vllm_model = value(&mut it, arg),
            "--remote-streams" => remote_streams = Some(num(value(&mut it, arg)) as usize),
            "--remote-sessions" => remote_sessions = Some(parse_list(&value(&mut it, arg), arg)),
            // Filters cargo may pass on (`cargo bench foo`) mean nothing here.
            other if !other.starts_with('-') => {}
            other => die(&format!("unknown option {other} (see --help)")),
        }
    }
    // `cargo test --all-targets` (CI) runs this binary without --bench:
    // that is the quick check that it works.
    if !under_cargo_bench && args.is_empty() {
        eprintln!("voxtralrt bench: no arguments (cargo test?): quick mode");
        quick = true;
    }
    let fixture = model.is_none();
    let model = model.unwrap_or_else(fixture_model);
    if !model.is_file() {
        die(&format!("no model file at {}", model.display()));
    }
    let model = model.canonicalize().unwrap_or(model);
    if gstvoxtralrt::voxtral::validate_delay(delay_ms).is_err() {
        die(&format!(
            "--delay {delay_ms}: a multiple of 80 up to 1200, or 2400"
        ));
    }
    let default_sections = if fixture {
        vec![1, 2, 3, 4, 5, 6]
    } else {
        vec![1, 2, 6]
    };
    let audio_s = audio_s.unwrap_or(if quick { 60 } else { 600 });
    let opts = Opts {
        quick,
        model,
        fixture,
        backend: backend_of(&backend),
        threads,
        delay_ms,
        sections: sections.unwrap_or(default_sections),
        audio_s,
        warmup_s: warmup_s.unwrap_or(audio_s.min(10)),
        reps: reps.unwrap_or(if quick { 2 } else { 5 }).max(1),
        throughput_intervals: throughput_intervals.unwrap_or(if quick {
            vec![DEFAULT_INTERVAL_MS]
        } else {
            vec![DEFAULT_INTERVAL_MS, 80]
        }),
        live_s: live_s.unwrap_or(if quick { 5 } else { 30 }),
        intervals: intervals.unwrap_or_else(|| vec![80, 160, 320, 1000]),
        callgrind_s: if quick { (2, 6) } else { (5, 25) },
        memory_s: memory_s.unwrap_or(if quick { 300 } else { 3 * 3600 }),
        scale: scale.unwrap_or_else(|| if quick { vec![1, 2] } else { vec![1, 2, 4, 8] }),
        scale_s: scale_s.unwrap_or(if quick { 5 } else { 20 }),
        live_run_s: live_run_s.unwrap_or(if quick { 5 } else { 600 }),
        vllm_url,
        vllm_model,
        remote_streams: remote_streams.unwrap_or(if quick { 4 } else { 100 }),
        remote_sessions: remote_sessions.unwrap_or_else(|| vec![1, 2, 4, 8, 16]),
    };
    match child {
        None => Mode::Bench(opts),
        Some((kind, secs)) if kind == "memory" => Mode::MemoryChild { opts, secs },
        Some((kind, _)) if kind == "start" => Mode::StartChild { opts },
        Some((kind, _)) if kind == "double" => Mode::DoubleChild,
        Some((kind, secs)) if kind == "element" || kind == "engine" => Mode::CallgrindChild {
            opts,
            element: kind == "element",
            secs,
        },
        Some((kind, _)) => die(&format!("unknown child kind {kind}")),
    }
}

impl Opts {
    pub(crate) fn backend_nick(&self) -> &'static str {
        self.backend.nick()
    }

    pub(crate) fn spec(&self, path: &Path) -> ModelSpec {
        ModelSpec {
            backend: self.backend,
            ..ModelSpec::new(path)
        }
    }

    /// The arguments that make a child process use the same model and
    /// settings as this one.
    pub(crate) fn child_args(&self) -> Vec<String> {
        let mut args = vec![
            "--backend".into(),
            self.backend_nick().into(),
            "--threads".into(),
            self.threads.to_string(),
            "--delay".into(),
            self.delay_ms.to_string(),
        ];
        if !self.fixture {
            args.push("--model".into());
            args.push(self.model.display().to_string());
        }
        args
    }
}
