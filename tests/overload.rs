// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Live input that the model cannot keep up with: `overload=skip` (the
//! default) stays within the latency and keeps true timestamps;
//! `overload=queue` keeps every word; non-live input is never skipped.
//!
//! Every test here runs the tone fixture made 2.5 times slower than real
//! time by a test recognizer around the real engine
//! (`common::recognizers::Slow`, through the recognizer seam), the way the
//! real 4B model runs on a small CPU.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::{Arc, Mutex};

use common::FRAME;
use gst::prelude::*;
use gstvoxtralrt::recognizer::Recognizer;

const MS: u64 = 1_000_000;
const SLOWDOWN: f64 = 2.5;
const LATENCY_MS: u64 = 1500;
const INTERVAL_MS: u64 = 160;
const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

/// The runs measure lag in real time on a 2-core machine: they do not
/// overlap.
static HOOK: Mutex<()> = Mutex::new(());

/// The delay in frames: the fixture answers for frames from there on.
const DELAY_FRAMES: usize = 6;

/// Tone in 4 frames of every 8 (320 ms on, 320 ms off): the fixture writes
/// one "x" per tone frame. Returns the audio and the frames that give a
/// word (README-tone: none before the delay).
fn tone_blocks(frames: usize) -> (Vec<f32>, Vec<usize>) {
    let mut audio = vec![0.0f32; frames * FRAME];
    let tones: Vec<usize> = (0..frames).filter(|f| f % 8 < 4).collect();
    for &f in &tones {
        common::add_tone(&mut audio, f..f + 1, 1000.0);
    }
    let words = tones.into_iter().filter(|&f| f >= DELAY_FRAMES).collect();
    (audio, words)
}

#[derive(Debug, Default)]
struct Run {
    /// (pts, duration) of every word.
    words: Vec<(u64, u64)>,
    /// (start, end) of every GAP that went out.
    gaps: Vec<(u64, u64)>,
    /// (start, end) of every voxtralrt-skipped message.
    skips: Vec<(u64, u64)>,
    warnings: Vec<String>,
    /// The decode interval of every voxtralrt-decode-interval message.
    intervals: Vec<u32>,
    /// The largest lag the stats showed while the audio came.
    max_lag: u64,
    /// The lag the stats showed after each buffer pushed.
    lags: Vec<u64>,
    /// This process's VmRSS (KiB) while the audio came, once a buffer.
    rss_kib: Vec<u64>,
    stats: Option<gst::Structure>,
}

impl Run {
    /// How many WARNING messages mentioned `text`.
    fn warnings_about(&self, text: &str) -> usize {
        self.warnings.iter().filter(|w| w.contains(text)).count()
    }

    /// Prints what a run gave, for the test log.
    fn report(&self, label: &str, tones: usize) {
        let skipped = self
            .stats
            .as_ref()
            .unwrap()
            .get::<u64>("audio-skipped")
            .unwrap();
        eprintln!(
            "{label}: {} of {tones} words, {} ms skipped in {} skips, largest lag {} ms",
            self.words.len(),
            skipped / MS,
            self.skips.len(),
            self.max_lag / MS
        );
    }
}

/// Pushes `audio` in real time, 80 ms a buffer, into a live pipeline, with
/// the model `SLOWDOWN` times slower than real time. The slowing costs the
/// same at any decode interval, so the interval is not let stretch: these
/// are the policies beyond the stretch (tests/cadence.rs has the stretch).
fn run_live(audio: &[f32], extra: &str) -> Run {
    run_live_slowed(audio, extra, SLOWDOWN)
}

fn run_live_slowed(audio: &[f32], extra: &str, slowdown: f64) -> Run {
    run_live_with(
        audio,
        &format!("max-decode-interval=0 {extra}"),
        move |inner| {
            Box::new(common::recognizers::Slow {
                inner,
                factor: slowdown,
            })
        },
    )
}

/// Pushes `audio` in real time, 80 ms a buffer, into a live pipeline whose
/// model `wrap` makes slow.
fn run_live_with(
    audio: &[f32],
    extra: &str,
    wrap: impl Fn(Box<dyn Recognizer>) -> Box<dyn Recognizer> + Send + Sync + 'static,
) -> Run {
    let _hook = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 {extra} ! \
         fakesink sync=false",
        common::fixture("voxtral-rt-tone.gguf").display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let run = Arc::new(Mutex::new(Run::default()));
    let t = pipeline.by_name("t").unwrap();
    common::recognizers::wrap(&t, wrap);
    let r = run.clone();
    t.static_pad("src").unwrap().add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            let mut r = r.lock().unwrap();
            if let Some(b) = info.buffer() {
                r.words.push((
                    b.pts().unwrap().nseconds(),
                    b.duration().unwrap().nseconds(),
                ));
            } else if let Some(gst::EventView::Gap(g)) = info.event().map(|e| e.view()) {
                let (pts, duration) = g.get();
                let end = pts + duration.unwrap_or(gst::ClockTime::ZERO);
                r.gaps.push((pts.nseconds(), end.nseconds()));
            }
            gst::PadProbeReturn::Ok
        },
    );
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let clock = gst::SystemClock::obtain();
    common::push_in_real_time(&src, audio, &clock, || {
        let lag = t
            .property::<gst::Structure>("stats")
            .get::<u64>("lag")
            .unwrap();
        let mut r = run.lock().unwrap();
        r.max_lag = r.max_lag.max(lag);
        r.lags.push(lag);
        r.rss_kib.push(rss_kib());
    });
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let deadline = gst::ClockTime::from_seconds(120);
    loop {
        let msg = bus.timed_pop(deadline).expect("no EOS within 120 s");
        let mut r = run.lock().unwrap();
        match msg.view() {
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Warning(w) => r.warnings.push(w.error().to_string()),
            gst::MessageView::Element(e) => match e.structure() {
                Some(s) if s.name() == "voxtralrt-skipped" => r
                    .skips
                    .push((s.get::<u64>("start").unwrap(), s.get::<u64>("end").unwrap())),
                Some(s) if s.name() == "voxtralrt-decode-interval" => {
                    r.intervals.push(s.get::<u32>("interval").unwrap())
                }
                _ => {}
            },
            _ => {}
        }
    }
    run.lock().unwrap().stats = Some(t.property::<gst::Structure>("stats"));
    pipeline.set_state(gst::State::Null).unwrap();
    let run = std::mem::take(&mut *run.lock().unwrap());
    run
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Where the fixture puts the word of frame `f` (README-tone: a delay
/// early).
fn truth(f: usize) -> u64 {
    (f - DELAY_FRAMES) as u64 * 80 * MS
}

#[test]
fn skip_mode_stays_within_the_latency_and_keeps_true_timestamps() {
    let (audio, tones) = tone_blocks(150); // 12 s
    let run = run_live(&audio, "");
    let stats = run.stats.as_ref().unwrap();
    let skipped = stats.get::<u64>("audio-skipped").unwrap();
    run.report("skip", tones.len());
    // The model is 2.5 times too slow: much is skipped, yet words come.
    assert!(skipped > 3000 * MS, "{stats}");
    assert!(!run.skips.is_empty());
    assert!(run.words.len() >= 5, "{:?}", run.words);
    // Skips start past the latency and a decode interval of lag; the lag
    // can exceed that by what arrives while one decode runs (the check is
    // made between decodes) and one buffer.
    let bound = (LATENCY_MS + INTERVAL_MS + (SLOWDOWN * INTERVAL_MS as f64) as u64 + 80) * MS;
    assert!(run.max_lag <= bound, "lag {} ms", run.max_lag / MS);
    // One overload episode, one WARNING.
    assert_eq!(run.warnings_about("skipping"), 1, "{:?}", run.warnings);
    // Each word is where its tone is, to within a decode interval.
    for &(pts, _) in &run.words {
        let nearest = tones.iter().map(|&f| truth(f).abs_diff(pts)).min().unwrap();
        assert!(nearest <= INTERVAL_MS * MS, "a word at {} ms", pts / MS);
    }
    // No word inside a skipped stretch, and a GAP over each.
    for &(start, end) in &run.skips {
        assert!(start < end);
        assert!(
            run.words.iter().all(|&(pts, _)| pts < start || pts >= end),
            "a word inside the skipped {start}..{end}"
        );
        assert!(
            run.gaps.iter().any(|&(s, e)| s <= start && e >= end),
            "no GAP over {start}..{end}: {:?}",
            run.gaps
        );
    }
    for pair in run.words.windows(2) {
        assert!(pair[0].0 <= pair[1].0, "{pair:?}");
    }
    // Memory stays flat while skipping: from the first second on (the
    // model and the pipeline set up) the process grows by less than the
    // 12 s of audio it was given (750 KiB) and a margin for the allocator.
    let settled = run.rss_kib[run.rss_kib.len() / 12];
    let most = *run.rss_kib.iter().max().unwrap();
    eprintln!("skip: VmRSS {settled} KiB after 1 s, at most {most} KiB");
    assert!(most < settled + 4 * 1024, "{settled} -> {most} KiB");
}

/// At real scale a new model stream needs seconds before its first word
/// (docs/benchmarks.md, section 7): a skip may not come before it had the
/// delay and two decode intervals of audio, or no word would ever come.
#[test]
fn a_model_far_slower_than_real_time_still_writes_words_when_skipping() {
    let slowdown = 6.0;
    let (audio, tones) = tone_blocks(125); // 10 s
    let run = run_live_slowed(&audio, "latency=500", slowdown);
    let stats = run.stats.as_ref().unwrap();
    run.report(&format!("skip, {slowdown}x, latency 500 ms"), tones.len());
    assert!(!run.skips.is_empty(), "{stats}");
    // About one word per restart here (without the rule: none at all).
    assert!(!run.words.is_empty(), "{stats}");
    for &(pts, _) in &run.words {
        let nearest = tones.iter().map(|&f| truth(f).abs_diff(pts)).min().unwrap();
        assert!(nearest <= INTERVAL_MS * MS, "a word at {} ms", pts / MS);
    }
    // The lag is bounded by a stream's first audio, slowed down, and what
    // a skip keeps: (delay + 2 intervals) x slowdown + a decode + a buffer.
    let first_audio = 480 + 2 * INTERVAL_MS;
    let bound = ((first_audio as f64 * slowdown) as u64 + 2 * INTERVAL_MS + 80) * MS;
    assert!(run.max_lag <= bound, "lag {} ms", run.max_lag / MS);
}

/// Far beyond the stretch (issue 54): a model five times slower than real
/// time at every interval. The interval stretches to the bound first; once
/// that too falls behind and audio is skipped, streams restart at 160 ms,
/// where a restart costs the least: the lag stays within the latency, the
/// delay and three 160 ms intervals decoded at the model's pace, and 1.5 s,
/// and does not grow (before: restarts at 960 ms, the lag up to 12-15 s).
#[test]
fn beyond_the_stretch_streams_restart_at_the_base_interval_and_the_lag_stays_bounded() {
    let slowdown = 5.0;
    let (audio, tones) = tone_blocks(375); // 30 s
    let run = run_live_with(&audio, "", move |inner| {
        Box::new(common::recognizers::Slow {
            inner,
            factor: slowdown,
        })
    });
    run.report(
        &format!("skip beyond the stretch, {slowdown}x"),
        tones.len(),
    );
    assert!(!run.skips.is_empty(), "{:?}", run.stats);
    assert!(run.intervals.contains(&960), "{:?}", run.intervals);
    assert_eq!(run.intervals.last(), Some(&160), "{:?}", run.intervals);
    let restart = ((480 + 3 * INTERVAL_MS) as f64 * slowdown) as u64;
    let bound = (LATENCY_MS + restart + 1500) * MS;
    assert!(run.max_lag <= bound, "lag {} ms", run.max_lag / MS);
    let (first, last) = run.lags.split_at(run.lags.len() / 2);
    let peak = |lags: &[u64]| lags.iter().max().copied().unwrap_or(0);
    assert!(
        peak(last) <= peak(first) + 1000 * MS,
        "the lag grew: {} ms, then {} ms",
        peak(first) / MS,
        peak(last) / MS
    );
    assert!(!run.words.is_empty());
}

#[test]
fn queue_mode_keeps_every_word_however_late() {
    let (audio, tones) = tone_blocks(75); // 6 s
    let run = run_live(&audio, "overload=queue");
    let stats = run.stats.as_ref().unwrap();
    assert_eq!(stats.get::<u64>("audio-skipped").unwrap(), 0);
    assert!(run.skips.is_empty());
    assert!(run.max_lag > LATENCY_MS * MS, "lag {} ms", run.max_lag / MS);
    assert!(
        run.warnings_about("behind the audio") > 0,
        "{:?}",
        run.warnings
    );
    let expected: Vec<u64> = tones.iter().map(|&f| truth(f)).collect();
    assert_eq!(run.words.len(), expected.len(), "{:?}", run.words);
    for (&(pts, _), truth) in run.words.iter().zip(&expected) {
        assert!(
            pts.abs_diff(*truth) <= INTERVAL_MS * MS,
            "{pts} for {truth}"
        );
    }
}

#[test]
fn queue_mode_keeps_memory_bounded_at_max_lag() {
    let max_lag_ms = 2000;
    let (audio, tones) = tone_blocks(125); // 10 s, 2.5 times too slow
    let run = run_live(&audio, &format!("overload=queue max-lag={max_lag_ms}"));
    let stats = run.stats.as_ref().unwrap();
    let skipped = stats.get::<u64>("audio-skipped").unwrap();
    run.report(&format!("queue, max-lag {max_lag_ms} ms"), tones.len());
    // The queue never holds much more than max-lag: what arrives during
    // one decode, and one buffer, past it.
    let bound = (max_lag_ms + (SLOWDOWN * INTERVAL_MS as f64) as u64 + 80) * MS;
    assert!(run.max_lag <= bound, "lag {} ms", run.max_lag / MS);
    assert!(skipped > 0 && !run.skips.is_empty(), "{stats}");
    assert_eq!(run.warnings_about("max-lag"), 1, "{:?}", run.warnings);
    // Half of max-lag is kept at each skip, so more words come than the
    // skip policy gives, and each where its tone is.
    assert!(run.words.len() >= 10, "{:?}", run.words);
    for &(pts, _) in &run.words {
        let nearest = tones.iter().map(|&f| truth(f).abs_diff(pts)).min().unwrap();
        assert!(nearest <= INTERVAL_MS * MS, "a word at {} ms", pts / MS);
    }
    for &(start, end) in &run.skips {
        assert!(
            run.words.iter().all(|&(pts, _)| pts < start || pts >= end),
            "a word inside the skipped {start}..{end}"
        );
        assert!(run.gaps.iter().any(|&(s, e)| s <= start && e >= end));
    }
}

#[test]
fn non_live_input_is_slowed_and_never_skipped() {
    let _hook = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    common::init_plugin();
    let (audio, tones) = tone_blocks(40);
    let t = gst::ElementFactory::make("voxtralrttranscriber")
        .property(
            "model-path",
            common::fixture("voxtral-rt-tone.gguf").to_str().unwrap(),
        )
        .property("threads", 1u32)
        .build()
        .unwrap();
    common::recognizers::wrap(&t, |inner| {
        Box::new(common::recognizers::Slow {
            inner,
            factor: SLOWDOWN,
        })
    });
    let mut h = gst_check::Harness::with_element(&t, Some("sink"), Some("src"));
    h.set_src_caps_str(F32_CAPS);
    for (i, piece) in audio.chunks(1600).enumerate() {
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * i as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        h.push(b).unwrap();
    }
    h.push_event(gst::event::Eos::new());
    let mut words = 0;
    while let Ok(Some(_)) = h.pull_until_eos() {
        words += 1;
    }
    assert_eq!(words, tones.len());
    let stats = t.property::<gst::Structure>("stats");
    assert_eq!(stats.get::<u64>("audio-skipped").unwrap(), 0);
}

/// A heavier model: 350 ms a decode on top of 0.55 times the audio, 2.74
/// times slower than real time at 160 ms, 1.10 at 640, 0.91 at 960.
fn heavy(inner: Box<dyn Recognizer>) -> Box<dyn Recognizer> {
    Box::new(common::recognizers::CostPerDecode {
        inner,
        per_decode: std::time::Duration::from_millis(350),
        factor: 0.55,
    })
}

#[test]
fn a_model_that_keeps_up_only_at_the_bound_skips_nothing() {
    // The second of audio at 160 ms leaves 1.7 s waiting, more than
    // latency + decode-interval; at 960 ms the model catches up slowly, and
    // while it does, the wait is the stretch's own, not falling behind.
    let (audio, tones) = tone_blocks(250); // 20 s
    let run = run_live_with(&audio, "", heavy);
    let stats = run.stats.as_ref().unwrap();
    run.report("stretch to the bound, 350 ms a decode", tones.len());
    assert_eq!(
        run.intervals.iter().max(),
        Some(&960),
        "{:?}",
        run.intervals
    );
    assert_eq!(stats.get::<u64>("audio-skipped").unwrap(), 0, "{stats}");
    assert!(run.skips.is_empty());
    assert_eq!(run.words.len(), tones.len(), "{:?}", run.words);
}

/// A model with a fixed cost per decode (as transcribe.cpp's encoder on a
/// CPU): 200 ms a decode on top of 0.4 times the audio, 1.65 times slower
/// than real time at 160 ms, 1.03 at 320, 0.71 at 640.
fn costly(inner: Box<dyn Recognizer>) -> Box<dyn Recognizer> {
    Box::new(common::recognizers::CostPerDecode {
        inner,
        per_decode: std::time::Duration::from_millis(200),
        factor: 0.4,
    })
}

#[test]
fn a_model_too_slow_at_160_ms_decodes_less_often_instead_of_skipping() {
    let (audio, tones) = tone_blocks(125); // 10 s
    let run = run_live_with(&audio, "", costly);
    let stats = run.stats.as_ref().unwrap();
    run.report("stretch, 200 ms a decode", tones.len());
    assert_eq!(stats.get::<u64>("audio-skipped").unwrap(), 0, "{stats}");
    assert!(run.skips.is_empty());
    assert!(stats.get::<u64>("decode-interval-stretches").unwrap() >= 1);
    assert!(
        run.intervals.iter().any(|&i| i >= 320),
        "{:?}",
        run.intervals
    );
    // Every word, each within the longest interval of its tone.
    let grain = u64::from(*run.intervals.iter().max().unwrap()) * MS;
    assert_eq!(run.words.len(), tones.len(), "{:?}", run.words);
    for (&(pts, _), &f) in run.words.iter().zip(&tones) {
        assert!(pts.abs_diff(truth(f)) <= grain, "{pts} for {}", truth(f));
    }
    // The same model kept at 160 ms falls behind and skips.
    let kept = run_live_with(&audio, "max-decode-interval=0", costly);
    let skipped = kept.stats.as_ref().unwrap().get::<u64>("audio-skipped");
    kept.report("no stretch, 200 ms a decode", tones.len());
    assert!(skipped.unwrap() > 0);
    assert!(kept.words.len() < tones.len());
}
