// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Live translation keeps pace with a slow chat server (issue 43 §1): each
//! unit's request goes out when the unit closes, beside those in flight;
//! past what the server answers at once, the units that waited go out
//! merged; translations leave in unit order; several servers share the
//! requests; a server that dies with requests in flight costs no order and
//! no unit twice. And `rstranscribe/final-transcript` ends each utterance
//! on the src pad and each translation on a translate pad (§2).
//!
//! The tone fixture says "x" for each 80 ms frame of tone: one frame every
//! 1.2 s is a unit every 1.2 s (each closed by the 700 ms pause after it),
//! the rate of the speech.

#![cfg(all(feature = "local", feature = "translate"))]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::chat_double::{ChatDouble, ChatFaults, SERVED_MODEL};
use common::{tone_audio, tone_model};
use gst::prelude::*;

const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
/// One word every 15 frames (1.2 s).
const EVERY: usize = 15;
const FINAL_TRANSCRIPT: &str = "rstranscribe/final-transcript";

/// What passed a pad: buffers (wall-clock arrival, PTS, duration, text)
/// and, in order with them, final-transcript events (as `None` text).
type Log = Arc<Mutex<Vec<(Instant, u64, u64, Option<String>)>>>;

fn record(pad: &gst::Pad) -> Log {
    let log: Log = Arc::default();
    let into = log.clone();
    pad.add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            let now = Instant::now();
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) if b.size() > 0 => {
                    let (pts, dur) = (b.pts().unwrap(), b.duration().unwrap());
                    into.lock().unwrap().push((
                        now,
                        pts.nseconds(),
                        dur.nseconds(),
                        Some(common::text_of(b)),
                    ));
                }
                Some(gst::PadProbeData::Event(e))
                    if e.structure().is_some_and(|s| s.name() == FINAL_TRANSCRIPT) =>
                {
                    into.lock().unwrap().push((now, 0, 0, None));
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
    log
}

struct Run {
    words: Vec<(Instant, u64, u64, Option<String>)>,
    translated: Vec<(Instant, u64, u64, Option<String>)>,
    stats: gst::Structure,
    /// From the last audio pushed to EOS.
    eos_after: Duration,
}

impl Run {
    fn buffers(log: &[(Instant, u64, u64, Option<String>)]) -> Vec<(Instant, u64, u64, String)> {
        log.iter()
            .filter_map(|(at, pts, dur, text)| text.clone().map(|t| (*at, *pts, *dur, t)))
            .collect()
    }

    fn translation_stats(&self) -> gst::Structure {
        let pads = self.stats.get::<gst::Array>("translations").unwrap();
        pads.as_slice()[0].get::<gst::Structure>().unwrap()
    }

    fn count(&self, field: &str) -> u64 {
        self.translation_stats().get::<u64>(field).unwrap()
    }

    /// For each source word, the time from its arrival on the src pad to
    /// the arrival of the translation that covers it. Translations leave
    /// in unit order, each with one "x" per word (late ones re-timed to
    /// where the pad stands, so their PTS cannot tell which words).
    fn lags(&self) -> Vec<Duration> {
        let words = Run::buffers(&self.words);
        let mut words = words.iter();
        let mut lags = Vec::new();
        for (out, .., text) in Run::buffers(&self.translated) {
            for _ in text.split_whitespace().filter(|w| *w == "x") {
                let (said, ..) = words.next().expect("a word for each translated x");
                lags.push(out.saturating_duration_since(*said));
            }
        }
        assert!(words.next().is_none(), "every word translated");
        lags
    }

    /// For each translation, the time from the arrival of the last source
    /// word it covers (the double translates "w1 w2" as "[es] w1 w2").
    fn lags_from_last_words(&self) -> Vec<Duration> {
        let words = Run::buffers(&self.words);
        let mut words = words.iter();
        let mut lags = Vec::new();
        for (out, .., text) in Run::buffers(&self.translated) {
            let n = text.split_whitespace().filter(|w| *w != "[es]").count();
            let (said, ..) = words.by_ref().take(n).last().expect("its words");
            lags.push(out.saturating_duration_since(*said));
        }
        assert!(words.next().is_none(), "every word translated");
        lags
    }
}

/// `seconds` of a word every 1.2 s, live, through a transcriber with one
/// Spanish pad on `urls`.
fn run_live(urls: &str, seconds: usize, props: &str) -> Run {
    let total = seconds * 1000 / 80;
    let frames: Vec<usize> = (10..total - 10).step_by(EVERY).collect();
    run_live_of(&tone_model(), &tone_audio(total, &frames), urls, props)
}

/// `audio` through `model`, live, with one Spanish pad on `urls`.
fn run_live_of(model: &str, audio: &[f32], urls: &str, props: &str) -> Run {
    let props = format!("overload=queue translate-model={SERVED_MODEL} {props}");
    let pipeline = common::translating::pipeline_of(model, urls, &props, "es", true);
    let by_name = |n: &str| pipeline.by_name(n).unwrap();
    let words = record(&by_name("words").static_pad("sink").unwrap());
    let translated = record(&by_name("translated").static_pad("sink").unwrap());
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = by_name("src");
    common::push_in_real_time(&src, audio, &clock, || {});
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let ended = Instant::now();
    common::expect_eos(&pipeline);
    let eos_after = ended.elapsed();
    let stats = by_name("t").property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let words = words.lock().unwrap().clone();
    let translated = translated.lock().unwrap().clone();
    Run {
        words,
        translated,
        stats,
        eos_after,
    }
}

/// A server that answers in `seconds`, streamed as a model streams (its
/// first word after 300 ms), `slots` requests at once.
fn slow(seconds: u64, slots: Option<usize>) -> ChatDouble {
    ChatDouble::start(ChatFaults {
        delay: Some(Duration::from_secs(seconds)),
        first_token: Some(Duration::from_millis(300).min(Duration::from_secs(seconds))),
        slots,
        ..ChatFaults::default()
    })
}

/// Every word's "x" is translated exactly once, in order.
fn assert_every_unit_translated_once_in_order(run: &Run) {
    let words = Run::buffers(&run.words).len();
    let translations = Run::buffers(&run.translated);
    let xs: usize = translations
        .iter()
        .map(|(.., t)| t.split_whitespace().filter(|w| *w == "x").count())
        .sum();
    assert_eq!(xs, words, "each unit's word once: {translations:?}");
    let starts: Vec<u64> = translations.iter().map(|(_, pts, ..)| *pts).collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
}

fn worst(lags: &[Duration]) -> Duration {
    lags.iter().max().copied().unwrap_or_default()
}

#[test]
fn with_a_3_s_server_each_translation_leaves_about_one_answer_after_its_unit() {
    let server = slow(3, None);
    let run = run_live(&server.base(), 24, "");
    let lags = run.lags();
    assert!(lags.len() >= 18, "{} words", lags.len());
    // One answer (3 s), the pause that closes a unit (0.7 s) and a second
    // for a busy machine; sent one after the other they would have
    // waited 3 s per unit before them (the last about 50 s).
    assert!(worst(&lags) <= Duration::from_millis(4_700), "{lags:?}");
    assert_eq!(run.count("catch-ups"), 0, "{}", run.stats);
    assert_eq!(run.count("requests"), run.count("units"));
    assert_every_unit_translated_once_in_order(&run);
    assert!(
        run.eos_after <= Duration::from_secs(6),
        "{:?}",
        run.eos_after
    );
}

#[test]
fn a_server_answering_one_request_at_a_time_gets_catch_ups_and_the_lag_stays_bounded() {
    let server = slow(3, Some(1));
    let run = run_live(&server.base(), 36, "");
    let lags = run.lags();
    assert!(lags.len() >= 27, "{} words", lags.len());
    // Two answers and the pause, a second for the machine: bounded, and
    // no larger at the end than at the start.
    let bound = Duration::from_millis(7_700);
    assert!(worst(&lags) <= bound, "{lags:?}");
    let half = lags.len() / 2;
    assert!(worst(&lags[half..]) <= bound, "{lags:?}");
    assert!(run.count("catch-ups") > 0, "{}", run.stats);
    assert!(run.count("requests") < run.count("units"), "{}", run.stats);
    assert_every_unit_translated_once_in_order(&run);
}

#[test]
fn two_servers_share_the_requests() {
    let (a, b) = (slow(3, Some(1)), slow(3, Some(1)));
    let run = run_live(&format!("{},{}", a.base(), b.base()), 24, "");
    let (on_a, on_b) = (a.requests().len(), b.requests().len());
    let total = on_a + on_b;
    assert!(
        on_a * 10 >= total * 3 && on_b * 10 >= total * 3,
        "{on_a} + {on_b}"
    );
    assert!(worst(&run.lags()) <= Duration::from_millis(7_700));
    assert_every_unit_translated_once_in_order(&run);
}

#[test]
fn a_server_that_dies_with_requests_in_flight_costs_no_order_and_no_unit_twice() {
    let mut dying = slow(2, None);
    let other = slow(2, None);
    let urls = format!("{},{}", dying.base(), other.base());
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(8));
        dying.kill();
        dying
    });
    let run = run_live(&urls, 20, "");
    let dying = killer.join().unwrap();
    assert!(
        !dying.requests().is_empty(),
        "the dying server had requests"
    );
    let (units, translated, failures) = (
        run.count("units"),
        run.count("translated"),
        run.count("failures"),
    );
    assert_eq!(translated + failures, units, "{}", run.stats);
    let translations = Run::buffers(&run.translated);
    let starts: Vec<u64> = translations.iter().map(|(_, pts, ..)| *pts).collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
    let xs: u64 = translations
        .iter()
        .map(|(.., t)| t.split_whitespace().filter(|w| *w == "x").count() as u64)
        .sum();
    assert_eq!(xs, translated, "no unit twice");
    // The words on the src pad are all there, whatever the servers did.
    assert!(Run::buffers(&run.words).len() >= 14);
}

#[test]
fn speech_cut_into_units_by_the_lookahead_keeps_pace_with_a_3_s_server() {
    // espeak-ng speech through the tiny model, which writes words all the
    // way through: translate-lookahead=1200 closes a unit every 1.2 s.
    let dir = common::scratch_dir("pacing-speech");
    let speech = common::espeak(
        "Good evening. Tonight the council met to discuss the new bridge, the \
         library hours and the budget for the coming year. Residents asked \
         about parking near the station, and the mayor promised an answer \
         before the summer.",
        None,
        &dir,
    );
    let server = slow(3, None);
    let model = common::tiny_model().display().to_string();
    let run = run_live_of(&model, &speech, &server.base(), "translate-lookahead=1200");
    let lags = run.lags_from_last_words();
    eprintln!("each translation after its unit's last word: {lags:?}");
    assert!(lags.len() >= 8, "{} units", lags.len());
    // One answer and a second for a busy machine after the unit's last
    // word (the next word closes it): not 3 s per unit before it.
    assert!(worst(&lags) <= Duration::from_millis(4_700), "{lags:?}");
    assert_eq!(run.count("catch-ups"), 0, "{}", run.stats);
    assert_eq!(run.count("failures"), 0, "{}", run.stats);
}

/// The final-transcript events among a pad's buffers, as `|`.
fn shape(log: &[(Instant, u64, u64, Option<String>)]) -> String {
    log.iter()
        .map(|(.., text)| text.as_deref().map_or("|".to_owned(), |t| format!("[{t}]")))
        .collect()
}

#[test]
fn final_transcript_ends_each_utterance_on_the_src_pad_and_each_translation() {
    let server = slow(0, None);
    let run = run_live(&server.base(), 6, "");
    // Units every 1.2 s: each word its own utterance (the 700 ms pause),
    // the last one ended at EOS.
    let words = Run::buffers(&run.words).len();
    assert!(words >= 4);
    assert_eq!(shape(&run.words), "[x]|".repeat(words));
    let translations = Run::buffers(&run.translated).len();
    assert_eq!(translations, words);
    assert_eq!(shape(&run.translated), "[[es] x]|".repeat(words));
}

#[test]
fn final_transcript_never_cuts_an_utterance() {
    common::init_plugin();
    // Bursts of 3, 5 and 10 words 80 ms apart: 1.36 s between the first
    // two (a pause: two utterances), 400 ms between the last two (no
    // pause: one utterance of 15 words, however long).
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src format=time caps={F32_CAPS} ! \
         voxtralrttranscriber model-path={} threads=1 ! fakesink name=words",
        tone_model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let words = record(
        &pipeline
            .by_name("words")
            .unwrap()
            .static_pad("sink")
            .unwrap(),
    );
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let audio = tone_audio(66, &common::tone_frames());
    let buffer = gst::Buffer::from_mut_slice(common::to_f32le(&audio));
    let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer]);
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::expect_eos(&pipeline);
    pipeline.set_state(gst::State::Null).unwrap();
    let shape = shape(&words.lock().unwrap());
    assert_eq!(shape.replace("[x]", "x"), "xxx|xxxxxxxxxxxxxxx|");
}
