// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The shared harness: the input audio, measuring helpers, the non-live
//! pipeline and the bare engine's run, the report.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;
use gstvoxtralrt::engine::Stream;
use gstvoxtralrt::voxtral::StreamConfig;

use crate::options::{die, Opts};
use crate::{BUFFER_SAMPLES, CAPS, LIVE_BUFFER_SAMPLES, MS, RATE, SECOND};

// ---------------------------------------------------------------------------
// Input audio

/// The input: the bundled speech sample (5.8 s), padded with silence to
/// whole 100 ms buffers and looped. The fixture ignores what it hears; a real
/// model gets speech.
pub(crate) struct Audio {
    samples: Vec<f32>,
    /// The same audio as buffers of `BUFFER_SAMPLES` (shared memory: a push
    /// copies only the buffer's metadata).
    buffers: Vec<gst::Buffer>,
    live_buffers: Vec<gst::Buffer>,
}

impl Audio {
    pub(crate) fn load() -> Audio {
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
    pub(crate) fn chunk_of(&self, i: usize, len: usize) -> &[f32] {
        let n = self.samples.len() / len;
        let at = (i % n) * len;
        &self.samples[at..at + len]
    }

    /// The `i`th buffer (100 ms, or 20 ms if `live`), stamped from 0.
    pub(crate) fn buffer(&self, i: usize, live: bool) -> gst::Buffer {
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

pub(crate) fn median(v: &[f64]) -> f64 {
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
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub(crate) fn min_max(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// CPU time (user + system) of this process so far, all threads.
pub(crate) fn process_cpu() -> Duration {
    let u = usage();
    u.user + u.sys
}

/// What getrusage(2) says about this process, all threads (finished ones
/// too).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    pub(crate) user: Duration,
    pub(crate) sys: Duration,
    /// Voluntary context switches: a thread waited (a lock, a condvar).
    pub(crate) voluntary_switches: u64,
    /// Involuntary ones: a thread was preempted.
    pub(crate) involuntary_switches: u64,
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

pub(crate) fn usage() -> Usage {
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
pub(crate) fn rss_kib() -> (u64, u64) {
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
pub(crate) fn ms(ns: f64) -> String {
    format!("{:.0}", (ns / MS as f64).round() + 0.0)
}

// ---------------------------------------------------------------------------
// Pipelines

pub(crate) fn init_gst() {
    gst::init().expect("initialising GStreamer");
    gstvoxtralrt::plugin_register_static().expect("registering the plugin");
}

/// One appsrc ! voxtralrttranscriber ! fakesink pipeline.
pub(crate) struct Rig {
    pub(crate) pipeline: gst::Pipeline,
    pub(crate) src: gst::Element,
    pub(crate) transcriber: gst::Element,
}

impl Rig {
    pub(crate) fn new(opts: &Opts, model: &Path, interval_ms: u32, live: bool) -> Rig {
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

    pub(crate) fn set(&self, state: gst::State) {
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
    pub(crate) fn wait_eos(&self, timeout: Duration) {
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

    pub(crate) fn stats(&self) -> gst::Structure {
        self.transcriber.property::<gst::Structure>("stats")
    }

    /// Pushes `n` buffers of non-live audio, then EOS, from a new thread.
    pub(crate) fn feed(&self, audio: &Arc<Audio>, n: usize) -> std::thread::JoinHandle<()> {
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
    pub(crate) fn count_words(&self) -> Arc<Mutex<(u64, Option<Instant>)>> {
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
pub(crate) struct Run {
    pub(crate) wall: Duration,
    pub(crate) usage: Usage,
    pub(crate) words: u64,
}

pub(crate) fn run_element(opts: &Opts, audio: &Arc<Audio>, interval_ms: u32, secs: u64) -> Run {
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
pub(crate) fn run_engine(opts: &Opts, audio: &Audio, interval_ms: u32, secs: u64) -> Run {
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

pub(crate) struct Report {
    pub(crate) text: String,
    pub(crate) goals: Vec<String>,
}

impl Report {
    pub(crate) fn line(&mut self, s: impl AsRef<str>) {
        self.text.push_str(s.as_ref());
        self.text.push('\n');
        println!("{}", s.as_ref());
    }

    pub(crate) fn goal(&mut self, s: String) {
        println!("goal: {s}");
        self.goals.push(s);
    }
}

/// Runs this binary again as a child with `args` and the model and settings
/// of `opts`, and returns what it printed; a failed child ends the
/// benchmark with its error output. The sections that need a fresh process
/// (memory, a start from nothing) measure there.
pub(crate) fn run_child(opts: &Opts, args: &[&str], what: &str) -> String {
    let exe = std::env::current_exe().expect("this binary's path");
    let out = std::process::Command::new(exe)
        .args(args)
        .args(opts.child_args())
        .output()
        .unwrap_or_else(|e| die(&format!("running the {what} child: {e}")));
    if !out.status.success() {
        die(&format!(
            "{what} child failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn progress(s: &str) {
    eprintln!("[bench] {s}");
}
