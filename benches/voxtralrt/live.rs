// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Live pipelines, paced in real time, with probes on both pads.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;

use crate::harness::{process_cpu, Audio, Rig};
use crate::options::Opts;
use crate::{LIVE_BUFFER_SAMPLES, MS, RATE, SECOND};

/// What a live run saw: input buffers (end on the input timeline, running
/// time of arrival at the transcriber) and words (pts, end, running time of
/// departure from its src pad).
#[derive(Default)]
struct LiveLog {
    arrivals: Vec<(u64, u64)>,
    words: Vec<(u64, u64, u64)>,
    eos_at: Option<u64>,
}

pub(crate) struct LiveResult {
    /// Per word: departure - arrival of the audio at the word's end - delay.
    pub(crate) latencies: Vec<f64>,
    /// Words that left after the pipeline's announced latency from their
    /// start (a syncing sink would drop them as late).
    pub(crate) late: usize,
    /// Words left at EOS (by finalize), not counted.
    pub(crate) at_eos: usize,
    pub(crate) rtf: f64,
}

impl LiveResult {
    pub(crate) fn sorted(&self) -> Vec<f64> {
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
pub(crate) fn run_live(
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

/// What a sampler saw every `every` during a live run.
pub(crate) struct Sample {
    /// Since the pipeline went to PLAYING.
    pub(crate) at: Duration,
    pub(crate) stats: gst::Structure,
    pub(crate) rss_kib: u64,
}

/// A long live run: the usual result, the samples, and how many WARNING
/// messages the element posted.
pub(crate) struct SampledRun {
    pub(crate) result: LiveResult,
    pub(crate) samples: Vec<Sample>,
    pub(crate) warnings: usize,
}

/// One live pipeline for `secs`, with the element's `stats` and this
/// process's RSS sampled every `every` while it runs.
pub(crate) fn run_live_sampled(
    opts: &Opts,
    audio: &Arc<Audio>,
    interval_ms: u32,
    secs: u64,
    every: Duration,
) -> SampledRun {
    let rig = LiveRig::new(opts, interval_ms);
    let warnings = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let warnings = warnings.clone();
        rig.rig
            .pipeline
            .bus()
            .expect("a pipeline has a bus")
            .set_sync_handler(move |_, msg| {
                if let gst::MessageView::Warning(_) = msg.view() {
                    warnings.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                gst::BusSyncReply::Pass
            });
    }
    rig.rig.set(gst::State::Ready);
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (transcriber, done) = (rig.rig.transcriber.clone(), done.clone());
        std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            let mut samples = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(every);
                samples.push(Sample {
                    at: t0.elapsed(),
                    stats: transcriber.property::<gst::Structure>("stats"),
                    rss_kib: crate::harness::rss_kib().0,
                });
            }
            samples
        })
    };
    rig.rig.set(gst::State::Playing);
    let pacer = rig.pace(audio, secs);
    rig.rig.wait_eos(Duration::from_secs(secs * 3 + 60));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let samples = sampler.join().expect("sampler thread");
    let result = rig.result(opts);
    rig.rig.set(gst::State::Null);
    pacer.join().expect("pacer thread");
    SampledRun {
        result,
        samples,
        warnings: warnings.load(std::sync::atomic::Ordering::Relaxed),
    }
}
