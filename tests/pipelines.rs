// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! voxtralrttranscriber in whole pipelines: live sources, muxers, subtitle
//! files written by gst-launch-1.0.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::time::Duration;

use gst::prelude::*;

fn model() -> String {
    common::tiny_model().display().to_string()
}

/// Plays a launch line to its end; panics on an error or a stall.
fn play(line: &str, timeout: Duration) -> gst::Element {
    common::init_plugin();
    let pipeline = gst::parse::launch(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let message = bus.timed_pop_filtered(
        gst::ClockTime::from_nseconds(timeout.as_nanos() as u64),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipeline.set_state(gst::State::Null).unwrap();
    match message.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::Eos(_)) => pipeline,
        Some(gst::MessageView::Error(e)) => panic!("{line}: {} ({:?})", e.error(), e.debug()),
        _ => panic!("{line}: stalled for {timeout:?}"),
    }
}

#[test]
fn a_live_source_gets_an_answer_to_the_latency_query_before_data_flows() {
    common::init_plugin();
    // appsrc answers the LATENCY query before it has produced anything.
    let pipeline = gst::parse::launch(&format!(
        "appsrc is-live=true format=time min-latency=20000000 \
           caps=audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved ! \
         voxtralrttranscriber name=t model-path={} threads=1 latency=1200 ! fakesink",
        model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    // A live pipeline in PAUSED does not preroll: no data has flowed yet.
    assert_eq!(
        pipeline.set_state(gst::State::Paused).unwrap(),
        gst::StateChangeSuccess::NoPreroll
    );
    let t = pipeline.by_name("t").unwrap();
    let mut upstream = gst::query::Latency::new();
    assert!(t.static_pad("sink").unwrap().peer_query(&mut upstream));
    let mut ours = gst::query::Latency::new();
    assert!(t.static_pad("src").unwrap().query(&mut ours));
    let (live, min, _) = ours.result();
    assert!(live);
    assert_eq!(upstream.result().1, gst::ClockTime::from_mseconds(20));
    assert_eq!(min, gst::ClockTime::from_mseconds(1220));
    pipeline.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_live_pipeline_keeps_the_text_stream_moving_with_gaps() {
    // Silence for the tone fixture: nothing is said, and a synchronised
    // sink downstream must still see the text stream advance. With the
    // default overload=skip: audio skipped on a busy machine is covered by
    // a GAP too, in order, so what is asserted holds in both modes.
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc is-live=true wave=silence num-buffers=30 samplesperbuffer=1600 ! \
         audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink name=sink sync=true",
        common::fixture("voxtral-rt-tone.gguf").display()
    ))
    .unwrap()
    .downcast::<gst::Bin>()
    .unwrap();
    let gaps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = gaps.clone();
    pipeline
        .by_name("sink")
        .unwrap()
        .static_pad("sink")
        .unwrap()
        .add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, move |_, info| {
            if let Some(gst::PadProbeData::Event(e)) = &info.data {
                if let gst::EventView::Gap(g) = e.view() {
                    seen.lock().unwrap().push(g.get().0);
                }
            }
            gst::PadProbeReturn::Ok
        });
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(30),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(matches!(msg.unwrap().view(), gst::MessageView::Eos(_)));
    let gaps = gaps.lock().unwrap();
    assert!(
        gaps.len() >= 10,
        "{} GAP events reached the sink",
        gaps.len()
    );
    assert!(
        gaps.windows(2).all(|w| w[0] <= w[1]),
        "gaps out of order: {gaps:?}"
    );
}

#[test]
fn live_audio_and_subtitles_mux_into_matroska_without_stalling() {
    // overload=queue: the subject is delivery through the muxer; with skip
    // a busy machine may cost the words asserted below.
    let dir = common::scratch_dir("mkv");
    let out = dir.join("out.mkv");
    play(
        &format!(
            "audiotestsrc is-live=true num-buffers=50 samplesperbuffer=1600 ! \
             audio/x-raw,rate=16000,channels=1,format=S16LE ! tee name=t \
             t. ! queue ! voxtralrttranscriber model-path={} threads=1 output=lines overload=queue ! \
               queue ! mux. \
             t. ! queue ! mux. \
             matroskamux name=mux ! filesink location={}",
            model(),
            out.display()
        ),
        Duration::from_secs(60),
    );
    let bytes = std::fs::read(&out).unwrap();
    let has = |needle: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"S_TEXT/UTF8"), "no subtitle track");
    assert!(has(b"hello from the tiny"), "no subtitle text");
}

#[test]
fn words_burn_into_live_video_with_textoverlay() {
    // overload=queue: about the overlay taking the text, not overload.
    play(
        &format!(
            "audiotestsrc is-live=true num-buffers=30 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
             voxtralrttranscriber model-path={} threads=1 output=lines overload=queue ! queue ! \
               ov.text_sink \
             videotestsrc is-live=true num-buffers=75 ! video/x-raw,width=320,height=240,framerate=25/1 ! \
             textoverlay name=ov ! fakesink sync=true",
            model()
        ),
        Duration::from_secs(60),
    );
}

/// One SRT cue: index, start and end in ms, text.
type SrtCue = (u32, u64, u64, String);

fn parse_srt_time(s: &str) -> u64 {
    let (hms, ms) = s.trim().split_once(',').expect("HH:MM:SS,mmm");
    let parts: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + ms.parse::<u64>().unwrap()
}

/// Parses an SRT file, panicking on anything malformed.
fn parse_srt(text: &str) -> Vec<SrtCue> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut lines = block.trim_start_matches('\n').lines();
            let index = lines.next().unwrap().trim().parse().expect("cue index");
            let (start, end) = lines
                .next()
                .unwrap()
                .split_once(" --> ")
                .expect("timing line");
            let text = lines.collect::<Vec<_>>().join("\n");
            (index, parse_srt_time(start), parse_srt_time(end), text)
        })
        .collect()
}

fn assert_valid_srt(cues: &[SrtCue], audio_ms: u64) {
    assert!(!cues.is_empty());
    for (i, (index, start, end, text)) in cues.iter().enumerate() {
        assert_eq!(*index as usize, i + 1);
        assert!(
            start <= end && *end <= audio_ms + 1,
            "cue {index}: {start}..{end}"
        );
        assert!(!text.trim().is_empty());
        if i > 0 {
            assert!(
                *start >= cues[i - 1].1,
                "cue {index} starts before the one before it"
            );
        }
    }
}

#[test]
fn gst_launch_writes_a_valid_srt_of_words_and_of_lines() {
    let dir = common::scratch_dir("srt");
    for output in ["words", "lines"] {
        let srt = dir.join(format!("{output}.srt"));
        let model = model();
        let location = format!("location={}", srt.display());
        let (ok, log) = common::gst_launch(&[
            "-q",
            "filesrc",
            "location=examples/data/sample.wav",
            "!",
            "wavparse",
            "!",
            "audioconvert",
            "!",
            "audioresample",
            "!",
            "voxtralrttranscriber",
            &format!("model-path={model}"),
            "threads=1",
            &format!("output={output}"),
            "!",
            "srtenc",
            "!",
            "filesink",
            &location,
        ]);
        assert!(ok, "{log}");
        let cues = parse_srt(&std::fs::read_to_string(&srt).unwrap());
        assert_valid_srt(&cues, 6000);
        if output == "words" {
            assert!(
                cues.iter().all(|c| !c.3.contains(' ')),
                "a cue with several words"
            );
        } else {
            assert!(
                cues.iter().any(|c| c.3.contains(' ')),
                "lines of single words"
            );
            assert!(cues.iter().all(|c| c.3.chars().count() <= 32));
        }
    }
}

/// A live appsrc that delivers a minute of audio at once: more than the
/// model can take within the latency. Returns the WARNINGs and the stats.
/// The pipeline runs on a test clock that stays at 0, so the whole burst is
/// ahead of the clock however slowly the model takes it: on the system
/// clock a machine busy enough to hold the model back by more than the
/// latency makes the later audio late on the clock, and skip then rightly
/// skips it.
fn live_burst(overload: &str) -> (Vec<String>, gst::Structure) {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time \
           caps=audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved ! \
         voxtralrttranscriber name=t model-path={} threads=1 latency=500 overload={overload} ! \
         fakesink sync=false",
        model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    pipeline.use_clock(Some(&gst_check::TestClock::new()));
    let src = pipeline.by_name("src").unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let audio = common::sine(60.0);
    for (i, piece) in audio.chunks(16_000).enumerate() {
        let mut buffer = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        buffer
            .get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_seconds(i as u64));
        let flow = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer]);
        assert_eq!(flow, gst::FlowReturn::Ok);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let bus = pipeline.bus().unwrap();
    let mut warnings = Vec::new();
    loop {
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(60),
                &[
                    gst::MessageType::Eos,
                    gst::MessageType::Error,
                    gst::MessageType::Warning,
                ],
            )
            .expect("neither EOS nor an error");
        match msg.view() {
            gst::MessageView::Warning(w) => warnings.push(w.error().to_string()),
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => panic!("{}", e.error()),
            _ => {}
        }
    }
    let stats = pipeline
        .by_name("t")
        .unwrap()
        .property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    (warnings, stats)
}

#[test]
fn live_input_faster_than_the_model_is_kept_and_warned_about_with_overload_queue() {
    let (warnings, stats) = live_burst("queue");
    let lag = warnings.iter().find(|w| w.contains("behind the audio"));
    let lag = lag.unwrap_or_else(|| panic!("no WARNING about the lag: {warnings:?}"));
    assert!(lag.contains("500 ms"), "{lag}");
    // Nothing was dropped: every sample reached the model.
    assert_eq!(
        stats.get::<u64>("audio-transcribed").unwrap(),
        60_000_000_000
    );
    assert_eq!(stats.get::<u64>("samples-dropped").unwrap(), 0);
}

#[test]
fn live_input_that_comes_faster_than_real_time_is_not_skipped() {
    // overload=skip (the default) skips audio that is late on the clock;
    // a burst ahead of it is not, however much of it waits.
    let (warnings, stats) = live_burst("skip");
    assert_eq!(
        stats.get::<u64>("audio-skipped").unwrap(),
        0,
        "{warnings:?}"
    );
    assert_eq!(
        stats.get::<u64>("audio-transcribed").unwrap(),
        60_000_000_000
    );
}

#[test]
fn a_latency_too_small_for_delay_and_decode_interval_is_warned_about() {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc num-buffers=5 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber model-path={} threads=1 decode-interval=1000 ! fakesink",
        model()
    ))
    .unwrap();
    pipeline.set_state(gst::State::Paused).unwrap();
    let msg = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(10),
            &[gst::MessageType::Warning],
        )
        .expect("a WARNING");
    pipeline.set_state(gst::State::Null).unwrap();
    let gst::MessageView::Warning(w) = msg.view() else {
        unreachable!()
    };
    // 480 ms delay + 95 ms look-ahead + 2 x 1000 ms.
    assert!(w.error().to_string().contains("(2575 ms)"), "{}", w.error());
}
