// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! voxtralrttranscriber in harnesses and real pipelines, on the fixture
//! model with one thread.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::time::{Duration, Instant};

use gst::prelude::*;

const SECOND: u64 = 1_000_000_000;
const S16_CAPS: &str = "audio/x-raw,format=S16LE,rate=16000,channels=1,layout=interleaved";
const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

fn element_line(extra: &str) -> String {
    format!(
        "voxtralrttranscriber model-path={} threads=1 {extra}",
        common::tiny_model().display()
    )
}

fn harness(extra: &str, caps: &str) -> gst_check::Harness {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&element_line(extra));
    h.set_src_caps_str(caps);
    h
}

/// A buffer of `samples` in the caps' format, stamped at `pts` (ns).
fn audio_buffer(samples: &[f32], caps: &str, pts: Option<u64>) -> gst::Buffer {
    let bytes = if caps == S16_CAPS {
        common::to_s16le(samples)
    } else {
        common::to_f32le(samples)
    };
    let mut buffer = gst::Buffer::from_mut_slice(bytes);
    {
        let b = buffer.get_mut().unwrap();
        b.set_pts(pts.map(gst::ClockTime::from_nseconds));
        b.set_duration(gst::ClockTime::from_nseconds(
            samples.len() as u64 * SECOND / 16_000,
        ));
    }
    buffer
}

/// An F32 buffer at `pts` (ns) after missing input: flagged DISCONT.
fn buffer_after_a_hole(samples: &[f32], pts: u64) -> gst::Buffer {
    let mut buffer = audio_buffer(samples, F32_CAPS, Some(pts));
    buffer
        .get_mut()
        .unwrap()
        .set_flags(gst::BufferFlags::DISCONT);
    buffer
}

/// Pushes `samples` in buffers of `chunk` samples from `start` (ns).
fn push_audio(h: &mut gst_check::Harness, samples: &[f32], caps: &str, start: u64, chunk: usize) {
    let mut pos = start;
    for piece in samples.chunks(chunk) {
        h.push(audio_buffer(piece, caps, Some(pos))).unwrap();
        pos += piece.len() as u64 * SECOND / 16_000;
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    pts: u64,
    duration: u64,
}

/// Sends EOS and collects every buffer up to it.
fn finish(h: &mut gst_check::Harness) -> Vec<Word> {
    h.push_event(gst::event::Eos::new());
    let mut words = Vec::new();
    while let Ok(Some(buffer)) = h.pull_until_eos() {
        let map = buffer.map_readable().unwrap();
        words.push(Word {
            text: std::str::from_utf8(&map).expect("utf8 text").to_owned(),
            pts: buffer.pts().expect("every buffer has a PTS").nseconds(),
            duration: buffer
                .duration()
                .expect("every buffer has a duration")
                .nseconds(),
        });
    }
    words
}

fn joined(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn assert_in_order_within(words: &[Word], start: u64, end: u64) {
    let mut last = 0;
    for w in words {
        assert!(w.pts >= last, "{w:?} goes back in time");
        assert!(
            w.pts >= start && w.pts + w.duration <= end,
            "{w:?} outside {start}..{end}"
        );
        last = w.pts;
    }
}

#[test]
fn s16_and_f32_input_give_the_same_words() {
    let audio = common::sine(3.0);
    let mut results = Vec::new();
    for caps in [S16_CAPS, F32_CAPS] {
        let mut h = harness("", caps);
        push_audio(&mut h, &audio, caps, 0, 1600);
        results.push(finish(&mut h));
    }
    assert!(!results[0].is_empty());
    assert_eq!(results[0], results[1]);
}

#[test]
fn every_word_is_timed_in_order_and_nothing_is_lost() {
    let audio = common::sine(4.0);
    let mut h = harness("", S16_CAPS);
    push_audio(&mut h, &audio, S16_CAPS, 0, 1024);
    let words = finish(&mut h);
    assert_in_order_within(&words, 0, 4 * SECOND);
    // The element loses nothing: its words are the engine's own text.
    let quantised: Vec<f32> = common::to_s16le(&audio)
        .chunks_exact(2)
        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
        .collect();
    let expected = common::engine_text(&quantised, 480, 160);
    assert_eq!(
        joined(&words),
        expected.split_whitespace().collect::<Vec<_>>().join(" ")
    );
}

#[test]
fn words_come_out_delay_behind_the_audio() {
    // The fixture's first word appears once 600 ms of audio are in; with the
    // 480 ms delay taken off it starts at the very beginning.
    let mut h = harness("decode-interval=80", F32_CAPS);
    push_audio(&mut h, &common::sine(2.0), F32_CAPS, 0, 1600);
    let words = finish(&mut h);
    assert_eq!(words[0].text, "hello");
    assert!(words[0].pts < 200_000_000, "{:?}", words[0]);
}

#[test]
fn a_non_zero_segment_start_shifts_every_timestamp() {
    let start = 10 * SECOND;
    let mut h = harness("", F32_CAPS);
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    segment.set_start(gst::ClockTime::from_nseconds(start));
    segment.set_time(gst::ClockTime::ZERO);
    segment.set_base(gst::ClockTime::from_seconds(3));
    h.push_event(gst::event::Segment::new(&segment));
    push_audio(&mut h, &common::sine(3.0), F32_CAPS, start, 1600);
    let words = finish(&mut h);
    assert!(!words.is_empty());
    assert_in_order_within(&words, start, start + 3 * SECOND);
    let reference = {
        let mut h = harness("", F32_CAPS);
        push_audio(&mut h, &common::sine(3.0), F32_CAPS, 0, 1600);
        finish(&mut h)
    };
    let shifted: Vec<u64> = reference.iter().map(|w| w.pts + start).collect();
    assert_eq!(words.iter().map(|w| w.pts).collect::<Vec<_>>(), shifted);
}

#[test]
fn lateness_is_added_to_every_timestamp() {
    let mut plain = harness("", F32_CAPS);
    push_audio(&mut plain, &common::sine(2.0), F32_CAPS, 0, 1600);
    let mut late = harness("lateness=700", F32_CAPS);
    push_audio(&mut late, &common::sine(2.0), F32_CAPS, 0, 1600);
    let (plain, late) = (finish(&mut plain), finish(&mut late));
    assert_eq!(plain.len(), late.len());
    for (p, l) in plain.iter().zip(&late) {
        assert_eq!(l.pts, p.pts + 700_000_000);
    }
}

#[test]
fn a_short_hole_after_a_discont_is_filled_and_timed_right() {
    let audio = common::sine(2.0);
    let mut h = harness("", F32_CAPS);
    push_audio(&mut h, &audio, F32_CAPS, 0, 1600);
    // One second of input missing, then DISCONT.
    h.push(buffer_after_a_hole(&audio, 3 * SECOND)).unwrap();
    let words = finish(&mut h);
    assert_in_order_within(&words, 0, 5 * SECOND);
    // The hole was filled with silence: the engine saw 5 s of audio.
    let mut filled = audio.clone();
    filled.extend(std::iter::repeat_n(0.0, 16_000));
    filled.extend(&audio);
    let expected = common::engine_text(&filled, 480, 160);
    assert_eq!(
        joined(&words),
        expected.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let stats = common::transcriber_in(&h).property::<gst::Structure>("stats");
    assert_eq!(stats.get::<u64>("stream-restarts").unwrap(), 0);
}

#[test]
fn a_long_hole_ends_the_stream_and_the_next_one_starts_after_it() {
    let audio = common::sine(2.0);
    let mut h = harness("", F32_CAPS);
    push_audio(&mut h, &audio, F32_CAPS, 0, 1600);
    h.push(buffer_after_a_hole(&audio, 10 * SECOND)).unwrap();
    let words = finish(&mut h);
    let stats = common::transcriber_in(&h).property::<gst::Structure>("stats");
    assert_eq!(stats.get::<u64>("stream-restarts").unwrap(), 1);
    let (before, later): (Vec<Word>, Vec<Word>) =
        words.into_iter().partition(|w| w.pts < 5 * SECOND);
    assert_in_order_within(&before, 0, 2 * SECOND);
    assert_in_order_within(&later, 10 * SECOND, 12 * SECOND);
    let one = common::engine_text(&audio, 480, 160);
    assert_eq!(joined(&before), one);
    assert_eq!(joined(&later), one);
}

#[test]
fn buffers_without_timestamps_continue_the_timeline() {
    let audio = common::sine(2.0);
    let mut h = harness("", F32_CAPS);
    for (i, piece) in audio.chunks(1600).enumerate() {
        let pts = (i == 0).then_some(0);
        h.push(audio_buffer(piece, F32_CAPS, pts)).unwrap();
    }
    let words = finish(&mut h);
    assert_in_order_within(&words, 0, 2 * SECOND);
    assert_eq!(joined(&words), common::engine_text(&audio, 480, 160));
}

#[test]
fn eos_in_the_middle_of_a_word_hands_it_on() {
    // 1.05 s ends while the fixture is in the middle of "voxtral".
    let audio = common::sine(1.05);
    let mut h = harness("", F32_CAPS);
    push_audio(&mut h, &audio, F32_CAPS, 0, 1600);
    let words = finish(&mut h);
    let expected = common::engine_text(&audio, 480, 160);
    assert_eq!(joined(&words), expected);
    assert!(words.last().unwrap().pts + words.last().unwrap().duration <= 1_050_000_000);
}

#[test]
fn silence_from_upstream_goes_downstream_as_gaps() {
    let mut h = harness("", F32_CAPS);
    h.push_event(
        gst::event::Gap::builder(gst::ClockTime::ZERO)
            .duration(gst::ClockTime::from_seconds(5))
            .build(),
    );
    push_audio(&mut h, &common::sine(1.0), F32_CAPS, 5 * SECOND, 1600);
    let words = finish(&mut h);
    assert!(words.iter().all(|w| w.pts >= 5 * SECOND));
    let mut gaps = Vec::new();
    while let Some(event) = h.try_pull_event() {
        if let gst::EventView::Gap(g) = event.view() {
            gaps.push(g.get());
        }
    }
    assert!(
        gaps.iter()
            .any(|(pts, d)| pts.is_zero() && *d == Some(gst::ClockTime::from_seconds(5))),
        "{gaps:?}"
    );
}

#[test]
fn a_flush_stops_a_long_decode_and_the_next_stream_works() {
    let mut h = harness("", F32_CAPS);
    // Ten minutes in one buffer: minutes of work for the worker.
    h.push(audio_buffer(&common::sine(600.0), F32_CAPS, Some(0)))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let flushed_at = Instant::now();
    assert!(h.push_event(gst::event::FlushStart::new()));
    assert!(h.push_event(gst::event::FlushStop::new(true)));
    let element = common::transcriber_in(&h);
    let transcribed = element
        .property::<gst::Structure>("stats")
        .get::<u64>("audio-transcribed")
        .unwrap();
    assert!(transcribed < 600 * SECOND, "the long decode ran to its end");
    // Words that left before the flush are no concern here.
    while h.try_pull().is_some() {}
    h.push_event(gst::event::Segment::new(&gst::FormattedSegment::<
        gst::ClockTime,
    >::new()));
    push_audio(&mut h, &common::sine(2.0), F32_CAPS, 0, 1600);
    // Only the words of the new stream arrive, timed from its start.
    let mut words = Vec::new();
    h.push_event(gst::event::Eos::new());
    while let Ok(Some(buffer)) = h.pull_until_eos() {
        words.push(buffer.pts().unwrap().nseconds());
    }
    let elapsed = flushed_at.elapsed();
    eprintln!("flush to end of the next stream: {elapsed:?}");
    let expected = common::engine_text(&common::sine(2.0), 480, 160);
    assert_eq!(words.len(), expected.split_whitespace().count());
    assert!(words.iter().all(|&pts| pts < 2 * SECOND));
}

#[test]
fn lines_output_cuts_at_the_line_length() {
    let mut h = harness("output=lines max-line-chars=20", F32_CAPS);
    push_audio(&mut h, &common::sine(4.0), F32_CAPS, 0, 1600);
    let lines = finish(&mut h);
    assert!(lines.len() > 3);
    for line in &lines {
        assert!(line.text.chars().count() <= 20, "{line:?}");
    }
    assert_in_order_within(&lines, 0, 4 * SECOND);
    assert_eq!(
        joined(&lines),
        common::engine_text(&common::sine(4.0), 480, 160)
    );
}

#[test]
fn the_language_code_is_tagged_on_the_output() {
    let mut h = harness("language-code=fr-FR", F32_CAPS);
    push_audio(&mut h, &common::sine(1.0), F32_CAPS, 0, 1600);
    finish(&mut h);
    let mut found = None;
    while let Some(event) = h.try_pull_event() {
        if let gst::EventView::Tag(t) = event.view() {
            found = t
                .tag()
                .get::<gst::tags::LanguageCode>()
                .map(|v| v.get().to_owned());
        }
    }
    assert_eq!(found.as_deref(), Some("fr-FR"));
}

#[test]
fn wrong_rate_or_channels_are_refused_at_negotiation() {
    common::init_plugin();
    for caps in [
        "audio/x-raw,rate=44100,channels=1",
        "audio/x-raw,rate=16000,channels=2",
    ] {
        let line = format!(
            "audiotestsrc num-buffers=5 ! {caps} ! {} ! fakesink",
            element_line("")
        );
        match gst::parse::launch(&line) {
            // Refused when linking...
            Err(e) => assert!(e.to_string().contains("can't handle caps"), "{e}"),
            // ... or, where linking could not tell, when negotiating.
            Ok(pipeline) => {
                let message = common::run_to_end(&pipeline, Duration::from_secs(20));
                assert!(
                    matches!(message.view(), gst::MessageView::Error(_)),
                    "{caps}: {message:?}"
                );
            }
        }
        // Negotiating through elements that cannot know the caps ahead fails
        // at run time with an ERROR.
        let caps_filter_last = format!(
            "audiotestsrc num-buffers=5 ! {caps} ! identity ! capsfilter caps=audio/x-raw ! {} ! fakesink",
            element_line("")
        );
        if let Ok(pipeline) = gst::parse::launch(&caps_filter_last) {
            let message = common::run_to_end(&pipeline, Duration::from_secs(20));
            assert!(
                matches!(message.view(), gst::MessageView::Error(_)),
                "{caps}: {message:?}"
            );
        }
    }
}

fn start_error(extra: &str) -> String {
    common::init_plugin();
    let element = gst::parse::launch(&element_line(extra).replace(
        &format!("model-path={}", common::tiny_model().display()),
        "",
    ))
    .unwrap();
    let pipeline = gst::Pipeline::new();
    pipeline.add(&element).unwrap();
    assert!(
        pipeline.set_state(gst::State::Ready).is_err(),
        "{extra} started"
    );
    let bus = pipeline.bus().unwrap();
    let message = bus
        .timed_pop_filtered(gst::ClockTime::from_seconds(5), &[gst::MessageType::Error])
        .expect("an ERROR message");
    let _ = pipeline.set_state(gst::State::Null);
    match message.view() {
        gst::MessageView::Error(e) => e.error().to_string(),
        _ => unreachable!(),
    }
}

#[test]
fn without_a_model_path_the_element_says_what_to_set() {
    assert!(start_error("").contains("set model-path"));
}

#[test]
fn a_missing_or_wrong_model_file_is_a_clear_error() {
    let missing = start_error("model-path=/nonexistent/voxtral.gguf");
    assert!(missing.contains("does not exist"), "{missing}");
    let text = common::scratch_dir("wrong-model").join("model.gguf");
    std::fs::write(&text, "not a model").unwrap();
    let wrong = start_error(&format!("model-path={}", text.display()));
    assert!(wrong.contains("not a valid GGUF"), "{wrong}");
    let whisper = common::scratch_dir("whisper-model").join("model.gguf");
    std::fs::write(&whisper, common::gguf_of_architecture("whisper")).unwrap();
    let arch = start_error(&format!("model-path={}", whisper.display()));
    assert!(
        arch.contains("'whisper'") && arch.contains("voxtral_realtime"),
        "{arch}"
    );
}

#[test]
fn an_unsupported_delay_is_refused_with_a_warning() {
    let (element, text) = warning_after_setting("delay", 100);
    assert_eq!(element.property::<u32>("delay"), 480, "the old value stays");
    assert!(
        text.contains("multiple of 80 from 80 to 1200, or 2400"),
        "{text}"
    );
    element.set_property("delay", 960u32);
    assert_eq!(element.property::<u32>("delay"), 960);
}

#[test]
fn a_latency_of_minus_one_is_refused_with_a_warning_naming_the_unsynchronised_mode() {
    // gst-plugins-rs 0.16's speechmatics and textaccumulate take -1 as
    // "unsynchronised"; taken as milliseconds it is 49 days of latency.
    let (element, text) = warning_after_setting("latency", u32::MAX);
    assert_eq!(
        element.property::<u32>("latency"),
        1500,
        "the old value stays"
    );
    assert!(
        text.contains("latency=-1") && text.contains("not supported"),
        "{text}"
    );
    element.set_property("latency", 4_000u32);
    assert_eq!(element.property::<u32>("latency"), 4_000);
}

/// The first WARNING's text after setting `name` to `value` on an element
/// in a pipeline.
fn warning_after_setting(name: &str, value: u32) -> (gst::Element, String) {
    common::init_plugin();
    let element = gst::parse::launch(&element_line("")).unwrap();
    let pipeline = gst::Pipeline::new();
    pipeline.add(&element).unwrap();
    element.set_property(name, value);
    let message = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(1),
            &[gst::MessageType::Warning],
        )
        .expect("a WARNING message");
    let gst::MessageView::Warning(w) = message.view() else {
        unreachable!()
    };
    (element, w.error().to_string())
}

#[test]
fn every_duration_counts_milliseconds_and_an_old_value_in_seconds_is_caught() {
    // stall-timeout and max-stream-duration counted seconds before.
    let (element, text) = warning_after_setting("stall-timeout", 15);
    assert!(
        text.contains("counts milliseconds") && text.contains("15000"),
        "{text}"
    );
    assert_eq!(
        element.property::<u32>("stall-timeout"),
        15_000,
        "the default stays"
    );
    element.set_property("stall-timeout", 3000u32);
    assert_eq!(element.property::<u32>("stall-timeout"), 3000);
    element.set_property("stall-timeout", 0u32);
    assert_eq!(element.property::<u32>("stall-timeout"), 0, "0 is off");

    let (element, text) = warning_after_setting("max-stream-duration", 3600);
    assert!(
        text.contains("counts milliseconds") && text.contains("3600000"),
        "{text}"
    );
    assert_eq!(element.property::<u32>("max-stream-duration"), 3600);

    for name in [
        "stall-timeout",
        "max-stream-duration",
        "server-timeout",
        "delay",
        "decode-interval",
        "latency",
        "lateness",
        "max-lag",
        "caption-clear-after",
    ] {
        let spec = element.find_property(name).unwrap();
        assert!(spec.nick().ends_with("(ms)"), "{name}: {}", spec.nick());
        assert!(spec.blurb().unwrap_or_default().contains("ms"), "{name}");
    }
}

#[test]
fn going_back_to_null_and_ready_keeps_the_loaded_model() {
    common::init_plugin();
    let path = common::scratch_dir("null-ready").join("model.gguf");
    std::fs::copy(common::tiny_model(), &path).unwrap();
    let element = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", path.to_str().unwrap())
        .build()
        .unwrap();
    for _ in 0..3 {
        element.set_state(gst::State::Ready).unwrap();
        element.set_state(gst::State::Null).unwrap();
    }
    assert_eq!(gstvoxtralrt::engine::ModelPool::global().loads_of(&path), 1);
}

/// A src pad linked only after the transcriber has begun (transcriberbin
/// links its branch on the first video caps) is no ERROR: each word pushed
/// before the link is counted in `buffers-not-linked`, and the words after
/// it arrive.
#[test]
fn a_src_pad_linked_late_loses_only_the_words_before_the_link() {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 \
         fakesink name=out signal-handoffs=true sync=false async=false",
        common::tone_model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let words = common::handoffs(&pipeline, "out");
    let (src, t) = (
        pipeline.by_name("src").unwrap(),
        pipeline.by_name("t").unwrap(),
    );
    let not_linked = || {
        t.property::<gst::Structure>("stats")
            .get::<u64>("buffers-not-linked")
            .unwrap()
    };
    pipeline.set_state(gst::State::Playing).unwrap();
    let frames = common::tone_frames();
    let audio = common::tone_audio(66, &frames);
    let (first, rest) = audio.split_at(audio.len() / 2);
    let push = |samples: &[f32], start_ms: u64| {
        for (k, piece) in samples.chunks(1600).enumerate() {
            let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
            b.get_mut()
                .unwrap()
                .set_pts(gst::ClockTime::from_mseconds(start_ms + 100 * k as u64));
            assert_eq!(
                src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]),
                gst::FlowReturn::Ok
            );
        }
    };
    push(first, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while not_linked() == 0 {
        assert!(Instant::now() < deadline, "no word pushed within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    t.link(&pipeline.by_name("out").unwrap()).unwrap();
    push(rest, first.len() as u64 / 16);
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::expect_eos(&pipeline);
    pipeline.set_state(gst::State::Null).unwrap();

    let dropped = not_linked() as usize;
    let words: Vec<String> = words.lock().unwrap().iter().map(common::text_of).collect();
    let words: Vec<&String> = words.iter().filter(|w| !w.trim().is_empty()).collect();
    assert!(!words.is_empty(), "no word after the link");
    assert_eq!(
        dropped + words.len(),
        frames.len(),
        "{dropped} dropped, {words:?}"
    );
}
