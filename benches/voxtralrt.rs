// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! voxtralrttranscriber against its floor, the same engine driven directly
//! with no GStreamer around it (issue 6). A plain binary (`harness = false`):
//!
//! ```text
//! cargo bench --bench voxtralrt                 # full run (about 10 minutes, fixture)
//! cargo bench --bench voxtralrt -- --quick      # quick mode (about a minute)
//! scripts/bench --model voxtral.gguf --backend cuda
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
//! 6. model reuse: READY to first word, first and second start.
//!
//! CI runs it through `cargo test --all-targets`, which starts it without
//! arguments (no `--bench`): that is quick mode, in a debug build.
//!
//! The figures go in docs/benchmarks.md; this binary checks no goal itself
//! (it only fails when a pipeline fails), it prints them with the figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;
use gstvoxtralrt::engine::{Backend, ModelPool, ModelSpec, Stream, StreamConfig};

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

// ---------------------------------------------------------------------------
// Options

#[derive(Debug, Clone)]
struct Opts {
    quick: bool,
    model: PathBuf,
    fixture: bool,
    backend: Backend,
    threads: u32,
    delay_ms: u32,
    sections: Vec<u8>,
    /// Throughput: seconds of audio per run, repetitions, decode intervals.
    audio_s: u64,
    reps: usize,
    throughput_intervals: Vec<u32>,
    /// Latency: seconds of live audio per decode interval.
    live_s: u64,
    intervals: Vec<u32>,
    /// CPU: the two input lengths whose difference is the steady state.
    callgrind_s: (u64, u64),
    /// Memory: seconds of audio in all, and where RSS is read.
    memory_s: u64,
    /// Scale: the pipeline counts and seconds of live audio each.
    scale: Vec<usize>,
    scale_s: u64,
}

const USAGE: &str = "\
voxtralrt benchmark: voxtralrttranscriber against the bare engine (issue 6)

usage: cargo bench --bench voxtralrt -- [OPTIONS]
       scripts/bench [OPTIONS]

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
                         6 reuse; default all with the fixture, 1,2,6 with --model)
  --audio-secs S         throughput input length (default 600, quick 60)
  --reps N               throughput repetitions (default 5, quick 2)
  --throughput-intervals LIST   decode intervals for throughput (default 160,80)
  --live-secs S          live audio per decode interval (default 30, quick 5)
  --intervals LIST       decode intervals for latency (default 80,160,320,1000)
  --memory-secs S        audio for the memory section (default 10800, quick 300)
  --scale LIST           pipeline counts (default 1,2,4,8, quick 1,2)
  --scale-secs S         live audio per pipeline (default 20, quick 5)
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

fn die(msg: &str) -> ! {
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
        other => die(&format!("unknown section {other:?}")),
    }
}

/// What the command line asks for: a benchmark run or a child's part of one.
enum Mode {
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
}

fn parse_args(args: &[String]) -> Mode {
    let mut quick = false;
    let mut model = None;
    let mut backend = "auto".to_string();
    let mut threads = 1;
    let mut delay_ms = DEFAULT_DELAY_MS;
    let mut sections = None;
    let mut audio_s = None;
    let mut reps = None;
    let mut throughput_intervals = None;
    let mut live_s = None;
    let mut intervals = None;
    let mut memory_s = None;
    let mut scale = None;
    let mut scale_s = None;
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
            "--throughput-intervals" => {
                throughput_intervals = Some(parse_list(&value(&mut it, arg), arg))
            }
            "--live-secs" => live_s = Some(num(value(&mut it, arg))),
            "--intervals" => intervals = Some(parse_list(&value(&mut it, arg), arg)),
            "--memory-secs" => memory_s = Some(num(value(&mut it, arg))),
            "--scale" => scale = Some(parse_list(&value(&mut it, arg), arg)),
            "--scale-secs" => scale_s = Some(num(value(&mut it, arg))),
            "--callgrind-child" => {
                let kind = value(&mut it, arg);
                let secs = num(value(&mut it, arg));
                child = Some((kind, secs));
            }
            "--memory-child" => child = Some(("memory".into(), num(value(&mut it, arg)))),
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
    if gstvoxtralrt::engine::validate_delay(delay_ms).is_err() {
        die(&format!(
            "--delay {delay_ms}: a multiple of 80 up to 1200, or 2400"
        ));
    }
    let default_sections = if fixture {
        vec![1, 2, 3, 4, 5, 6]
    } else {
        vec![1, 2, 6]
    };
    let opts = Opts {
        quick,
        model,
        fixture,
        backend: backend_of(&backend),
        threads,
        delay_ms,
        sections: sections.unwrap_or(default_sections),
        audio_s: audio_s.unwrap_or(if quick { 60 } else { 600 }),
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
    };
    match child {
        None => Mode::Bench(opts),
        Some((kind, secs)) if kind == "memory" => Mode::MemoryChild { opts, secs },
        Some((kind, secs)) if kind == "element" || kind == "engine" => Mode::CallgrindChild {
            opts,
            element: kind == "element",
            secs,
        },
        Some((kind, _)) => die(&format!("unknown child kind {kind}")),
    }
}

impl Opts {
    fn backend_nick(&self) -> &'static str {
        self.backend.nick()
    }

    fn spec(&self, path: &Path) -> ModelSpec {
        ModelSpec {
            path: path.to_path_buf(),
            backend: self.backend,
            device: None,
        }
    }

    /// The arguments that make a child process use the same model and
    /// settings as this one.
    fn child_args(&self) -> Vec<String> {
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

// ---------------------------------------------------------------------------
// Input audio

/// The input: the bundled speech sample (5.8 s), padded with silence to
/// whole 100 ms buffers and looped. The fixture ignores what it hears; a real
/// model gets speech.
struct Audio {
    samples: Vec<f32>,
    /// The same audio as buffers of `BUFFER_SAMPLES` (shared memory: a push
    /// copies only the buffer's metadata).
    buffers: Vec<gst::Buffer>,
    live_buffers: Vec<gst::Buffer>,
}

impl Audio {
    fn load() -> Audio {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/data/sample.wav");
        let mut samples = std::fs::read(&path)
            .ok()
            .and_then(|b| wav_s16_mono(&b))
            .unwrap_or_else(|| {
                eprintln!("(no {}: using a 440 Hz sine)", path.display());
                (0..5 * RATE as usize)
                    .map(|i| 0.5 * (i as f32 * 440.0 * std::f32::consts::TAU / RATE as f32).sin())
                    .collect()
            });
        let whole = samples.len().div_ceil(BUFFER_SAMPLES) * BUFFER_SAMPLES;
        samples.resize(whole, 0.0);
        let to_buffers = |n: usize| {
            samples
                .chunks(n)
                .map(|c| {
                    gst::Buffer::from_slice(
                        c.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
                    )
                })
                .collect()
        };
        Audio {
            buffers: to_buffers(BUFFER_SAMPLES),
            live_buffers: to_buffers(LIVE_BUFFER_SAMPLES),
            samples,
        }
    }

    /// Samples of the `i`th 100 ms buffer.
    fn chunk(&self, i: usize) -> &[f32] {
        self.chunk_of(i, BUFFER_SAMPLES)
    }

    /// Samples of the `i`th piece of `len` samples (`len` divides 1600).
    fn chunk_of(&self, i: usize, len: usize) -> &[f32] {
        let n = self.samples.len() / len;
        let at = (i % n) * len;
        &self.samples[at..at + len]
    }

    /// The `i`th buffer (100 ms, or 20 ms if `live`), stamped from 0.
    fn buffer(&self, i: usize, live: bool) -> gst::Buffer {
        let (set, n) = if live {
            (&self.live_buffers, LIVE_BUFFER_SAMPLES as u64)
        } else {
            (&self.buffers, BUFFER_SAMPLES as u64)
        };
        let mut b = set[i % set.len()].copy();
        {
            let b = b.get_mut().expect("a fresh copy");
            b.set_pts(gst::ClockTime::from_nseconds(i as u64 * n * SECOND / RATE));
            b.set_duration(gst::ClockTime::from_nseconds(n * SECOND / RATE));
        }
        b
    }
}

/// The samples of a 16-bit mono PCM WAV file.
fn wav_s16_mono(bytes: &[u8]) -> Option<Vec<f32>> {
    if bytes.get(..4)? != b"RIFF" || bytes.get(8..12)? != b"WAVE" {
        return None;
    }
    let mut at = 12;
    let mut format_ok = false;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().ok()?) as usize;
        let body = bytes.get(at + 8..(at + 8 + len).min(bytes.len()))?;
        if id == b"fmt " && body.len() >= 16 {
            let u16_at = |i: usize| u16::from_le_bytes([body[i], body[i + 1]]);
            let rate = u32::from_le_bytes(body.get(4..8)?.try_into().ok()?);
            format_ok = u16_at(0) == 1 && u16_at(2) == 1 && rate == RATE as u32 && u16_at(14) == 16;
        } else if id == b"data" && format_ok {
            return Some(
                body.chunks_exact(2)
                    .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
                    .collect(),
            );
        }
        at += 8 + len + (len & 1);
    }
    None
}

// ---------------------------------------------------------------------------
// Measuring helpers

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    let m = s.len() / 2;
    if s.len() % 2 == 1 {
        s[m]
    } else {
        (s[m - 1] + s[m]) / 2.0
    }
}

/// The `p`th percentile (nearest rank) of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// CPU time (user + system) of this process so far, all threads.
fn process_cpu() -> Duration {
    let u = usage();
    u.user + u.sys
}

/// What getrusage(2) says about this process, all threads (finished ones
/// too).
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    user: Duration,
    sys: Duration,
    /// Voluntary context switches: a thread waited (a lock, a condvar).
    voluntary_switches: u64,
    /// Involuntary ones: a thread was preempted.
    involuntary_switches: u64,
}

impl std::ops::Sub for Usage {
    type Output = Usage;
    fn sub(self, o: Usage) -> Usage {
        Usage {
            user: self.user.saturating_sub(o.user),
            sys: self.sys.saturating_sub(o.sys),
            voluntary_switches: self.voluntary_switches - o.voluntary_switches,
            involuntary_switches: self.involuntary_switches - o.involuntary_switches,
        }
    }
}

fn usage() -> Usage {
    #[repr(C)]
    struct Timeval {
        sec: std::ffi::c_long,
        usec: std::ffi::c_long,
    }
    /// `struct rusage` of Linux: two times, then 14 longs.
    #[repr(C)]
    struct RUsage {
        utime: Timeval,
        stime: Timeval,
        rest: [std::ffi::c_long; 14],
    }
    extern "C" {
        fn getrusage(who: std::ffi::c_int, usage: *mut RUsage) -> std::ffi::c_int;
    }
    let mut ru = std::mem::MaybeUninit::<RUsage>::zeroed();
    // SAFETY: RUSAGE_SELF (0) and a struct of the kernel's layout, which
    // getrusage fills.
    let ru = unsafe {
        if getrusage(0, ru.as_mut_ptr()) != 0 {
            return Usage::default();
        }
        ru.assume_init()
    };
    let time = |t: &Timeval| Duration::new(t.sec as u64, t.usec as u32 * 1000);
    Usage {
        user: time(&ru.utime),
        sys: time(&ru.stime),
        // ru_nvcsw and ru_nivcsw are the last two longs.
        voluntary_switches: ru.rest[12] as u64,
        involuntary_switches: ru.rest[13] as u64,
    }
}

/// VmRSS and VmHWM of this process, in KiB.
fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Nanoseconds as whole milliseconds (never "-0").
fn ms(ns: f64) -> String {
    format!("{:.0}", (ns / MS as f64).round() + 0.0)
}

// ---------------------------------------------------------------------------
// Pipelines

fn init_gst() {
    gst::init().expect("initialising GStreamer");
    gstvoxtralrt::plugin_register_static().expect("registering the plugin");
}

/// One appsrc ! voxtralrttranscriber ! fakesink pipeline.
struct Rig {
    pipeline: gst::Pipeline,
    src: gst::Element,
    transcriber: gst::Element,
}

impl Rig {
    fn new(opts: &Opts, model: &Path, interval_ms: u32, live: bool) -> Rig {
        let pipeline = gst::Pipeline::new();
        let src = gst::ElementFactory::make("appsrc")
            .property("caps", CAPS.parse::<gst::Caps>().expect("caps"))
            .property("format", gst::Format::Time)
            .property("is-live", live)
            .property("block", !live)
            .property(
                "min-latency",
                if live {
                    (LIVE_BUFFER_SAMPLES as u64 * SECOND / RATE) as i64
                } else {
                    0i64
                },
            )
            .build()
            .expect("appsrc (gst-plugins-base)");
        let transcriber = gst::ElementFactory::make("voxtralrttranscriber")
            .property("model-path", model.display().to_string())
            .property("threads", opts.threads)
            .property("delay", opts.delay_ms)
            .property("decode-interval", interval_ms)
            .property_from_str("backend", opts.backend_nick())
            .build()
            .expect("the voxtralrttranscriber element");
        let sink = gst::ElementFactory::make("fakesink")
            .property("sync", false)
            .property("async", !live)
            .build()
            .expect("fakesink");
        pipeline
            .add_many([&src, &transcriber, &sink])
            .expect("adding elements");
        gst::Element::link_many([&src, &transcriber, &sink]).expect("linking");
        Rig {
            pipeline,
            src,
            transcriber,
        }
    }

    fn set(&self, state: gst::State) {
        if let Err(e) = self.pipeline.set_state(state) {
            let detail = self
                .pipeline
                .bus()
                .and_then(|b| b.pop_filtered(&[gst::MessageType::Error]))
                .map(|m| format!("{m:?}"))
                .unwrap_or_default();
            die(&format!("pipeline to {state:?}: {e} {detail}"));
        }
    }

    /// Waits for EOS; dies on an error or after `timeout`.
    fn wait_eos(&self, timeout: Duration) {
        let bus = self.pipeline.bus().expect("a pipeline has a bus");
        let msg = bus.timed_pop_filtered(
            gst::ClockTime::from_nseconds(timeout.as_nanos() as u64),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        );
        match msg.as_ref().map(|m| m.view()) {
            Some(gst::MessageView::Eos(_)) => {}
            Some(gst::MessageView::Error(e)) => {
                die(&format!("pipeline error: {} ({:?})", e.error(), e.debug()))
            }
            _ => die(&format!("pipeline stalled for {timeout:?}")),
        }
    }

    fn stats(&self) -> gst::Structure {
        self.transcriber.property::<gst::Structure>("stats")
    }

    /// Pushes `n` buffers of non-live audio, then EOS, from a new thread.
    fn feed(&self, audio: &Arc<Audio>, n: usize) -> std::thread::JoinHandle<()> {
        let src = self.src.clone();
        let audio = audio.clone();
        std::thread::spawn(move || {
            for i in 0..n {
                let flow =
                    src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&audio.buffer(i, false)]);
                if flow != gst::FlowReturn::Ok {
                    return;
                }
            }
            let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        })
    }

    /// Counts the words leaving the transcriber and the time of the first.
    fn count_words(&self) -> Arc<Mutex<(u64, Option<Instant>)>> {
        let seen = Arc::new(Mutex::new((0u64, None)));
        let s = seen.clone();
        self.transcriber
            .static_pad("src")
            .expect("src pad")
            .add_probe(gst::PadProbeType::BUFFER, move |_, _| {
                let mut s = s.lock().unwrap();
                s.0 += 1;
                s.1.get_or_insert_with(Instant::now);
                gst::PadProbeReturn::Ok
            });
        seen
    }
}

/// Marks the start of a measured run for callgrind (`--zero-before`): the
/// counts from start-up (GStreamer's registry, plugin and model loading) are
/// dropped, whatever they were this time. Call it on a thread that does none
/// of the measured work: callgrind misattributes (not miscounts) the cost of
/// frames that are active when the counters are zeroed.
#[no_mangle]
#[inline(never)]
pub extern "C" fn voxtralrt_bench_measure_start() {
    // Bodies that differ, so that the linker cannot fold the two markers.
    // black_box: calls to a function without effects would be dropped.
    std::hint::black_box(MEASURING.swap(true, std::sync::atomic::Ordering::SeqCst));
}

/// Marks the end of a measured run for callgrind (`--dump-before`).
#[no_mangle]
#[inline(never)]
pub extern "C" fn voxtralrt_bench_measure_end() {
    std::hint::black_box(MEASURING.swap(false, std::sync::atomic::Ordering::SeqCst));
}

static MEASURING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One non-live run of the element: wall time from PLAYING to EOS (the
/// model loads in READY, before the clock starts).
struct Run {
    wall: Duration,
    usage: Usage,
    words: u64,
}

fn run_element(opts: &Opts, audio: &Arc<Audio>, interval_ms: u32, secs: u64) -> Run {
    let rig = Rig::new(opts, &opts.model, interval_ms, false);
    let words = rig.count_words();
    rig.set(gst::State::Ready);
    let n = (secs * RATE) as usize / BUFFER_SAMPLES;
    voxtralrt_bench_measure_start();
    let usage0 = usage();
    let t0 = Instant::now();
    rig.set(gst::State::Playing);
    let feeder = rig.feed(audio, n);
    rig.wait_eos(Duration::from_secs(secs.max(60) * 10));
    let wall = t0.elapsed();
    let usage = usage() - usage0;
    voxtralrt_bench_measure_end();
    rig.set(gst::State::Null);
    feeder.join().expect("feeder thread");
    let words = words.lock().unwrap().0;
    Run { wall, usage, words }
}

/// One run of the bare engine on the same input, fed in the same 100 ms
/// pieces. The model is loaded first, outside the clock; the work runs on a
/// thread of its own, as the element's does (and so that callgrind's
/// counters are zeroed while none of its frames is active).
fn run_engine(opts: &Opts, audio: &Audio, interval_ms: u32, secs: u64) -> Run {
    let mut stream = Stream::open(&opts.spec(&opts.model), opts.threads)
        .unwrap_or_else(|e| die(&format!("opening the engine stream: {e}")));
    let n = (secs * RATE) as usize / BUFFER_SAMPLES;
    let config = StreamConfig {
        delay_ms: opts.delay_ms,
        decode_interval_ms: interval_ms,
    };
    voxtralrt_bench_measure_start();
    let usage0 = usage();
    let t0 = Instant::now();
    let text = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                stream
                    .begin(config)
                    .unwrap_or_else(|e| die(&format!("starting the engine stream: {e}")));
                let mut text = String::new();
                for i in 0..n {
                    for update in stream
                        .feed(audio.chunk(i))
                        .unwrap_or_else(|e| die(&format!("engine feed: {e}")))
                    {
                        text.push_str(&update.text);
                    }
                }
                let last = stream
                    .finalize()
                    .unwrap_or_else(|e| die(&format!("engine finalize: {e}")));
                text.push_str(&last.text);
                text
            })
            .join()
            .expect("the engine thread")
    });
    let wall = t0.elapsed();
    let usage = usage() - usage0;
    voxtralrt_bench_measure_end();
    Run {
        wall,
        usage,
        words: text.split_whitespace().count() as u64,
    }
}

// ---------------------------------------------------------------------------
// Live pipelines

/// What a live run saw: input buffers (end on the input timeline, running
/// time of arrival at the transcriber) and words (pts, end, running time of
/// departure from its src pad).
#[derive(Default)]
struct LiveLog {
    arrivals: Vec<(u64, u64)>,
    words: Vec<(u64, u64, u64)>,
    eos_at: Option<u64>,
}

struct LiveResult {
    /// Per word: departure - arrival of the audio at the word's end - delay.
    latencies: Vec<f64>,
    /// Words that left after the pipeline's announced latency from their
    /// start (a syncing sink would drop them as late).
    late: usize,
    /// Words left at EOS (by finalize), not counted.
    at_eos: usize,
    rtf: f64,
}

impl LiveResult {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.latencies.clone();
        s.sort_by(f64::total_cmp);
        s
    }
}

/// A live pipeline: an appsrc paced by the pipeline clock (each 20 ms
/// buffer is pushed when its capture would end), probes on both pads.
struct LiveRig {
    rig: Rig,
    log: Arc<Mutex<LiveLog>>,
}

impl LiveRig {
    fn new(opts: &Opts, interval_ms: u32) -> LiveRig {
        let rig = Rig::new(opts, &opts.model, interval_ms, true);
        let log = Arc::new(Mutex::new(LiveLog::default()));
        let now = {
            let t = rig.transcriber.downgrade();
            move || {
                t.upgrade()
                    .and_then(|t| t.current_running_time())
                    .map_or(0, gst::ClockTime::nseconds)
            }
        };
        let (l, now_in) = (log.clone(), now.clone());
        rig.transcriber
            .static_pad("sink")
            .expect("sink pad")
            .add_probe(
                gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
                move |_, info| {
                    let t = now_in();
                    if let Some(b) = info.buffer() {
                        let end = b.pts().map_or(0, |p| p.nseconds())
                            + b.duration().map_or(0, |d| d.nseconds());
                        l.lock().unwrap().arrivals.push((end, t));
                    } else if let Some(e) = info.event() {
                        if e.type_() == gst::EventType::Eos {
                            l.lock().unwrap().eos_at = Some(t);
                        }
                    }
                    gst::PadProbeReturn::Ok
                },
            );
        let l = log.clone();
        rig.transcriber
            .static_pad("src")
            .expect("src pad")
            .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
                let t = now();
                if let Some(b) = info.buffer() {
                    let pts = b.pts().map_or(0, |p| p.nseconds());
                    let end = pts + b.duration().map_or(0, |d| d.nseconds());
                    l.lock().unwrap().words.push((pts, end, t));
                }
                gst::PadProbeReturn::Ok
            });
        LiveRig { rig, log }
    }

    /// Paces `secs` of audio into the appsrc in real time, from a new thread
    /// that starts once the pipeline runs.
    fn pace(&self, audio: &Arc<Audio>, secs: u64) -> std::thread::JoinHandle<()> {
        let src = self.rig.src.clone();
        let pipeline = self.rig.pipeline.clone();
        let audio = audio.clone();
        std::thread::spawn(move || {
            let (clock, start) = loop {
                if let (Some(clock), Some(now)) =
                    (pipeline.clock(), pipeline.current_running_time())
                {
                    break (clock, now);
                }
                std::thread::sleep(Duration::from_millis(1));
            };
            let base = pipeline.base_time().unwrap_or(gst::ClockTime::ZERO);
            let step = LIVE_BUFFER_SAMPLES as u64 * SECOND / RATE;
            let n = secs * SECOND / step;
            for i in 0..n as usize {
                let mut buffer = audio.buffer(i, true);
                let pts = start.nseconds() + i as u64 * step;
                buffer
                    .get_mut()
                    .expect("a fresh buffer")
                    .set_pts(gst::ClockTime::from_nseconds(pts));
                let _ = clock
                    .new_single_shot_id(base + gst::ClockTime::from_nseconds(pts + step))
                    .wait();
                if src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer])
                    != gst::FlowReturn::Ok
                {
                    return;
                }
            }
            let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        })
    }

    fn result(&self, opts: &Opts) -> LiveResult {
        let log = self.log.lock().unwrap();
        let mut arrivals = log.arrivals.clone();
        arrivals.sort();
        let arrival_of = |t: u64| {
            let i = arrivals.partition_point(|&(end, _)| end < t);
            arrivals.get(i).or(arrivals.last()).map_or(0, |a| a.1)
        };
        let delay = u64::from(opts.delay_ms) * MS;
        let budget = u64::from(self.rig.transcriber.property::<u32>("latency")) * MS
            + LIVE_BUFFER_SAMPLES as u64 * SECOND / RATE;
        let eos = log.eos_at.unwrap_or(u64::MAX);
        let mut latencies = Vec::new();
        let (mut late, mut at_eos) = (0, 0);
        for &(pts, end, left) in &log.words {
            if left >= eos {
                at_eos += 1;
                continue;
            }
            latencies.push(left as f64 - arrival_of(end) as f64 - delay as f64);
            if left > pts + budget {
                late += 1;
            }
        }
        let rtf = self
            .rig
            .stats()
            .get::<f64>("real-time-factor")
            .unwrap_or(f64::NAN);
        LiveResult {
            latencies,
            late,
            at_eos,
            rtf,
        }
    }
}

/// Runs `n` live pipelines at once for `secs`; returns each one's result
/// and the process CPU time they took.
fn run_live(
    opts: &Opts,
    audio: &Arc<Audio>,
    interval_ms: u32,
    secs: u64,
    n: usize,
) -> (Vec<LiveResult>, Duration) {
    let rigs: Vec<LiveRig> = (0..n).map(|_| LiveRig::new(opts, interval_ms)).collect();
    for r in &rigs {
        // Load every model before any clock starts.
        r.rig.set(gst::State::Ready);
    }
    let cpu0 = process_cpu();
    let pacers: Vec<_> = rigs
        .iter()
        .map(|r| {
            r.rig.set(gst::State::Playing);
            r.pace(audio, secs)
        })
        .collect();
    for r in &rigs {
        r.rig.wait_eos(Duration::from_secs(secs * 3 + 60));
    }
    let cpu = process_cpu() - cpu0;
    let results = rigs.iter().map(|r| r.result(opts)).collect();
    for r in &rigs {
        r.rig.set(gst::State::Null);
    }
    for p in pacers {
        p.join().expect("pacer thread");
    }
    (results, cpu)
}

// ---------------------------------------------------------------------------
// Sections

struct Report {
    text: String,
    goals: Vec<String>,
}

impl Report {
    fn line(&mut self, s: impl AsRef<str>) {
        self.text.push_str(s.as_ref());
        self.text.push('\n');
        println!("{}", s.as_ref());
    }

    fn goal(&mut self, s: String) {
        println!("goal: {s}");
        self.goals.push(s);
    }
}

fn progress(s: &str) {
    eprintln!("[bench] {s}");
}

fn throughput(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
    rep.line(format!(
        "\n## 1. Throughput overhead ({} s of audio, non-live, repetitions: {}, threads: {})\n",
        opts.audio_s, opts.reps, opts.threads
    ));
    rep.line("| decode interval | engine wall (median, min-max) | element wall (median, min-max) | ratio element/engine (median, min-max) | engine RTF | element RTF | CPU ms per audio s, engine / element (of which kernel) | context switches per audio s, engine / element | words: engine / element |");
    rep.line("|---|---|---|---|---|---|---|---|---|");
    for &interval in &opts.throughput_intervals {
        // Warm up both paths (page cache, pool, allocator).
        let warm = opts.audio_s.min(10);
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

fn latency(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
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

/// Instructions counted by callgrind for one child run, by category.
#[derive(Debug, Default, Clone)]
struct Counts {
    total: f64,
    ours: f64,
    engine: f64,
    gstreamer: f64,
    rust_std: f64,
    system: f64,
    harness: f64,
    other: f64,
}

impl Counts {
    fn minus(&self, o: &Counts, per: f64) -> Counts {
        let d = |a: f64, b: f64| (a - b) / per;
        Counts {
            total: d(self.total, o.total),
            ours: d(self.ours, o.ours),
            engine: d(self.engine, o.engine),
            gstreamer: d(self.gstreamer, o.gstreamer),
            rust_std: d(self.rust_std, o.rust_std),
            system: d(self.system, o.system),
            harness: d(self.harness, o.harness),
            other: d(self.other, o.other),
        }
    }
}

/// Puts one function of callgrind_annotate's output (`file:function`) in a
/// category, by its object file and its (demangled) name.
fn categorize(c: &mut Counts, ir: f64, func: &str, object: &str) {
    let (file, f) = func.split_once(':').unwrap_or(("", func));
    let obj = object.rsplit('/').next().unwrap_or(object);
    let in_lib = |prefixes: &[&str]| prefixes.iter().any(|p| obj.starts_with(p));
    let rust_std = (f.starts_with("std::") && !f.contains('('))
        || [
            "core::",
            "alloc::",
            "<core::",
            "<alloc::",
            "<std::",
            "__rust",
            "__rdl",
            "hashbrown",
        ]
        .iter()
        .any(|p| f.starts_with(p));
    let slot = if in_lib(&[
        "libgst",
        "libglib",
        "libgobject",
        "libgmodule",
        "libgio",
        "liborc",
    ]) {
        &mut c.gstreamer
    } else if in_lib(&[
        "libc.",
        "libm.",
        "ld-linux",
        "libstdc++",
        "libgcc",
        "libgomp",
        "vgpreload",
    ]) || (obj.is_empty() && file.starts_with("./"))
    {
        &mut c.system
    } else if f.contains("gstvoxtralrt::") {
        &mut c.ours
    } else if f.contains("voxtralrt::") {
        &mut c.harness
    } else if f.contains("gstreamer::")
        || f.contains("gstreamer_base::")
        || f.contains("gstreamer_audio::")
        || f.contains("glib::")
    {
        &mut c.gstreamer
    } else if rust_std {
        &mut c.rust_std
    } else if !obj.is_empty() {
        // The rest of this binary is transcribe.cpp and ggml (C and C++).
        &mut c.engine
    } else {
        &mut c.other
    };
    *slot += ir;
}

fn read_counts(out_file: &Path) -> Option<(Counts, Vec<(f64, String)>)> {
    let annotated = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--threshold=100", "--auto=no"])
        .arg(out_file)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&annotated.stdout);
    let mut counts = Counts::default();
    let mut rows = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((num, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(ir) = num.replace(',', "").parse::<f64>() else {
            continue;
        };
        let rest = rest.trim();
        // "(12.34%)  file:function [object]" in recent versions.
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or(r, |(_, r)| r).trim(),
            None => rest,
        };
        if rest.starts_with("PROGRAM TOTALS") {
            counts.total = ir;
            continue;
        }
        let (func, object) = match rest.rsplit_once(" [") {
            Some((f, o)) => (f, o.trim_end_matches(']')),
            None => (rest, ""),
        };
        categorize(&mut counts, ir, func, object);
        rows.push((
            ir,
            format!("{func} [{}]", object.rsplit('/').next().unwrap_or("")),
        ));
    }
    (counts.total > 0.0).then_some((counts, rows))
}

fn callgrind(opts: &Opts, rep: &mut Report) {
    rep.line("\n## 3. CPU outside the engine (callgrind instruction counts)\n");
    let have = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("callgrind_annotate")
            .arg("--version")
            .output()
            .is_ok();
    if !have {
        rep.line("skipped: valgrind (callgrind, callgrind_annotate) is not installed.");
        return;
    }
    let exe = std::env::current_exe().expect("this binary's path");
    let dir = std::env::temp_dir().join(format!("voxtralrt-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let (short, long) = opts.callgrind_s;
    let run = |kind: &str, secs: u64| -> Option<(Counts, Vec<(f64, String)>)> {
        progress(&format!("callgrind: {kind}, {secs} s of audio"));
        let out = dir.join(format!("callgrind.{kind}.{secs}.out"));
        let status = Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "-q",
                "--zero-before=voxtralrt_bench_measure_start",
                "--dump-before=voxtralrt_bench_measure_end",
            ])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe)
            .args(["--callgrind-child", kind, &secs.to_string()])
            .args(opts.child_args())
            .status()
            .ok()?;
        if !status.success() {
            eprintln!("callgrind child {kind} {secs} failed: {status}");
            return None;
        }
        // Part 1 is the dump at the end of the measured run.
        read_counts(&out.with_extension("out.1"))
    };
    let (Some(el_s), Some(el_l), Some(en_s), Some(en_l)) = (
        run("element", short),
        run("element", long),
        run("engine", short),
        run("engine", long),
    ) else {
        rep.line("skipped: a callgrind run failed (see stderr).");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let per = (long - short) as f64;
    let el = el_l.0.minus(&el_s.0, per);
    let en = en_l.0.minus(&en_s.0, per);
    let outside = el.total - en.total;
    rep.line(format!(
        "Counted only during each run (from READY, the model loaded, to EOS: callgrind --zero-before/--dump-before on two \
         marker functions of this binary), then steady state: (count for {long} s of audio - count for {short} s) / {} s, \
         so that the fixed cost of a run (going to PLAYING, starting and finishing the stream) cancels out too. \
         Same input, decode interval {DEFAULT_INTERVAL_MS} ms, threads {}.\n",
        long - short,
        opts.threads
    ));
    // (Rounding -0.001 shows as 0.00, not -0.00.)
    let mi = |v: f64| format!("{:.2}", (v / 1e6 * 100.0).round() / 100.0 + 0.0);
    rep.line("| per second of audio (millions of instructions) | element pipeline | bare engine |");
    rep.line("|---|---|---|");
    for (name, a, b) in [
        ("total", el.total, en.total),
        (
            "engine (transcribe.cpp, ggml; C/C++ code in this binary)",
            el.engine,
            en.engine,
        ),
        (
            "our crate, self cost (gstvoxtralrt::, incl. its engine layer)",
            el.ours,
            en.ours,
        ),
        (
            "GStreamer / GLib (C libraries and gstreamer-rs)",
            el.gstreamer,
            en.gstreamer,
        ),
        ("Rust std / alloc (any caller)", el.rust_std, en.rust_std),
        ("libc, libstdc++, ld.so (any caller)", el.system, en.system),
        ("bench harness (feeding)", el.harness, en.harness),
        ("other", el.other, en.other),
    ] {
        rep.line(format!("| {name} | {} | {} |", mi(a), mi(b)));
    }
    rep.line(format!(
        "\nOutside the engine (element total - engine total): {} M instructions per second of audio, {:.2} % of the element's total.",
        mi(outside),
        100.0 * outside / el.total
    ));
    rep.line(format!(
        "In the element run, functions classified as our crate: {} M/s ({:.2} %), GStreamer/GLib: {} M/s ({:.2} %).",
        mi(el.ours),
        100.0 * el.ours / el.total,
        mi(el.gstreamer),
        100.0 * el.gstreamer / el.total
    ));
    // The functions the element adds, by their steady-state self cost.
    let short_rows: std::collections::HashMap<&str, f64> =
        el_s.1.iter().map(|(ir, f)| (f.as_str(), *ir)).collect();
    let mut top: Vec<(f64, &str)> = el_l
        .1
        .iter()
        .filter(|(_, f)| {
            let mut c = Counts::default();
            let (func, obj) = f.rsplit_once(" [").unwrap_or((f, ""));
            categorize(&mut c, 1.0, func, obj.trim_end_matches(']'));
            c.engine == 0.0 && c.system == 0.0
        })
        .map(|(ir, f)| {
            (
                (ir - short_rows.get(f.as_str()).unwrap_or(&0.0)) / per,
                f.as_str(),
            )
        })
        .collect();
    top.sort_by(|a, b| b.0.total_cmp(&a.0));
    rep.line(
        "\nHeaviest functions of the element side (our crate, GStreamer/GLib, Rust std), steady-state self cost:\n",
    );
    rep.line("| k instructions per s of audio | function [object] |");
    rep.line("|---|---|");
    for (ir, f) in top.iter().take(12) {
        let f = f.strip_prefix("???:").unwrap_or(f);
        rep.line(format!("| {:.1} | `{}` |", ir / 1e3, f.replace('|', "\\|")));
    }
    let share = 100.0 * outside / el.total;
    rep.goal(format!(
        "CPU outside the engine: {} M instructions per audio second, {share:.2} % of the whole (no numeric goal)",
        mi(outside)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of `callgrind`: one run of `secs` of audio, element or engine.
fn callgrind_child(opts: &Opts, element: bool, secs: u64) {
    init_gst();
    let audio = Arc::new(Audio::load());
    let run = if element {
        run_element(opts, &audio, DEFAULT_INTERVAL_MS, secs)
    } else {
        run_engine(opts, &audio, DEFAULT_INTERVAL_MS, secs)
    };
    eprintln!("child: {} words in {:?}", run.words, run.wall);
}

/// The child of `memory`: streams `secs` of audio (non-live, fast) through
/// one element and prints RSS lines at checkpoints of the input's timeline.
fn memory_child(opts: &Opts, secs: u64) {
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

fn memory(opts: &Opts, rep: &mut Report) {
    rep.line(format!(
        "\n## 4. Memory (one element, {} s of audio non-live, in a child process)\n",
        opts.memory_s
    ));
    progress(&format!("memory: {} s of audio", opts.memory_s));
    let exe = std::env::current_exe().expect("this binary's path");
    let out = Command::new(exe)
        .args(["--memory-child", &opts.memory_s.to_string()])
        .args(opts.child_args())
        .output()
        .expect("running the memory child");
    if !out.status.success() {
        die(&format!(
            "memory child failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
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

fn scale(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
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

fn reuse(opts: &Opts, audio: &Arc<Audio>, rep: &mut Report) {
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
