// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Timestamps checked against a model whose output is known: the tone
//! fixture writes one word "x" for each 80 ms frame holding a 1 kHz tone and
//! nothing for silence (tests/fixtures/README-tone.md). Being memoryless, it
//! writes the word of frame f as token f - D, so its words come out exactly
//! `delay` early: a word for a tone at time t belongs at t - delay.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use common::tone_model;

use std::sync::{Arc, Mutex};

use gst::prelude::*;

const MS: u64 = 1_000_000;
const FRAME: usize = 1280;
const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
const S16_CAPS: &str = "audio/x-raw,format=S16LE,rate=16000,channels=1,layout=interleaved";
const ALL_DELAYS: [u32; 16] = [
    80, 160, 240, 320, 400, 480, 560, 640, 720, 800, 880, 960, 1040, 1120, 1200, 2400,
];

/// Tone bursts of (start frame, frames) on silence; returns the audio and the
/// tone frames.
fn bursts(total_frames: usize, bursts: &[(usize, usize)]) -> (Vec<f32>, Vec<usize>) {
    let mut audio = vec![0.0f32; total_frames * FRAME];
    let mut frames = Vec::new();
    for &(start, len) in bursts {
        let first = start * FRAME;
        for (i, sample) in audio[first..(start + len) * FRAME].iter_mut().enumerate() {
            let n = (first + i) as f32;
            *sample = 0.5 * (2.0 * std::f32::consts::PI * 1000.0 * n / 16_000.0).sin();
        }
        frames.extend(start..start + len);
    }
    (audio, frames)
}

/// The issue's bursts (at 0.8 s for 240 ms, 2.4 s for 400 ms, 3.2 s for
/// 800 ms), moved past the delay so the model can answer for all of them.
fn issue_bursts(delay_ms: u32) -> (Vec<f32>, Vec<usize>) {
    let d = (delay_ms / 80) as usize;
    bursts(d + 60, &[(d + 10, 3), (d + 30, 5), (d + 40, 10)])
}

fn harness(extra: &str, caps: &str) -> gst_check::Harness {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 {extra}",
        tone_model()
    ));
    h.set_src_caps_str(caps);
    h
}

fn buffer(samples: &[f32], caps: &str, pts: u64, discont: bool) -> gst::Buffer {
    let bytes = if caps == S16_CAPS {
        common::to_s16le(samples)
    } else {
        common::to_f32le(samples)
    };
    let mut b = gst::Buffer::from_mut_slice(bytes);
    let bm = b.get_mut().unwrap();
    bm.set_pts(gst::ClockTime::from_nseconds(pts));
    if discont {
        bm.set_flags(gst::BufferFlags::DISCONT);
    }
    b
}

fn word_times(h: &mut gst_check::Harness) -> Vec<u64> {
    h.push_event(gst::event::Eos::new());
    let mut times = Vec::new();
    while let Ok(Some(b)) = h.pull_until_eos() {
        assert_eq!(&*b.map_readable().unwrap(), b"x");
        times.push(b.pts().unwrap().nseconds());
    }
    times
}

/// Checks one word per tone frame, each within one decode interval of where
/// the fixture puts it; returns the largest error in ns.
fn assert_timed(
    times: &[u64],
    frames: &[usize],
    origin: u64,
    delay_ms: u32,
    interval_ms: u32,
) -> u64 {
    assert_eq!(times.len(), frames.len(), "words {times:?}");
    let mut worst = 0;
    for (&t, &f) in times.iter().zip(frames) {
        let truth = origin + (f as u64 * 80 - u64::from(delay_ms)) * MS;
        let error = t.abs_diff(truth);
        assert!(
            error <= u64::from(interval_ms) * MS,
            "frame {f}: word at {t}, expected {truth} +- {interval_ms} ms"
        );
        worst = worst.max(error);
    }
    worst
}

fn run(delay_ms: u32, interval_ms: u32, caps: &str) -> u64 {
    let (audio, frames) = issue_bursts(delay_ms);
    let mut h = harness(
        &format!("delay={delay_ms} decode-interval={interval_ms}"),
        caps,
    );
    for (i, piece) in audio.chunks(1600).enumerate() {
        h.push(buffer(piece, caps, i as u64 * 100 * MS, false))
            .unwrap();
    }
    let times = word_times(&mut h);
    assert_timed(&times, &frames, 0, delay_ms, interval_ms)
}

#[test]
fn every_tone_frame_gives_one_word_at_its_time_for_every_delay() {
    for delay in ALL_DELAYS {
        let worst = run(delay, 160, F32_CAPS);
        eprintln!("delay {delay} ms: worst error {} ms", worst / MS);
    }
}

#[test]
fn the_error_stays_within_each_decode_interval() {
    for interval in [80, 160, 320, 1000] {
        let worst = run(480, interval, F32_CAPS);
        eprintln!(
            "decode-interval {interval} ms: worst error {} ms",
            worst / MS
        );
    }
}

#[test]
fn s16_input_is_timed_like_f32() {
    run(480, 160, S16_CAPS);
}

#[test]
fn silence_gives_no_words_and_only_gaps() {
    let (audio, frames) = bursts(50, &[]);
    assert!(frames.is_empty());
    let mut h = harness("", F32_CAPS);
    h.push(buffer(&audio, F32_CAPS, 0, false)).unwrap();
    assert!(word_times(&mut h).is_empty());
    let mut covered = 0;
    while let Some(e) = h.try_pull_event() {
        if let gst::EventView::Gap(g) = e.view() {
            let (pts, d) = g.get();
            covered = covered.max(pts.nseconds() + d.map_or(0, |d| d.nseconds()));
        }
    }
    assert_eq!(covered, 4000 * MS, "the gaps cover the whole silence");
}

#[test]
fn a_non_zero_segment_start_moves_the_words_with_it() {
    let (audio, frames) = issue_bursts(480);
    let start = 30_000 * MS;
    let mut h = harness("", F32_CAPS);
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    segment.set_start(gst::ClockTime::from_nseconds(start));
    segment.set_base(gst::ClockTime::from_seconds(7));
    h.push_event(gst::event::Segment::new(&segment));
    for (i, piece) in audio.chunks(1600).enumerate() {
        h.push(buffer(piece, F32_CAPS, start + i as u64 * 100 * MS, false))
            .unwrap();
    }
    let times = word_times(&mut h);
    assert_timed(&times, &frames, start, 480, 160);
}

#[test]
fn a_hole_after_a_discont_keeps_the_words_after_it_on_time() {
    // Between the bursts, 400 ms of input are missing (5 frames); the
    // element fills them with silence, so the frames after stay in place.
    let (audio, frames) = issue_bursts(480);
    let cut = (6 + 20) * FRAME;
    let hole = 5 * FRAME;
    let mut h = harness("", F32_CAPS);
    h.push(buffer(&audio[..cut], F32_CAPS, 0, false)).unwrap();
    let after = &audio[cut + hole..];
    h.push(buffer(
        after,
        F32_CAPS,
        ((cut + hole) as u64 * 1000 / 16) * 1000,
        true,
    ))
    .unwrap();
    let times = word_times(&mut h);
    assert_timed(&times, &frames, 0, 480, 160);
}

#[test]
fn in_a_live_pipeline_each_word_leaves_within_the_latency() {
    common::init_plugin();
    let (audio, frames) = issue_bursts(480);
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink name=out sync=false",
        tone_model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    let arrivals = Arc::new(Mutex::new(Vec::<(u64, u64)>::new())); // (audio end pts, clock time)
    let departures = Arc::new(Mutex::new(Vec::<(u64, u64)>::new())); // (word pts, clock time)
    let t = pipeline.by_name("t").unwrap();
    for (pad, log) in [("sink", arrivals.clone()), ("src", departures.clone())] {
        let clock = clock.clone();
        t.static_pad(pad)
            .unwrap()
            .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
                if let Some(b) = info.buffer() {
                    let end = b.pts().unwrap() + b.duration().unwrap_or(gst::ClockTime::ZERO);
                    let at = if pad == "sink" { end } else { b.pts().unwrap() };
                    log.lock()
                        .unwrap()
                        .push((at.nseconds(), clock.time().nseconds()));
                }
                gst::PadProbeReturn::Ok
            });
    }
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    // Real time: one 80 ms buffer every 80 ms.
    common::push_in_real_time(&src, &audio, &clock, || {});
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    // EOS, and what overload=skip (the default) did meanwhile, if anything.
    let mut skips = Vec::new(); // (start, end) of the audio skipped, ns
    let mut skip_warnings = Vec::new();
    let bus = pipeline.bus().unwrap();
    loop {
        let msg = bus
            .timed_pop(gst::ClockTime::from_seconds(30))
            .expect("no EOS within 30 s");
        match msg.view() {
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Warning(w) => skip_warnings.push(w.error().to_string()),
            gst::MessageView::Element(e) => {
                if let Some(s) = e.structure().filter(|s| s.name() == "voxtralrt-skipped") {
                    skips.push((s.get::<u64>("start").unwrap(), s.get::<u64>("end").unwrap()));
                }
            }
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    let arrivals = arrivals.lock().unwrap();
    let departures = departures.lock().unwrap();
    if !skips.is_empty() {
        // The machine held the model back by more than the latency (two
        // busy loops beside the test have not, in 5 runs; a loaded CI
        // machine may): the latency cannot be kept, and skip's promise is
        // checked instead (docs/timing.md): a WARNING, no word from skipped
        // audio, the words that come at their true places, and every word
        // whose audio was not skipped. A word needs the delay of audio after
        // its tone, and a new stream writes nothing for its first delay of
        // audio: the frames within a delay and a decode interval of a
        // skipped stretch may go with it.
        assert!(
            skip_warnings.iter().any(|w| w.contains("skipping")),
            "skips {skips:?} without a WARNING: {skip_warnings:?}"
        );
        let truth = |f: usize| (f as u64 * 80).saturating_sub(480) * MS;
        let grain = 160 * MS;
        for &(pts, _) in departures.iter() {
            assert!(
                skips.iter().all(|&(start, end)| pts < start || pts >= end),
                "a word at {} ms inside the skipped {skips:?}",
                pts / MS
            );
            assert!(
                frames.iter().any(|&f| truth(f).abs_diff(pts) <= grain),
                "a word at {} ms, at no tone frame's place",
                pts / MS
            );
        }
        let margin = (480 + 160) * MS;
        for &f in &frames {
            let t = f as u64 * 80 * MS;
            let near_a_skip = skips
                .iter()
                .any(|&(start, end)| t + margin >= start && t < end + margin);
            assert!(
                near_a_skip
                    || departures
                        .iter()
                        .any(|&(pts, _)| truth(f).abs_diff(pts) <= grain),
                "no word for tone frame {f}, far from the skips {skips:?}"
            );
        }
        eprintln!(
            "the model fell behind by more than the latency: skipped {skips:?}; {} of {} words",
            departures.len(),
            frames.len()
        );
        return;
    }
    assert_eq!(departures.len(), frames.len());
    let latency = 1500 * MS;
    let mut worst = 0;
    for (&(_, left), &f) in departures.iter().zip(&frames) {
        // The word's audio is its tone frame; it reached the element with
        // the buffer that ends with that frame.
        let frame_end = (f as u64 + 1) * 80 * MS;
        let arrived = arrivals
            .iter()
            .find(|(end, _)| *end >= frame_end)
            .unwrap()
            .1;
        let waited = left.saturating_sub(arrived);
        worst = worst.max(waited);
        assert!(
            waited <= latency,
            "frame {f}: the word left {} ms after its audio",
            waited / MS
        );
    }
    eprintln!(
        "worst time from a tone frame's arrival to its word leaving: {} ms",
        worst / MS
    );
}
