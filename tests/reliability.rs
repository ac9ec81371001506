// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Long streams, pipeline life, bad input and faults, in reduced form (the
//! full-length runs are in docs/reliability.md).

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;

const SECOND: u64 = 1_000_000_000;
const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
const S16_CAPS: &str = "audio/x-raw,format=S16LE,rate=16000,channels=1,layout=interleaved";

fn model() -> String {
    common::tiny_model().display().to_string()
}

fn harness(extra: &str, caps: &str) -> gst_check::Harness {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 {extra}",
        model()
    ));
    h.set_src_caps_str(caps);
    h
}

fn buffer(bytes: Vec<u8>, pts: Option<u64>) -> gst::Buffer {
    let mut b = gst::Buffer::from_mut_slice(bytes);
    b.get_mut()
        .unwrap()
        .set_pts(pts.map(gst::ClockTime::from_nseconds));
    b
}

/// Sends EOS and returns the (text, pts) of every buffer before it.
fn finish(h: &mut gst_check::Harness) -> Vec<(String, u64)> {
    h.push_event(gst::event::Eos::new());
    let mut words = Vec::new();
    while let Ok(Some(b)) = h.pull_until_eos() {
        let map = b.map_readable().unwrap();
        words.push((
            std::str::from_utf8(&map).unwrap().to_owned(),
            b.pts().unwrap().nseconds(),
        ));
    }
    words
}

fn texts(words: &[(String, u64)]) -> String {
    words
        .iter()
        .map(|w| w.0.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn stats_of(h: &gst_check::Harness) -> gst::Structure {
    common::transcriber_in(h).property("stats")
}

fn vm_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn a_long_input_restarts_the_model_stream_without_losing_or_repeating_words() {
    let mut h = harness("max-stream-duration=2000", F32_CAPS);
    let audio = common::sine(7.0);
    h.push(buffer(common::to_f32le(&audio), Some(0))).unwrap();
    let words = finish(&mut h);
    let stats = stats_of(&h);
    // The fixture never pauses, so each stream ends at the first decode
    // (160 ms grid) past the limit plus its grace of a tenth: 2.24 s.
    assert_eq!(stats.get::<u64>("stream-restarts").unwrap(), 3);
    let stream = |s: f32| common::engine_text(&common::sine(s), 480, 160);
    let full = stream(2.24);
    let expected = [full.as_str(), &full, &full, &stream(7.0 - 3.0 * 2.24)].join(" ");
    assert_eq!(
        texts(&words),
        expected.trim_end(),
        "a word was lost or repeated at a seam"
    );
    // Timestamps run on across the seams: each stream's first word, "hello",
    // starts where the stream's audio starts.
    assert!(words.windows(2).all(|w| w[0].1 <= w[1].1));
    let hellos: Vec<u64> = words
        .iter()
        .filter(|w| w.0 == "hello")
        .map(|w| w.1)
        .collect();
    for k in 0..4 {
        assert!(
            hellos.contains(&(k * 2_240_000_000)),
            "no stream starts at {k} x 2.24 s: {hellos:?}"
        );
    }
}

#[test]
fn two_hundred_start_stop_cycles_leak_nothing_and_lose_no_words() {
    common::init_plugin();
    let line = format!(
        "audiotestsrc num-buffers=10 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink",
        model()
    );
    let pipeline = gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let expected = common::engine_text(&vec![0.0; 16_000], 480, 160)
        .split_whitespace()
        .count() as u64;
    let mut rss_after_warmup = 0;
    for cycle in 0..200 {
        let bus = pipeline.bus().unwrap();
        pipeline.set_state(gst::State::Playing).unwrap();
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(30),
                &[gst::MessageType::Eos, gst::MessageType::Error],
            )
            .expect("cycle stalled");
        assert!(
            matches!(msg.view(), gst::MessageView::Eos(_)),
            "cycle {cycle}: {msg:?}"
        );
        pipeline.set_state(gst::State::Null).unwrap();
        let words = pipeline
            .by_name("t")
            .unwrap()
            .property::<gst::Structure>("stats")
            .get::<u64>("words")
            .unwrap();
        assert_eq!(words, expected, "cycle {cycle}");
        if cycle == 19 {
            rss_after_warmup = vm_rss_kib();
        }
    }
    let growth = vm_rss_kib().saturating_sub(rss_after_warmup);
    eprintln!("RSS growth over 180 cycles: {growth} KiB");
    assert!(growth < 16 * 1024, "RSS grew {growth} KiB over 180 cycles");
}

#[test]
fn pausing_and_resuming_a_live_pipeline_neither_stalls_nor_loses_words() {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc is-live=true num-buffers=40 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink sync=true",
        model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(600));
        pipeline.set_state(gst::State::Paused).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        pipeline.set_state(gst::State::Playing).unwrap();
    }
    let msg = bus
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(30),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("stalled after pausing");
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let words = pipeline
        .by_name("t")
        .unwrap()
        .property::<gst::Structure>("stats")
        .get::<u64>("words")
        .unwrap();
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(words > 20, "only {words} words from 4 s of audio");
}

#[test]
fn after_a_seek_only_words_of_the_new_segment_come() {
    common::init_plugin();
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let pipeline = gst::parse::launch(&format!(
        "filesrc location=examples/data/sample.wav ! wavparse ! audioconvert ! audioresample ! \
         voxtralrttranscriber model-path={} threads=1 ! fakesink name=out signal-handoffs=true sync=true",
        model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let words = common::handoffs(&pipeline, "out");
    pipeline.set_state(gst::State::Paused).unwrap();
    pipeline.state(gst::ClockTime::from_seconds(10)).0.unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    std::thread::sleep(Duration::from_millis(800));
    pipeline
        .seek_simple(
            gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE,
            gst::ClockTime::from_seconds(3),
        )
        .unwrap();
    words.lock().unwrap().clear();
    let bus = pipeline.bus().unwrap();
    let msg = bus
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(30),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("stalled after the seek");
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    pipeline.set_state(gst::State::Null).unwrap();
    let words: Vec<u64> = words
        .lock()
        .unwrap()
        .iter()
        .map(|b| b.pts().unwrap().nseconds())
        .collect();
    assert!(!words.is_empty(), "no words after the seek");
    assert!(
        words.iter().all(|&pts| pts >= 3 * SECOND),
        "a word from before the seek: {words:?}"
    );
}

#[test]
fn four_elements_on_one_model_path_give_the_words_of_one() {
    common::init_plugin();
    let run = |n: usize| -> Vec<Vec<String>> {
        let pipelines: Vec<(gst::Pipeline, Arc<Mutex<Vec<gst::Buffer>>>)> = (0..n)
            .map(|_| {
                let p = gst::parse::launch(&format!(
                    "audiotestsrc num-buffers=20 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
                     voxtralrttranscriber model-path={} threads=1 ! fakesink name=out signal-handoffs=true",
                    model()
                ))
                .unwrap()
                .downcast::<gst::Pipeline>()
                .unwrap();
                let words = common::handoffs(&p, "out");
                (p, words)
            })
            .collect();
        for (p, _) in &pipelines {
            p.set_state(gst::State::Playing).unwrap();
        }
        pipelines
            .iter()
            .map(|(p, words)| {
                let msg = p
                    .bus()
                    .unwrap()
                    .timed_pop_filtered(
                        gst::ClockTime::from_seconds(60),
                        &[gst::MessageType::Eos, gst::MessageType::Error],
                    )
                    .unwrap();
                assert!(matches!(msg.view(), gst::MessageView::Eos(_)));
                p.set_state(gst::State::Null).unwrap();
                words.lock().unwrap().iter().map(common::text_of).collect()
            })
            .collect()
    };
    let alone = run(1).remove(0);
    assert!(!alone.is_empty());
    for words in run(4) {
        assert_eq!(words, alone);
    }
}

#[test]
fn nan_and_infinite_samples_become_silence_and_are_counted() {
    let mut h = harness("", F32_CAPS);
    let mut audio = common::sine(2.0);
    for i in (0..audio.len()).step_by(100) {
        audio[i] = if i % 200 == 0 {
            f32::NAN
        } else {
            f32::INFINITY
        };
    }
    h.push(buffer(common::to_f32le(&audio), Some(0))).unwrap();
    let words = finish(&mut h);
    assert_eq!(stats_of(&h).get::<u64>("samples-sanitized").unwrap(), 320);
    assert_eq!(
        texts(&words),
        common::engine_text(&common::sine(2.0), 480, 160)
    );
}

#[test]
fn odd_sized_s16_buffers_carry_the_half_sample() {
    let audio = common::sine(2.0);
    let bytes = common::to_s16le(&audio);
    let mut h = harness("", S16_CAPS);
    for (i, piece) in bytes.chunks(3201).enumerate() {
        let pts = (i == 0).then_some(0);
        h.push(buffer(piece.to_vec(), pts)).unwrap();
    }
    let split = finish(&mut h);
    let mut whole = harness("", S16_CAPS);
    whole.push(buffer(bytes, Some(0))).unwrap();
    assert_eq!(split, finish(&mut whole));
    assert_eq!(
        stats_of(&h).get::<u64>("audio-received").unwrap(),
        2 * SECOND
    );
}

#[test]
fn empty_buffers_are_accepted_and_change_nothing() {
    let audio = common::sine(1.5);
    let mut h = harness("", F32_CAPS);
    h.push(buffer(Vec::new(), Some(0))).unwrap();
    h.push(buffer(common::to_f32le(&audio), Some(0))).unwrap();
    h.push(buffer(Vec::new(), None)).unwrap();
    assert_eq!(
        texts(&finish(&mut h)),
        common::engine_text(&audio, 480, 160)
    );
}

#[test]
fn ten_minutes_in_one_buffer_are_transcribed_to_the_end() {
    let mut h = harness("", F32_CAPS);
    h.push(buffer(common::to_f32le(&common::sine(600.0)), Some(0)))
        .unwrap();
    let words = finish(&mut h);
    assert!(words.last().unwrap().1 > 599 * SECOND);
    assert_eq!(
        stats_of(&h).get::<u64>("audio-transcribed").unwrap(),
        600 * SECOND
    );
}

#[test]
fn a_caps_change_from_s16_to_f32_mid_stream_keeps_the_timeline() {
    let audio = common::sine(2.0);
    let mut h = harness("", S16_CAPS);
    h.push(buffer(common::to_s16le(&audio[..16_000]), Some(0)))
        .unwrap();
    h.push_event(gst::event::Caps::new(
        &F32_CAPS.parse::<gst::Caps>().unwrap(),
    ));
    h.push(buffer(common::to_f32le(&audio[16_000..]), Some(SECOND)))
        .unwrap();
    let words = finish(&mut h);
    assert_eq!(stats_of(&h).get::<u64>("stream-restarts").unwrap(), 0);
    assert!(words.windows(2).all(|w| w[0].1 <= w[1].1) && words.last().unwrap().1 < 2 * SECOND);
    assert_eq!(texts(&words), common::engine_text(&audio, 480, 160));
}

#[test]
fn a_segment_with_rate_two_keeps_buffer_timestamps() {
    let mut h = harness("", F32_CAPS);
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    segment.set_rate(2.0);
    h.push_event(gst::event::Segment::new(&segment));
    let audio = common::sine(2.0);
    h.push(buffer(common::to_f32le(&audio), Some(0))).unwrap();
    let words = finish(&mut h);
    // Timestamps stay in the segment's (stream) time: the audio's 2 s.
    assert!(words.last().unwrap().1 < 2 * SECOND && words.last().unwrap().1 > SECOND);
    let mut got_rate = None;
    while let Some(e) = h.try_pull_event() {
        if let gst::EventView::Segment(s) = e.view() {
            got_rate = Some(s.segment().rate());
        }
    }
    assert_eq!(got_rate, Some(2.0), "the segment goes downstream unchanged");
}

#[test]
fn an_unavailable_backend_is_an_error_at_start() {
    common::init_plugin();
    if gstvoxtralrt::engine::Backend::Cuda.is_available() {
        return;
    }
    let element = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", model())
        .property_from_str("backend", "cuda")
        .build()
        .unwrap();
    let pipeline = gst::Pipeline::new();
    pipeline.add(&element).unwrap();
    assert!(pipeline.set_state(gst::State::Ready).is_err());
    let msg = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(gst::ClockTime::from_seconds(5), &[gst::MessageType::Error])
        .unwrap();
    let gst::MessageView::Error(e) = msg.view() else {
        unreachable!()
    };
    assert!(
        e.error()
            .to_string()
            .contains("backend 'cuda' cannot be used"),
        "{}",
        e.error()
    );
    pipeline.set_state(gst::State::Null).unwrap();
}

/// Runs 5 s of audio into `tail` (which writes SRT to LOCATION) with a test
/// recognizer that fails for good after 2 s; returns whether it succeeded,
/// the error text and the number of words written in cues.
fn run_with_fault(tail: &str) -> (bool, String, usize) {
    common::init_plugin();
    let srt = common::scratch_dir(&format!("fault-{}", tail.len())).join("out.srt");
    let tail = tail
        .replace("MODEL", &model())
        .replace("LOCATION", &srt.display().to_string());
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc num-buffers=50 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! {tail}"
    ))
    .unwrap()
    .downcast::<gst::Bin>()
    .unwrap();
    let element = pipeline
        .iterate_elements()
        .into_iter()
        .flatten()
        .find(|e| {
            e.factory()
                .is_some_and(|f| f.name().starts_with("voxtralrt"))
        })
        .unwrap();
    common::recognizers::wrap(&element, |inner| {
        Box::new(common::recognizers::FaultAfter {
            inner,
            after: 2 * 16_000,
            fed: 0,
        })
    });
    let msg = common::run_to_end(pipeline.upcast_ref(), Duration::from_secs(60));
    let (ok, log) = match msg.view() {
        gst::MessageView::Error(e) => (false, e.error().to_string()),
        _ => (true, String::new()),
    };
    let words = std::fs::read_to_string(&srt)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.contains(" --> ") && l.parse::<u64>().is_err())
        .flat_map(str::split_whitespace)
        .count();
    (ok, log, words)
}

/// 20 s with two end tokens for the EOS fixture, each in the middle of
/// tone bursts (tests/fixtures/README-tone-eos.md): 1 kHz frames write "x",
/// a 2 kHz frame is the end token, after which the library decodes nothing
/// more in that stream. The delay is the default 480 ms (6 frames).
fn audio_with_two_end_tokens() -> Vec<f32> {
    let mut audio = vec![0.0f32; 250 * common::FRAME];
    common::add_tone(&mut audio, 10..13, 1000.0);
    common::add_tone(&mut audio, 46..47, 2000.0);
    common::add_tone(&mut audio, 47..80, 1000.0);
    common::add_tone(&mut audio, 120..150, 1000.0);
    common::add_tone(&mut audio, 150..151, 2000.0);
    common::add_tone(&mut audio, 151..200, 1000.0);
    audio
}

fn words_of(model: &str, audio: &[f32]) -> (Vec<(String, u64)>, gst::Structure) {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1",
        common::fixture(model).display()
    ));
    h.set_src_caps_str(F32_CAPS);
    for (k, piece) in audio.chunks(1600).enumerate() {
        let pts = k as u64 * 100_000_000;
        h.push(buffer(common::to_f32le(piece), Some(pts))).unwrap();
    }
    let words = finish(&mut h);
    (words, stats_of(&h))
}

#[test]
fn a_stream_the_model_ends_on_its_own_loses_no_word_at_the_seam() {
    // The tone fixture writes the same words for the same audio and never
    // ends a stream: it is what the element must give.
    let audio = audio_with_two_end_tokens();
    let (expected, _) = words_of("voxtral-rt-tone.gguf", &audio);
    let (words, stats) = words_of("voxtral-rt-tone-eos.gguf", &audio);
    assert_eq!(expected.len(), 3 + 33 + 30 + 49);
    assert_eq!(
        words, expected,
        "words or timestamps differ at a seam after an end token"
    );
    assert_eq!(stats.get::<u64>("model-ended-streams").unwrap(), 2);
    assert_eq!(stats.get::<u64>("stopped-model-restarts").unwrap(), 0);
}

#[test]
fn without_sight_of_the_end_token_a_model_silent_over_sound_is_restarted() {
    // The fallback for a transcribe.cpp whose polls the engine does not
    // know (a stream told to ignore them, through the recognizer seam):
    // after 4 s of sound without text a new stream starts, and the words of
    // those 4 s are lost.
    common::init_plugin();
    let dir = common::scratch_dir("blind-to-model-end");
    let (wav, out) = (dir.join("in.wav"), dir.join("out.txt"));
    let mut audio = vec![0.0f32; 200 * common::FRAME];
    common::add_tone(&mut audio, 10..13, 1000.0);
    common::add_tone(&mut audio, 20..21, 2000.0);
    common::add_tone(&mut audio, 30..190, 1000.0);
    common::write_wav(&wav, &audio);
    let model = common::fixture("voxtral-rt-tone-eos.gguf");
    let pipeline = gst::parse::launch(&format!(
        "filesrc location={} ! wavparse ! voxtralrtsink name=s threads=1 model-path={} location={}",
        wav.display(),
        model.display(),
        out.display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let sink = pipeline.by_name("s").unwrap();
    common::recognizers::wrap(&sink, move |_| {
        let spec = gstvoxtralrt::engine::ModelSpec {
            backend: gstvoxtralrt::engine::Backend::Cpu,
            ..gstvoxtralrt::engine::ModelSpec::new(common::fixture("voxtral-rt-tone-eos.gguf"))
        };
        let mut stream = gstvoxtralrt::engine::Stream::open(&spec, 1).unwrap();
        stream.ignore_decoder_polls();
        Box::new(stream)
    });
    let msg = common::run_to_end(pipeline.upcast_ref(), Duration::from_secs(60));
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let stats = sink.property::<gst::Structure>("stats");
    assert_eq!(stats.get::<u64>("stopped-model-restarts").unwrap(), 1);
    let words = std::fs::read_to_string(&out).unwrap();
    let words = words.split_whitespace().count();
    // The 3 words before the end token; then sound is counted per decode
    // (2 frames): the end-token frame's decode and 24 from frame 30 make
    // 4 s, so a new stream starts at frame 78 and writes all its frames but
    // the 6 of its prompt. A decode either way is allowed for.
    let expected = 3 + (190 - 78 - 6);
    assert!(
        words.abs_diff(expected) <= 3,
        "{words} words, expected about {expected} of the 163 the tone gives"
    );
}

#[test]
fn a_sink_whose_engine_fails_errors_out_and_keeps_the_words_before() {
    let (ok, log, words) =
        run_with_fault("voxtralrtsink model-path=MODEL threads=1 location=LOCATION");
    assert!(!ok, "the pipeline did not fail\n{log}");
    assert!(log.contains("fault injected"), "{log}");
    assert!(words >= 10, "only {words} words in cues before the fault");
}
