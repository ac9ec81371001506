// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A participant whose data starts late (issue 39, part 1): the words of
//! both elements leave in time order, their times never going back,
//! whenever a pad's first data comes. Not live, the output waits for every
//! linked pad's first data or EOS; live, for at most the latency, and a
//! word that comes after later words went out is re-timed to where the
//! output stands, counted in `stats` and warned about.

// The local engine runs the fixture models (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{tone_audio, tone_model, truth, FRAME};
use gst::prelude::*;

const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
/// The audio of each pad: 6.08 s.
const TOTAL_FRAMES: usize = 76;
/// A word is placed within the decode interval it was decoded in
/// (tests/timing.rs).
const PLACEMENT_NS: u64 = 160_000_000;

/// The first pad's words, and the second's, between them.
fn frames_of(pad: usize) -> Vec<usize> {
    (0..11).map(|k| 8 + 3 * pad + 6 * k).collect()
}

#[derive(Clone, Copy, Debug)]
enum Element {
    Transcriber,
    Sink,
}

#[derive(Clone, Copy, Debug)]
enum Late {
    /// The second pad's data starts this late, stamped from 0.
    Starts(Duration),
    /// The second pad brings nothing but its EOS, at the end.
    Never,
}

/// A word as it left the element: time, speaker, when.
type Departure = (u64, String, Instant);

struct Outcome {
    words: Vec<Departure>,
    /// `stats`' `words-retimed`.
    retimed: u64,
    /// The WARNINGs about re-timed words.
    warnings: Vec<String>,
    /// When the second pad brought its first buffer (or its EOS).
    late_came: Instant,
}

impl Outcome {
    fn words_of(&self, speaker: &str) -> Vec<u64> {
        self.words
            .iter()
            .filter(|w| w.1 == speaker)
            .map(|w| w.0)
            .collect()
    }

    fn assert_in_time_order(&self) {
        let times: Vec<u64> = self.words.iter().map(|w| w.0).collect();
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "the output's time never goes back: {times:?}"
        );
    }

    /// The speaker's words each within a decode interval of its tone.
    fn assert_on_time(&self, speaker: &str, frames: &[usize]) {
        let got = self.words_of(speaker);
        assert_eq!(got.len(), frames.len(), "{speaker}: {got:?}");
        for (t, &f) in got.iter().zip(frames) {
            assert!(
                t.abs_diff(truth(f)) <= PLACEMENT_NS,
                "{speaker} frame {f}: {got:?}"
            );
        }
    }

    fn first_left(&self) -> Instant {
        self.words.first().expect("words").2
    }
}

/// Two appsrcs into `sink_0` and `sink_1` of the element, both pads
/// linked from the start.
fn pipeline(element: Element, live: bool) -> gst::Pipeline {
    common::init_plugin();
    let props = format!(
        "name=e model-path={} threads=1 overload=queue",
        tone_model()
    );
    let mut line = match element {
        Element::Transcriber => {
            format!("voxtralrttranscriber {props} ! fakesink name=out sync=false")
        }
        Element::Sink => format!("voxtralrtsink {props}"),
    };
    for i in 0..2 {
        line.push_str(&format!(
            " appsrc name=src{i} is-live={live} format=time caps={F32_CAPS} ! e.sink_{i}"
        ));
    }
    gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap()
}

/// Records each word with its speaker and when it left.
fn record_departures(pipeline: &gst::Pipeline, element: Element) -> Arc<Mutex<Vec<Departure>>> {
    let words: Arc<Mutex<Vec<Departure>>> = Arc::default();
    let record = words.clone();
    match element {
        Element::Transcriber => {
            let pad = pipeline.by_name("out").unwrap().static_pad("sink").unwrap();
            common::on_each_spoken_word(&pad, move |pts, _, who| {
                let who = who.unwrap_or_default();
                record.lock().unwrap().push((pts, who, Instant::now()));
            });
        }
        Element::Sink => {
            pipeline
                .by_name("e")
                .unwrap()
                .connect("transcript", false, move |args| {
                    let pts = args[2].get::<u64>().unwrap();
                    let who = args[4].get::<Option<String>>().unwrap().unwrap_or_default();
                    record.lock().unwrap().push((pts, who, Instant::now()));
                    None
                });
        }
    }
    words
}

/// The pipeline's WARNINGs about re-timed words, and its EOS or ERROR.
fn watch_bus(pipeline: &gst::Pipeline) -> (Arc<Mutex<Vec<String>>>, mpsc::Receiver<gst::Message>) {
    let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
    let (record, (send, ended)) = (warnings.clone(), mpsc::channel());
    let send = Mutex::new(send);
    pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
        match msg.view() {
            gst::MessageView::Warning(w) if w.error().to_string().contains("words-retimed") => {
                record.lock().unwrap().push(w.error().to_string());
            }
            gst::MessageView::Eos(_) | gst::MessageView::Error(_) => {
                let _ = send.lock().unwrap().send(msg.clone());
            }
            _ => {}
        }
        gst::BusSyncReply::Drop
    });
    (warnings, ended)
}

fn end(src: &gst::Element) {
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
}

/// Frame `k` of `audio`, stamped at its place.
fn push_frame(src: &gst::Element, audio: &[f32], k: usize) {
    common::push_at(src, &audio[k * FRAME..(k + 1) * FRAME], 80 * k as u64);
}

/// Not live: the first pad's whole stream at once; the second's after the
/// wait, all at once too.
fn feed_at_once(srcs: &[gst::Element], audio: &[Vec<f32>], late: Late) -> Instant {
    (0..TOTAL_FRAMES).for_each(|k| push_frame(&srcs[0], &audio[0], k));
    end(&srcs[0]);
    let wait = match late {
        Late::Starts(wait) => wait,
        Late::Never => Duration::from_secs(3),
    };
    std::thread::sleep(wait);
    let came = Instant::now();
    if let Late::Starts(_) = late {
        (0..TOTAL_FRAMES).for_each(|k| push_frame(&srcs[1], &audio[1], k));
    }
    end(&srcs[1]);
    came
}

/// Live: the first pad in real time; the second from its start on, what
/// it missed at once (a jitter buffer letting go), then in real time.
fn feed_in_real_time(srcs: &[gst::Element], audio: &[Vec<f32>], late: Late) -> Instant {
    let started = Instant::now();
    let mut came = None;
    for k in 0..TOTAL_FRAMES {
        let due = started + Duration::from_millis(80 * k as u64);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        push_frame(&srcs[0], &audio[0], k);
        let Late::Starts(wait) = late else {
            continue;
        };
        if started.elapsed() < wait {
            continue;
        }
        if came.is_none() {
            came = Some(Instant::now());
            // Everything before this frame, at once.
            (0..k).for_each(|j| push_frame(&srcs[1], &audio[1], j));
        }
        push_frame(&srcs[1], &audio[1], k);
    }
    let came = came.unwrap_or_else(Instant::now);
    srcs.iter().for_each(end);
    came
}

fn run(element: Element, live: bool, late: Late) -> Outcome {
    let pipeline = pipeline(element, live);
    let words = record_departures(&pipeline, element);
    let (warnings, ended) = watch_bus(&pipeline);
    pipeline.set_state(gst::State::Playing).unwrap();
    let srcs: Vec<gst::Element> = (0..2)
        .map(|i| pipeline.by_name(&format!("src{i}")).unwrap())
        .collect();
    let audio: Vec<Vec<f32>> = (0..2)
        .map(|pad| tone_audio(TOTAL_FRAMES, &frames_of(pad)))
        .collect();
    let late_came = if live {
        feed_in_real_time(&srcs, &audio, late)
    } else {
        feed_at_once(&srcs, &audio, late)
    };
    let msg = ended
        .recv_timeout(Duration::from_secs(60))
        .expect("EOS within 60 s");
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let stats = pipeline
        .by_name("e")
        .unwrap()
        .property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let words = words.lock().unwrap().clone();
    let warnings = warnings.lock().unwrap().clone();
    Outcome {
        words,
        retimed: stats.get::<u64>("words-retimed").unwrap(),
        warnings,
        late_came,
    }
}

/// Not live: every word at its own time, in order, none before the late
/// pad's first data or EOS.
fn assert_not_live_waits_for_the_late_pad(element: Element, late: Late) {
    let outcome = run(element, false, late);
    outcome.assert_in_time_order();
    outcome.assert_on_time("sink_0", &frames_of(0));
    match late {
        Late::Starts(_) => outcome.assert_on_time("sink_1", &frames_of(1)),
        Late::Never => assert!(outcome.words_of("sink_1").is_empty()),
    }
    assert!(
        outcome.first_left() >= outcome.late_came,
        "{element:?}, {late:?}: the first word left {:?} before the late pad brought anything",
        outcome.late_came - outcome.first_left()
    );
    assert_eq!(outcome.retimed, 0);
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

/// Live, the late pad starting 3 s late: the first pad's words go out on
/// time, the late pad's missed words are re-timed forward, never back.
fn assert_live_retimes_the_late_pads_words(element: Element) {
    let outcome = run(element, true, Late::Starts(Duration::from_secs(3)));
    outcome.assert_in_time_order();
    outcome.assert_on_time("sink_0", &frames_of(0));
    assert!(
        outcome.first_left() < outcome.late_came,
        "{element:?}: the first pad's words did not wait for the late one beyond the latency"
    );
    let late = outcome.words_of("sink_1");
    assert_eq!(late.len(), frames_of(1).len(), "{element:?}: {late:?}");
    for (t, f) in late.iter().zip(frames_of(1)) {
        assert!(
            *t + PLACEMENT_NS >= truth(f),
            "{element:?}: never earlier: {late:?}"
        );
    }
    let moved = late
        .iter()
        .zip(frames_of(1))
        .filter(|(t, f)| **t > truth(*f) + PLACEMENT_NS)
        .count() as u64;
    assert!(
        moved > 0,
        "{element:?}: the missed words were re-timed: {late:?}"
    );
    assert!(
        outcome.retimed >= moved,
        "{element:?}: {} counted, {moved} moved",
        outcome.retimed
    );
    assert!(
        !outcome.warnings.is_empty() && (outcome.warnings.len() as u64) < outcome.retimed,
        "{element:?}: one WARNING per run of re-timed words, not per word: {:?}",
        outcome.warnings
    );
    assert!(
        outcome.warnings[0].contains("sink_1"),
        "{:?}",
        outcome.warnings
    );
}

/// Live: pads that start together, or a pad that brings nothing, hold
/// nothing back and re-time nothing.
fn assert_live_on_time(element: Element, late: Late) {
    let outcome = run(element, true, late);
    outcome.assert_in_time_order();
    outcome.assert_on_time("sink_0", &frames_of(0));
    match late {
        Late::Starts(_) => outcome.assert_on_time("sink_1", &frames_of(1)),
        Late::Never => {
            assert!(outcome.words_of("sink_1").is_empty());
            assert!(
                outcome.first_left() < outcome.late_came,
                "{element:?}: a pad that brings nothing holds the words back at most the latency"
            );
        }
    }
    assert_eq!(outcome.retimed, 0, "{element:?}, {late:?}");
    assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
}

const THREE_S: Late = Late::Starts(Duration::from_secs(3));
const AT_ONCE: Late = Late::Starts(Duration::ZERO);

#[test]
fn not_live_the_transcriber_waits_for_a_pad_whose_data_starts_3_s_late() {
    assert_not_live_waits_for_the_late_pad(Element::Transcriber, THREE_S);
}

#[test]
fn not_live_the_sink_waits_for_a_pad_whose_data_starts_3_s_late() {
    assert_not_live_waits_for_the_late_pad(Element::Sink, THREE_S);
}

#[test]
fn not_live_pads_that_start_together_give_every_word_in_order() {
    for element in [Element::Transcriber, Element::Sink] {
        let outcome = run(element, false, AT_ONCE);
        outcome.assert_in_time_order();
        outcome.assert_on_time("sink_0", &frames_of(0));
        outcome.assert_on_time("sink_1", &frames_of(1));
        assert_eq!(outcome.retimed, 0);
    }
}

#[test]
fn not_live_a_pad_that_brings_only_eos_holds_the_words_until_then() {
    assert_not_live_waits_for_the_late_pad(Element::Transcriber, Late::Never);
    assert_not_live_waits_for_the_late_pad(Element::Sink, Late::Never);
}

#[test]
fn live_the_transcriber_retimes_the_words_of_a_pad_that_starts_3_s_late() {
    assert_live_retimes_the_late_pads_words(Element::Transcriber);
}

#[test]
fn live_the_sink_retimes_the_words_of_a_pad_that_starts_3_s_late() {
    assert_live_retimes_the_late_pads_words(Element::Sink);
}

#[test]
fn live_pads_that_start_together_give_every_word_on_time() {
    assert_live_on_time(Element::Transcriber, AT_ONCE);
    assert_live_on_time(Element::Sink, AT_ONCE);
}

#[test]
fn live_a_pad_that_never_brings_data_holds_nothing_back() {
    assert_live_on_time(Element::Transcriber, Late::Never);
    assert_live_on_time(Element::Sink, Late::Never);
}
