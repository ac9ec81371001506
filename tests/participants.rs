// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Per-speaker inputs (issue 33, part 1): request pads `sink_%u`, one
//! model stream each, their words merged in time order, each with its
//! pad's `speaker`; pads that join and leave while playing.

// The local engine runs the fixture models (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{tone_audio, tone_model, truth};
use gst::prelude::*;

const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

/// What left the transcriber: (pts, text, speaker in force).
type Words = Arc<Mutex<Vec<(u64, String, Option<String>)>>>;

/// Records the transcriber's words with the speaker of the last
/// `rstranscribe/speaker-change` before each.
fn record_words(pad: &gst::Pad) -> Words {
    let words: Words = Arc::default();
    let record = words.clone();
    common::on_each_spoken_word(pad, move |pts, text, who| {
        record.lock().unwrap().push((pts, text, who));
    });
    words
}

/// The words' times and speakers.
fn times_and_speakers(words: &Words) -> Vec<(u64, Option<String>)> {
    let words = words.lock().unwrap();
    words.iter().map(|(t, _, w)| (*t, w.clone())).collect()
}

/// The times of `speaker`'s words.
fn words_of(got: &[(u64, Option<String>)], speaker: &str) -> Vec<u64> {
    got.iter()
        .filter(|w| w.1.as_deref() == Some(speaker))
        .map(|w| w.0)
        .collect()
}

/// A pipeline of `n` appsrcs (`src0`..) into `sink_0`.. of a transcriber
/// with `props`, into a fakesink; and its words.
fn pipeline(n: usize, props: &str) -> (gst::Pipeline, Words) {
    let pipeline = pipeline_into(n, props, "fakesink name=out sync=false");
    let out = pipeline.by_name("out").unwrap();
    let words = record_words(&out.static_pad("sink").unwrap());
    (pipeline, words)
}

/// `n` appsrcs (`src0`..) into `sink_0`.. of a transcriber `t` with
/// `props`, into `downstream`.
fn pipeline_into(n: usize, props: &str, downstream: &str) -> gst::Pipeline {
    common::init_plugin();
    let mut line = format!(
        "voxtralrttranscriber name=t model-path={} threads=1 {props} ! {downstream}",
        tone_model()
    );
    line.push_str(&appsrcs_into(n, "t"));
    gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap()
}

/// Launch-line branches: appsrcs `src0`.. into `element`'s `sink_0`...
fn appsrcs_into(n: usize, element: &str) -> String {
    (0..n)
        .map(|i| format!(" appsrc name=src{i} format=time caps={F32_CAPS} ! {element}.sink_{i}"))
        .collect()
}

/// Names the speakers of `element`'s request pads `sink_0`...
fn name_pads(pipeline: &gst::Pipeline, element: &str, names: &[&str]) {
    let element = pipeline.by_name(element).unwrap();
    for (i, name) in names.iter().enumerate() {
        let pad = element.static_pad(&format!("sink_{i}")).unwrap();
        pad.set_property("speaker", *name);
    }
}

/// Each pad's audio in 100 ms buffers, the pads in turn, then EOS on
/// each; waits for the pipeline's EOS.
fn run(pipeline: &gst::Pipeline, audio: &[Vec<f32>]) {
    pipeline.set_state(gst::State::Playing).unwrap();
    let srcs: Vec<gst::Element> = (0..audio.len())
        .map(|i| pipeline.by_name(&format!("src{i}")).unwrap())
        .collect();
    let buffers = audio[0].len().div_ceil(1600);
    for k in 0..buffers {
        for (src, samples) in srcs.iter().zip(audio) {
            let piece =
                &samples[(k * 1600).min(samples.len())..((k + 1) * 1600).min(samples.len())];
            if !piece.is_empty() {
                common::push_at(src, piece, 100 * k as u64);
            }
        }
    }
    for src in &srcs {
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    }
    wait_for_eos(pipeline);
}

fn wait_for_eos(pipeline: &gst::Pipeline) {
    common::expect_eos(pipeline);
    pipeline.set_state(gst::State::Null).unwrap();
}

/// `n` speakers in turn: speaker `i` has the tone on frames `turn(i)`.
fn turns(n: usize) -> Vec<Vec<usize>> {
    (0..n)
        .map(|i| {
            let start = 10 + 8 * i;
            (start..start + 3).collect()
        })
        .collect()
}

fn assert_each_word_is_its_speakers(n: usize) {
    let (pipeline, words) = pipeline(n, "");
    let frames = turns(n);
    let total = 20 + 8 * n;
    let audio: Vec<Vec<f32>> = frames.iter().map(|f| tone_audio(total, f)).collect();
    run(&pipeline, &audio);
    let words = words.lock().unwrap().clone();
    let mut expected: Vec<(u64, String)> = frames
        .iter()
        .enumerate()
        .flat_map(|(i, f)| f.iter().map(move |&f| (truth(f), format!("sink_{i}"))))
        .collect();
    expected.sort();
    let got: Vec<(u64, String)> = words
        .iter()
        .map(|(t, _, who)| (*t, who.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        got, expected,
        "every word, in time order, with its pad's speaker"
    );
}

#[test]
fn two_pads_give_one_stream_in_time_order_each_word_with_its_speaker() {
    assert_each_word_is_its_speakers(2);
}

#[test]
fn eight_pads_give_one_stream_in_time_order_each_word_with_its_speaker() {
    assert_each_word_is_its_speakers(8);
}

#[test]
fn overlapping_speech_gives_both_speakers_words_by_start_time() {
    let (pipeline, words) = pipeline(2, "");
    // Both speak at once from frame 20 on, taking the 160 ms grain of the
    // default decode interval in turn.
    let a = tone_audio(50, &[20, 24, 28, 32]);
    let b = tone_audio(50, &[22, 26, 30, 34]);
    run(&pipeline, &[a, b]);
    let words = words.lock().unwrap().clone();
    let got: Vec<(u64, Option<String>)> = words.iter().map(|(t, _, w)| (*t, w.clone())).collect();
    let expected: Vec<(u64, Option<String>)> = (20..36)
        .step_by(2)
        .map(|f| (truth(f), Some(format!("sink_{}", f / 2 % 2))))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_pad_speaker_names_its_words_and_a_change_while_playing_takes_effect() {
    let (pipeline, words) = pipeline(2, "");
    let t = pipeline.by_name("t").unwrap();
    t.static_pad("sink_0")
        .unwrap()
        .set_property("speaker", "Alice");
    t.static_pad("sink_1")
        .unwrap()
        .set_property("speaker", "Bob");
    pipeline.set_state(gst::State::Playing).unwrap();
    let a = tone_audio(60, &[10, 11, 40, 41]);
    let b = tone_audio(60, &[20, 21]);
    let srcs = [
        pipeline.by_name("src0").unwrap(),
        pipeline.by_name("src1").unwrap(),
    ];
    // At 2.5 s Alice hands her microphone to Carol: set from the pad's
    // streaming thread before that buffer, so it is in order with the
    // audio (from another thread it takes effect where the audio that has
    // reached the element ends).
    t.static_pad("sink_0")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, |pad, info| {
            if let Some(gst::PadProbeData::Buffer(b)) = &info.data {
                if b.pts() == Some(gst::ClockTime::from_mseconds(2500)) {
                    pad.set_property("speaker", "Carol");
                }
            }
            gst::PadProbeReturn::Ok
        });
    for k in 0..a.len().div_ceil(1600) {
        for (src, samples) in srcs.iter().zip([&a, &b]) {
            common::push_at(
                src,
                &samples[k * 1600..((k + 1) * 1600).min(samples.len())],
                100 * k as u64,
            );
        }
    }
    for src in &srcs {
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    }
    wait_for_eos(&pipeline);
    let who: Vec<Option<String>> = words.lock().unwrap().iter().map(|w| w.2.clone()).collect();
    let names = ["Alice", "Alice", "Bob", "Bob", "Carol", "Carol"];
    assert_eq!(who, names.map(|n| Some(n.to_owned())));
}

#[test]
fn participants_join_and_leave_while_playing_and_only_the_last_eos_ends_the_stream() {
    common::init_plugin();
    let pipeline = gst::Pipeline::new();
    let host = gst::ElementFactory::make("appsrc")
        .property("is-live", true)
        .property("format", gst::Format::Time)
        .property("caps", gst::Caps::from_str(F32_CAPS).unwrap())
        .build()
        .unwrap();
    let t = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", tone_model())
        .property("threads", 1u32)
        .build()
        .unwrap();
    let sink = gst::ElementFactory::make("fakesink")
        .property("sync", false)
        .build()
        .unwrap();
    pipeline.add_many([&host, &t, &sink]).unwrap();
    t.link(&sink).unwrap();
    let host_pad = t.request_pad_simple("sink_%u").unwrap();
    assert_eq!(host_pad.name(), "sink_0");
    host.static_pad("src").unwrap().link(&host_pad).unwrap();
    let words = record_words(&sink.static_pad("sink").unwrap());
    pipeline.set_state(gst::State::Playing).unwrap();

    // The host speaks at 1 s and at 5 s; a guest joins at 2 s, speaks at
    // 3 s and leaves at 4 s.
    let host_audio = tone_audio(80, &[19, 20, 69, 70]);
    let guest_audio = tone_audio(80, &[44, 45]);
    let mut guest: Option<(gst::Element, gst::Pad)> = None;
    let started = std::time::Instant::now();
    for k in 0..host_audio.len() / 1600 {
        let due = started + Duration::from_millis(100 * k as u64);
        std::thread::sleep(due.saturating_duration_since(std::time::Instant::now()));
        if k == 20 {
            let src = gst::ElementFactory::make("appsrc")
                .property("is-live", true)
                .property("format", gst::Format::Time)
                .property("caps", gst::Caps::from_str(F32_CAPS).unwrap())
                .build()
                .unwrap();
            pipeline.add(&src).unwrap();
            let pad = t.request_pad_simple("sink_%u").unwrap();
            assert_eq!(pad.name(), "sink_1");
            src.static_pad("src").unwrap().link(&pad).unwrap();
            src.sync_state_with_parent().unwrap();
            guest = Some((src, pad));
        }
        if k == 40 {
            let (src, pad) = guest.take().unwrap();
            let eos_through = eos_seen_on(&pad);
            let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
            eos_through
                .recv_timeout(Duration::from_secs(30))
                .expect("the guest's EOS reaches its pad");
            src.static_pad("src").unwrap().unlink(&pad).unwrap();
            t.release_request_pad(&pad);
            src.set_state(gst::State::Null).unwrap();
            pipeline.remove(&src).unwrap();
        }
        let piece = &host_audio[k * 1600..(k + 1) * 1600];
        common::push_at(&host, piece, 100 * k as u64);
        if let Some((src, _)) = &guest {
            common::push_at(src, &guest_audio[k * 1600..(k + 1) * 1600], 100 * k as u64);
        }
    }
    let _ = host.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    wait_for_eos(&pipeline);
    let got = times_and_speakers(&words);
    let host_words = words_of(&got, "sink_0").len();
    let guest_words = words_of(&got, "sink_1").len();
    assert_eq!((host_words, guest_words), (4, 2), "{got:?}");
    assert!(
        got.windows(2).all(|w| w[0].0 <= w[1].0),
        "in time order: {got:?}"
    );
}

#[test]
fn with_engine_vllm_each_pad_has_its_socket_and_a_quiet_pad_sends_only_its_turns() {
    use common::vllm_double::{Double, Faults, SERVED_MODEL};
    let server = Double::start(common::fixture("voxtral-rt-tone.gguf"), Faults::default());
    let props = format!(
        "engine=vllm url={} model={SERVED_MODEL} speech-only=true",
        server.url()
    );
    common::init_plugin();
    let mut line = format!("voxtralrttranscriber name=t {props} ! fakesink name=out sync=false");
    for i in 0..2 {
        line.push_str(&format!(
            " appsrc name=src{i} format=time caps={F32_CAPS} ! t.sink_{i}"
        ));
    }
    let pipeline = gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let words = record_words(&pipeline.by_name("out").unwrap().static_pad("sink").unwrap());
    // A speaks at 1 s and 9 s, B at 5 s: 12 s each.
    let a = tone_audio(150, &[12, 13, 14, 112, 113, 114]);
    let b = tone_audio(150, &[62, 63, 64]);
    run(&pipeline, &[a, b]);
    let got = times_and_speakers(&words);
    let expected: Vec<(u64, Option<String>)> = [12, 13, 14, 62, 63, 64, 112, 113, 114]
        .into_iter()
        .map(|f| (truth(f), Some(format!("sink_{}", usize::from(f / 50 == 1)))))
        .collect();
    assert_eq!(got, expected);
    let seen = server.seen.lock().unwrap();
    // One socket per pad (and one for the unlinked sink pad's core).
    assert!(seen.connections >= 2, "{} connections", seen.connections);
    assert_eq!(seen.utterances, 3, "one utterance per turn");
    // Per turn: the pre-roll (0.64 s), the burst (0.24 s), the hangover
    // (1 s) and the buffer that ended it (0.1 s).
    let most = 3 * (640 + 240 + 1000 + 100) * 16;
    assert!(
        seen.samples <= most,
        "{} samples sent, at most {most}",
        seen.samples
    );
}

#[test]
fn a_flush_and_a_seek_on_one_pad_reset_that_speaker_alone() {
    common::init_plugin();
    let t = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", tone_model())
        .property("threads", 1u32)
        .build()
        .unwrap();
    let mut a = gst_check::Harness::with_element(&t, Some("sink_0"), Some("src"));
    let mut b = gst_check::Harness::with_element(&t, Some("sink_1"), None);
    a.set_src_caps_str(F32_CAPS);
    b.set_src_caps_str(F32_CAPS);
    let words = record_words(&a.sinkpad().unwrap());
    let buffer = |samples: &[f32], ms: u64| {
        let mut buf = gst::Buffer::from_mut_slice(common::to_f32le(samples));
        buf.get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(ms));
        buf
    };
    let a_audio = tone_audio(75, &[12, 13, 40, 41]);
    let b_audio = tone_audio(75, &[25, 26]);
    // The first 3 s of both; then B flushes and seeks back to 1 s.
    for k in 0..30 {
        a.push(buffer(&a_audio[k * 1600..(k + 1) * 1600], 100 * k as u64))
            .unwrap();
        b.push(buffer(&b_audio[k * 1600..(k + 1) * 1600], 100 * k as u64))
            .unwrap();
    }
    assert!(b.push_event(gst::event::FlushStart::new()));
    assert!(b.push_event(gst::event::FlushStop::new(true)));
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    segment.set_start(gst::ClockTime::from_seconds(1));
    segment.set_time(gst::ClockTime::from_seconds(1));
    segment.set_base(gst::ClockTime::from_seconds(3));
    assert!(b.push_event(gst::event::Segment::new(&segment)));
    for k in 30..60 {
        a.push(buffer(&a_audio[k * 1600..(k + 1) * 1600], 100 * k as u64))
            .unwrap();
    }
    // B again from 1 s, at running time 3 s on: its burst at 2 s comes
    // out at 4 s of running time, between A's words.
    for k in 10..40 {
        b.push(buffer(&b_audio[k * 1600..(k + 1) * 1600], 100 * k as u64))
            .unwrap();
    }
    b.push_event(gst::event::Eos::new());
    a.push_event(gst::event::Eos::new());
    while let Ok(Some(_)) = a.pull_until_eos() {}
    let got = times_and_speakers(&words);
    let a_words = words_of(&got, "sink_0").len();
    let b_words = words_of(&got, "sink_1");
    assert_eq!(a_words, 4, "A's words are not lost to B's flush: {got:?}");
    // B's burst (2.0 s of its audio) after the seek: 1 s into its new
    // segment, which runs from 3 s; the words its flush dropped are gone.
    assert!(b_words.len() >= 2, "B's words after its seek: {got:?}");
    assert!(
        b_words
            .iter()
            .all(|&t| (3_400_000_000..3_700_000_000).contains(&t)),
        "B's words at their place on the running time: {got:?}"
    );
    assert!(
        got.windows(2).all(|w| w[0].0 <= w[1].0),
        "in time order: {got:?}"
    );
}

/// The panel's two espeak-ng voices, each on its own microphone: Host's
/// on `sink_0`, Guest's on `sink_1` (silence there while the other
/// speaks); and the turns' starts.
fn panel_microphones(dir: &str) -> ([Vec<f32>; 2], Vec<(u64, &'static str)>) {
    let turns = common::panel_turns(&common::scratch_dir(dir));
    let mics = ["Host", "Guest"].map(|who| common::panel_microphone(&turns, who));
    (mics, common::panel_starts(&turns))
}

#[test]
fn two_voices_on_two_pads_each_word_carries_its_pads_speaker() {
    let (mics, starts) = panel_microphones("participants-panel");
    let (pipeline, words) = pipeline(2, "speech-only=true");
    name_pads(&pipeline, "t", &["Host", "Guest"]);
    run(&pipeline, &mics);
    let words = times_and_speakers(&words);
    assert!(!words.is_empty());
    for (t, who) in &words {
        let expected = common::panel_speaker_at(&starts, *t);
        assert_eq!(who.as_deref(), Some(expected), "word at {t} ns: {words:?}");
    }
    let mut turns: Vec<&str> = words.iter().filter_map(|w| w.1.as_deref()).collect();
    turns.dedup();
    assert_eq!(turns, ["Host", "Guest", "Host"]);
    assert!(words.windows(2).all(|w| w[0].0 <= w[1].0), "{words:?}");
}

#[test]
fn two_voices_on_two_pads_start_a_prefixed_row_at_each_turn_in_cc1_and_708() {
    let (mics, _) = panel_microphones("participants-panel-cc");
    let frames = mics[0].len() as u64 * 30 / 16_000 + 30;

    // CC1 in H.264 SEI, as ffmpeg reads it.
    let ts = common::scratch_dir("participants-panel-cc").join("panel.ts");
    let pipeline = pipeline_into(
        2,
        "",
        &format!(
            "ccconverter ! closedcaption/x-cea-708,format=cc_data ! queue ! c.caption {}",
            common::readback::video_into_ts(frames, "30000/1001", &ts)
        ),
    );
    name_pads(&pipeline, "t", &["Host", "Guest"]);
    run(&pipeline, &mics);
    let cues = common::readback::subcc_cues(&ts);
    let rows = common::readback::new_rows(&cues);
    let prefixed = rows.iter().filter(|r| r.starts_with(">>")).count();
    assert_eq!(prefixed, 3, "a '>>' row per turn: {rows:?} from {cues:?}");

    // 708 service 1.
    let pipeline = pipeline_into(
        2,
        "",
        "closedcaption/x-cea-708,format=cc_data,framerate=30000/1001 ! \
         fakesink name=cc signal-handoffs=true sync=false",
    );
    name_pads(&pipeline, "t", &["Host", "Guest"]);
    let buffers = common::handoffs(&pipeline, "cc");
    run(&pipeline, &mics);
    let services = common::cc708::services_708(&buffers.lock().unwrap());
    assert_eq!(
        services[&1].matches(">> ").count(),
        3,
        "708: {:?}",
        services[&1]
    );
}

/// A sink with two request pads for the panel's microphones, into
/// `location`, with `props`.
fn sink_pipeline(location: &std::path::Path, props: &str) -> gst::Pipeline {
    common::init_plugin();
    let line = format!(
        "voxtralrtsink name=s model-path={} threads=1 location={} {props}{}",
        tone_model(),
        location.display(),
        appsrcs_into(2, "s")
    );
    let pipeline = gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    name_pads(&pipeline, "s", &["Host", "Guest"]);
    pipeline
}

#[test]
fn the_sink_takes_a_pad_per_voice_writes_each_word_with_its_speaker_and_ends_once_both_have() {
    let (mics, starts) = panel_microphones("participants-sink");
    let path = common::scratch_dir("participants-sink").join("panel.jsonl");
    let pipeline = sink_pipeline(&path, "speech-only=true");
    let signalled = Arc::new(Mutex::new(Vec::<Option<String>>::new()));
    let record = signalled.clone();
    pipeline
        .by_name("s")
        .unwrap()
        .connect("transcript", false, move |args| {
            record.lock().unwrap().push(args[4].get().unwrap());
            None
        });
    // No preroll on the unlinked sink pad: this reaches PLAYING at once.
    run(&pipeline, &mics);
    let words = common::jsonl_words(&std::fs::read_to_string(&path).unwrap());
    assert!(!words.is_empty());
    for (t, who) in &words {
        assert_eq!(who, common::panel_speaker_at(&starts, *t), "{words:?}");
    }
    let mut turns: Vec<&str> = words.iter().map(|w| w.1.as_str()).collect();
    turns.dedup();
    assert_eq!(turns, ["Host", "Guest", "Host"]);
    assert!(words.windows(2).all(|w| w[0].0 <= w[1].0), "{words:?}");
    let signalled = signalled.lock().unwrap().clone();
    let written: Vec<Option<String>> = words.into_iter().map(|w| Some(w.1)).collect();
    assert_eq!(signalled, written, "the signal carries each word's speaker");
}

#[test]
fn with_its_sink_pad_linked_the_sinks_eos_waits_for_every_pad() {
    common::init_plugin();
    let path = common::scratch_dir("participants-sink-eos").join("out.jsonl");
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=main format=time caps={F32_CAPS} ! \
         voxtralrtsink name=s model-path={} threads=1 location={} \
         appsrc name=src0 format=time caps={F32_CAPS} ! s.sink_0",
        tone_model(),
        path.display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let s = pipeline.by_name("s").unwrap();
    s.static_pad("sink")
        .unwrap()
        .set_property("speaker", "Main");
    pipeline.set_state(gst::State::Playing).unwrap();
    let (main, guest) = (
        pipeline.by_name("main").unwrap(),
        pipeline.by_name("src0").unwrap(),
    );
    // The sink pad speaks at once and ends; the request pad later.
    let main_audio = tone_audio(20, &[12, 13]);
    common::push_at(&main, &main_audio, 0);
    let _ = main.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let guest_audio = tone_audio(60, &[40, 41]);
    for (k, piece) in guest_audio.chunks(1600).enumerate() {
        common::push_at(&guest, piece, 100 * k as u64);
    }
    let _ = guest.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    // At EOS every pad's words are in the file.
    common::expect_eos(&pipeline);
    let words = common::jsonl_words(&std::fs::read_to_string(&path).unwrap());
    pipeline.set_state(gst::State::Null).unwrap();
    let expected: Vec<(u64, String)> = [(12, "Main"), (13, "Main"), (40, "sink_0"), (41, "sink_0")]
        .iter()
        .map(|&(f, who)| (truth(f), who.to_owned()))
        .collect();
    assert_eq!(words, expected);
}

/// The transcriber's LATENCY answer, live appsrcs with `min_latencies`
/// (ms) before it: on its sink pad alone (one number) or on `sink_0`...
fn latency_answer(min_latencies: &[u64], request_pads: bool) -> (bool, gst::ClockTime) {
    common::init_plugin();
    let mut line = format!(
        "voxtralrttranscriber name=t model-path={} threads=1 ! fakesink sync=false",
        tone_model()
    );
    for (i, ms) in min_latencies.iter().enumerate() {
        let pad = if request_pads {
            format!("sink_{i}")
        } else {
            "sink".to_owned()
        };
        line.push_str(&format!(
            " appsrc name=src{i} is-live=true format=time min-latency={} caps={F32_CAPS} ! t.{pad}",
            ms * 1_000_000
        ));
    }
    common::latency_of_pad(&gst::parse::launch(&line).unwrap(), "src")
}

#[test]
fn with_request_pads_the_latency_is_one_pads_with_the_slowest_upstream() {
    let (live, one_pad) = latency_answer(&[50], false);
    assert!(live);
    assert!(one_pad > gst::ClockTime::from_mseconds(50), "{one_pad}");
    let (live, two_pads) = latency_answer(&[20, 50], true);
    assert!(live);
    assert_eq!(two_pads, one_pad, "the same answer as one pad");
    let (_, eight_pads) = latency_answer(&[10, 20, 50, 30, 10, 0, 40, 5], true);
    assert_eq!(eight_pads, one_pad);
}

#[test]
fn with_two_live_pads_and_speech_only_each_word_leaves_within_the_latency() {
    let reported = latency_answer(&[0], true).1;
    let pipeline = pipeline_into(2, "speech-only=true", "fakesink name=out sync=false");
    for i in 0..2 {
        let src = pipeline.by_name(&format!("src{i}")).unwrap();
        src.set_property("is-live", true);
    }
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    // When each tone frame's buffer reached the element, and when each
    // word left it.
    let arrivals = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let departures = Arc::new(Mutex::new(Vec::<u64>::new()));
    let t = pipeline.by_name("t").unwrap();
    for i in 0..2 {
        let (log, clock) = (arrivals.clone(), clock.clone());
        let pad = t.static_pad(&format!("sink_{i}")).unwrap();
        pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            if let Some(b) = info.buffer() {
                let end = b.pts().unwrap() + b.duration().unwrap();
                log.lock()
                    .unwrap()
                    .push((end.nseconds(), clock.time().nseconds()));
            }
            gst::PadProbeReturn::Ok
        });
    }
    let (log, clock_out) = (departures.clone(), clock.clone());
    t.static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            if info.buffer().is_some_and(|b| b.size() > 0) {
                log.lock().unwrap().push(clock_out.time().nseconds());
            }
            gst::PadProbeReturn::Ok
        });
    pipeline.set_state(gst::State::Playing).unwrap();
    // One speaks, then the other; the quiet one sends nothing to its model.
    let frames = [vec![20, 21, 22], vec![45, 46, 47]];
    let audio: Vec<Vec<f32>> = frames.iter().map(|f| tone_audio(70, f)).collect();
    let srcs: Vec<gst::Element> = (0..2)
        .map(|i| pipeline.by_name(&format!("src{i}")).unwrap())
        .collect();
    let started = clock.time();
    for k in 0..audio[0].len() / common::FRAME {
        let due = started + gst::ClockTime::from_mseconds(80 * k as u64);
        while clock.time() < due {
            std::thread::sleep(Duration::from_millis(2));
        }
        for (src, samples) in srcs.iter().zip(&audio) {
            let piece = &samples[k * common::FRAME..(k + 1) * common::FRAME];
            common::push_at(src, piece, 80 * k as u64);
        }
    }
    for src in &srcs {
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    }
    wait_for_eos(&pipeline);
    let arrivals = arrivals.lock().unwrap();
    let departures = departures.lock().unwrap();
    let mut words: Vec<usize> = frames.concat();
    words.sort();
    assert_eq!(departures.len(), words.len());
    for (&left, &f) in departures.iter().zip(&words) {
        let frame_end = (f as u64 + 1) * 80_000_000;
        let arrived = arrivals
            .iter()
            .filter(|(end, _)| *end >= frame_end)
            .map(|a| a.1)
            .min()
            .unwrap();
        let waited = gst::ClockTime::from_nseconds(left.saturating_sub(arrived));
        assert!(
            waited <= reported,
            "frame {f}: its word left {waited} after its audio (latency {reported})"
        );
    }
}

#[test]
fn a_sink_pad_released_while_playing_writes_its_last_words_and_the_other_goes_on() {
    common::init_plugin();
    let path = common::scratch_dir("participants-sink-leave").join("out.jsonl");
    let pipeline = sink_pipeline(&path, "");
    pipeline.set_state(gst::State::Playing).unwrap();
    let s = pipeline.by_name("s").unwrap();
    let (host, guest) = (
        pipeline.by_name("src0").unwrap(),
        pipeline.by_name("src1").unwrap(),
    );
    // The guest speaks at 0.3 s and leaves; the host speaks at 1.5 s and 4 s.
    let host_audio = tone_audio(60, &[25, 26, 56, 57]);
    let guest_audio = tone_audio(20, &[10, 11]);
    for (k, piece) in guest_audio.chunks(1600).enumerate() {
        common::push_at(&guest, piece, 100 * k as u64);
        common::push_at(&host, &host_audio[k * 1600..(k + 1) * 1600], 100 * k as u64);
    }
    // The guest's source ends and goes, then its pad: once its EOS is
    // through (appsrc pushes from a thread of its own; a loaded machine may
    // not have pushed its queue 300 ms later, and unlinking would drop it).
    let guest_pad = s.static_pad("sink_1").unwrap();
    let eos_through = eos_seen_on(&guest_pad);
    let _ = guest.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    eos_through
        .recv_timeout(Duration::from_secs(30))
        .expect("the guest's EOS reaches its pad");
    guest.static_pad("src").unwrap().unlink(&guest_pad).unwrap();
    guest.set_state(gst::State::Null).unwrap();
    pipeline.remove(&guest).unwrap();
    s.release_request_pad(&guest_pad);
    assert!(s.static_pad("sink_1").is_none());
    for k in 16..host_audio.len().div_ceil(1600) {
        let piece = &host_audio[k * 1600..((k + 1) * 1600).min(host_audio.len())];
        common::push_at(&host, piece, 100 * k as u64);
    }
    let _ = host.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    wait_for_eos(&pipeline);
    let words = common::jsonl_words(&std::fs::read_to_string(&path).unwrap());
    let expected = [
        (10, "Guest"),
        (11, "Guest"),
        (25, "Host"),
        (26, "Host"),
        (56, "Host"),
        (57, "Host"),
    ];
    assert_eq!(words.len(), expected.len(), "{words:?}");
    for ((t, who), (f, speaker)) in words.iter().zip(expected) {
        assert_eq!(who, speaker, "{words:?}");
        // A word is placed within the decode interval (160 ms) it was
        // decoded in (tests/timing.rs).
        assert!(t.abs_diff(truth(f)) <= 160_000_000, "frame {f}: {words:?}");
    }
}

#[test]
fn a_pad_requested_after_the_sink_pad_started_alone_is_refused_with_a_warning() {
    common::init_plugin();
    for element in ["voxtralrttranscriber", "voxtralrtsink"] {
        let downstream = if element == "voxtralrtsink" {
            ""
        } else {
            " ! fakesink"
        };
        let pipeline = gst::parse::launch(&format!(
            "appsrc is-live=true format=time caps={F32_CAPS} ! {element} name=e model-path={} \
             threads=1{downstream}",
            tone_model()
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        pipeline.set_state(gst::State::Playing).unwrap();
        let e = pipeline.by_name("e").unwrap();
        assert!(e.request_pad_simple("sink_%u").is_none(), "{element}");
        let warning = pipeline
            .bus()
            .unwrap()
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(5),
                &[gst::MessageType::Warning],
            )
            .expect("a WARNING");
        let gst::MessageView::Warning(w) = warning.view() else {
            unreachable!()
        };
        assert!(
            w.error().message().contains("cannot join"),
            "{element}: {}",
            w.error()
        );
        pipeline.set_state(gst::State::Null).unwrap();
    }
}

/// Receives once an EOS has passed `pad`.
fn eos_seen_on(pad: &gst::Pad) -> std::sync::mpsc::Receiver<()> {
    let (send, seen) = std::sync::mpsc::channel();
    let send = Mutex::new(send);
    pad.add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, move |_, info| {
        if info
            .event()
            .is_some_and(|e| e.type_() == gst::EventType::Eos)
        {
            let _ = send.lock().unwrap().send(());
        }
        gst::PadProbeReturn::Ok
    });
    seen
}

/// The words of a JSONL transcript file, once it has `n` of them.
fn wait_for_words(path: &std::path::Path, n: usize) -> Vec<(u64, String)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let words = common::jsonl_words(&std::fs::read_to_string(path).unwrap_or_default());
        if words.len() >= n {
            return words;
        }
        assert!(std::time::Instant::now() < deadline, "{n} words: {words:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// No EOS (nor ERROR) on `pipeline`'s bus for a second.
fn assert_no_eos_yet(pipeline: &gst::Pipeline, when: &str) {
    let early = pipeline.bus().unwrap().timed_pop_filtered(
        gst::ClockTime::from_seconds(1),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    assert!(early.is_none(), "{when}: {early:?}");
}

#[test]
fn the_sinks_eos_waits_for_a_pad_whose_stream_has_not_begun() {
    common::init_plugin();
    let path = common::scratch_dir("participants-sink-late").join("out.jsonl");
    let pipeline = sink_pipeline(&path, "");
    pipeline.set_state(gst::State::Playing).unwrap();
    let (host, guest) = (
        pipeline.by_name("src0").unwrap(),
        pipeline.by_name("src1").unwrap(),
    );
    // The host's whole stream, words and EOS, before the guest's starts.
    for (k, piece) in tone_audio(20, &[10, 11]).chunks(1600).enumerate() {
        common::push_at(&host, piece, 100 * k as u64);
    }
    let _ = host.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    assert_no_eos_yet(&pipeline, "the guest's pad has brought nothing yet");
    // Not live, the words wait for it too (it may still speak earlier).
    let written = common::jsonl_words(&std::fs::read_to_string(&path).unwrap_or_default());
    assert!(written.is_empty(), "{written:?}");
    for (k, piece) in tone_audio(20, &[12]).chunks(1600).enumerate() {
        common::push_at(&guest, piece, 100 * k as u64);
    }
    let _ = guest.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    wait_for_eos(&pipeline);
    let words = common::jsonl_words(&std::fs::read_to_string(&path).unwrap());
    let who: Vec<&str> = words.iter().map(|w| w.1.as_str()).collect();
    assert_eq!(who, ["Host", "Host", "Guest"], "{words:?}");
}

#[test]
fn the_sink_prerolls_once_every_request_pad_has_brought_audio_and_ends_in_playing() {
    common::init_plugin();
    let path = common::scratch_dir("participants-sink-paused").join("out.jsonl");
    let pipeline = sink_pipeline(&path, "");
    assert_eq!(
        pipeline.set_state(gst::State::Paused).unwrap(),
        gst::StateChangeSuccess::Async
    );
    let srcs: Vec<gst::Element> = (0..2)
        .map(|i| pipeline.by_name(&format!("src{i}")).unwrap())
        .collect();
    let state_after = |wait: u64| pipeline.state(gst::ClockTime::from_mseconds(wait));
    common::push_at(&srcs[0], &tone_audio(20, &[10]), 0);
    let (waiting, _, _) = state_after(500);
    assert_eq!(
        waiting,
        Ok(gst::StateChangeSuccess::Async),
        "one pad has brought audio, the other not yet"
    );
    common::push_at(&srcs[1], &tone_audio(20, &[11]), 0);
    let (prerolled, current, _) = state_after(10_000);
    assert_eq!(prerolled, Ok(gst::StateChangeSuccess::Success));
    assert_eq!(current, gst::State::Paused);
    for src in &srcs {
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    }
    // The streams end in PAUSED; EOS waits for PLAYING, as a BaseSink's.
    wait_for_words(&path, 2);
    assert_no_eos_yet(&pipeline, "PAUSED");
    pipeline.set_state(gst::State::Playing).unwrap();
    wait_for_eos(&pipeline);
}

#[test]
fn a_launch_line_names_each_pads_speaker_through_the_child_proxy() {
    common::init_plugin();
    for element in ["voxtralrttranscriber", "voxtralrtsink"] {
        let downstream = if element == "voxtralrttranscriber" {
            " ! fakesink"
        } else {
            ""
        };
        let line = format!(
            "{element} name=e model-path={} threads=1 sink::speaker=Desk sink_0::speaker=Host \
             sink_1::speaker=Guest{downstream}{}",
            tone_model(),
            appsrcs_into(2, "e")
        );
        let pipeline = gst::parse::launch(&line).unwrap();
        let e = pipeline
            .downcast_ref::<gst::Bin>()
            .unwrap()
            .by_name("e")
            .unwrap();
        let proxy = e
            .dynamic_cast_ref::<gst::ChildProxy>()
            .expect("a child proxy");
        assert_eq!(
            proxy.children_count(),
            e.num_pads() as u32,
            "{element}: its pads"
        );
        for (pad, speaker) in [("sink", "Desk"), ("sink_0", "Host"), ("sink_1", "Guest")] {
            let named: String = e.static_pad(pad).unwrap().property("speaker");
            assert_eq!(named, speaker, "{element}: {pad}");
            assert_eq!(
                proxy
                    .child_by_name(pad)
                    .and_then(|c| c.downcast::<gst::Pad>().ok()),
                e.static_pad(pad),
                "{element}"
            );
        }
        // A pad released goes from the children.
        let pad = e.static_pad("sink_1").unwrap();
        let before = proxy.children_count();
        e.release_request_pad(&pad);
        assert_eq!(proxy.children_count(), before - 1, "{element}");
        assert!(proxy.child_by_name("sink_1").is_none(), "{element}");
    }
}

/// A copy of the tiny model of its own, so that the pool's count of its
/// loads is this test's alone.
fn own_model(name: &str) -> std::path::PathBuf {
    let path = common::scratch_dir(name).join("model.gguf");
    std::fs::copy(common::tiny_model(), &path).unwrap();
    path
}

fn loads_of(model: &std::path::Path) -> u64 {
    gstvoxtralrt::engine::ModelPool::global().loads_of(model)
}

/// The guides' meeting lines (docs/speakers.md, the README), as written
/// (two speakers on request pads, the `sink` pad unlinked), run here on a
/// model of their own: one load, which both speakers' streams share (before
/// issue 54: one per pad that carries audio; before issue 50: three, the
/// unlinked sink pad's too).
#[test]
fn the_guides_meeting_lines_load_the_model_once_for_all_their_speakers() {
    common::init_plugin();
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for (element, name) in [("t.sink_1", "transcriber"), ("s.sink_1", "sink")] {
        let model = own_model(&format!("meeting-loads-{name}"));
        let dir = model.parent().unwrap().to_owned();
        let line = common::doc_launch_line(element).line;
        let line = line
            .trim_start_matches("gst-launch-1.0 ")
            .trim_start_matches("-m ")
            .replace("$MODEL", &model.display().to_string())
            .replace(
                "location=examples/",
                &format!("location={}/", examples.display()),
            )
            .replace(
                "location=meeting.vtt",
                &format!("location={}/meeting.vtt", dir.display()),
            );
        let pipeline = gst::parse::launch(&line).unwrap();
        pipeline.set_state(gst::State::Ready).unwrap();
        assert_eq!(loads_of(&model), 1, "{name} at READY: {line}");
        let end = common::run_to_end(&pipeline, Duration::from_secs(120));
        assert!(
            matches!(end.view(), gst::MessageView::Eos(_)),
            "{name}: {end:?}"
        );
        assert_eq!(loads_of(&model), 1, "{name} after the run: {line}");
    }
}

/// With nothing linked, the element's sink pad is its input: its model
/// loads at READY, so that a model's trouble shows there.
#[test]
fn an_element_with_nothing_linked_loads_its_sink_pads_model_at_ready() {
    common::init_plugin();
    for factory in ["voxtralrttranscriber", "voxtralrtsink"] {
        let model = own_model(&format!("lone-loads-{factory}"));
        let element = gst::ElementFactory::make(factory)
            .property("model-path", model.display().to_string())
            .build()
            .unwrap();
        element.set_state(gst::State::Ready).unwrap();
        assert_eq!(loads_of(&model), 1, "{factory}");
        element.set_state(gst::State::Null).unwrap();
    }
}

/// A request pad requested before the start but linked only then loads
/// its model at start, not at READY; the unlinked sink pad beside it
/// never does. Audio that then comes on that sink pad is an ERROR saying
/// what to do, not lost in silence.
#[test]
fn a_pad_linked_after_ready_loads_at_start_and_audio_on_the_idle_sink_pad_is_an_error() {
    common::init_plugin();
    let model = own_model("late-link-loads");
    let pipeline = gst::parse::launch(&format!(
        "voxtralrttranscriber name=t model-path={} threads=1 ! fakesink \
         appsrc name=src0 format=time caps={F32_CAPS} \
         appsrc name=late format=time caps={F32_CAPS}",
        model.display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let t = pipeline.by_name("t").unwrap();
    let pad = t.request_pad_simple("sink_%u").unwrap();
    pipeline.set_state(gst::State::Ready).unwrap();
    assert_eq!(loads_of(&model), 0, "nothing linked carries audio yet");
    let src0 = pipeline.by_name("src0").unwrap();
    src0.static_pad("src").unwrap().link(&pad).unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    assert_eq!(loads_of(&model), 1, "sink_0's, at start");
    let late = pipeline.by_name("late").unwrap();
    late.link_pads(Some("src"), &t, Some("sink")).unwrap();
    common::push_at(&late, &common::sine(0.1), 0);
    let bus = pipeline.bus().unwrap();
    let error = bus
        .timed_pop_filtered(gst::ClockTime::from_seconds(10), &[gst::MessageType::Error])
        .expect("an ERROR");
    pipeline.set_state(gst::State::Null).unwrap();
    let gst::MessageView::Error(e) = error.view() else {
        unreachable!()
    };
    assert_eq!(error.src().unwrap().name(), "t", "{e:?}");
    assert!(
        e.error()
            .to_string()
            .contains("not linked when the element started")
            && e.debug()
                .unwrap_or_default()
                .contains("link the sink pad before"),
        "{e:?}"
    );
    assert_eq!(loads_of(&model), 1);
}
