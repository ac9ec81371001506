// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Audio and subtitles into MP4 and QuickTime files with default queues,
//! read back with qtdemux: every cue keeps its text and its time.

mod common;

use gst::prelude::*;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq)]
struct Cue {
    text: String,
    pts: u64,
    duration: u64,
}

/// qtmux writes subtitle times in its track timescale: allow its rounding.
const TIMESCALE_ROUNDING_NS: u64 = 1_000_000;

fn cue_of(buffer: &gst::BufferRef) -> Cue {
    let map = buffer.map_readable().unwrap();
    Cue {
        text: String::from_utf8_lossy(&map).into_owned(),
        pts: buffer.pts().expect("a PTS").nseconds(),
        duration: buffer.duration().expect("a duration").nseconds(),
    }
}

/// Collects every buffer that leaves `pad`.
fn record(pad: &gst::Pad) -> Arc<Mutex<Vec<Cue>>> {
    let cues = Arc::new(Mutex::new(Vec::new()));
    let seen = cues.clone();
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
        if let Some(buffer) = info.buffer() {
            seen.lock().unwrap().push(cue_of(buffer));
        }
        gst::PadProbeReturn::Ok
    });
    cues
}

/// Runs `pipeline` to EOS; panics on an ERROR or if it does not finish.
fn run_to_eos(pipeline: &gst::Element, what: &str) {
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let message = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(90),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipeline.set_state(gst::State::Null).unwrap();
    match message.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::Eos(_)) => {}
        Some(gst::MessageView::Error(e)) => panic!("{what}: {} ({:?})", e.error(), e.debug()),
        _ => panic!("{what}: did not finish within 90 s"),
    }
}

/// What went into the muxer.
struct Muxed {
    /// The cues the transcriber pushed.
    pushed: Vec<Cue>,
    /// Where the file's timeline starts: the earliest timestamp muxed (a
    /// live source's first buffers are stamped with the running time).
    origin: u64,
    path: std::path::PathBuf,
}

/// Transcribes `buffers` of 100 ms of a test tone into `muxer` next to the
/// audio, with default queues.
fn mux(muxer: &str, live: bool, buffers: u32, name: &str) -> Muxed {
    mux_with(muxer, live, buffers, name, "")
}

/// The same with `extra` properties on the transcriber.
fn mux_with(muxer: &str, live: bool, buffers: u32, name: &str, extra: &str) -> Muxed {
    common::init_plugin();
    let path = common::scratch_dir(name).join("out.mp4");
    let line = format!(
        "audiotestsrc is-live={live} num-buffers={buffers} samplesperbuffer=1600 ! \
         audio/x-raw,rate=16000,channels=1,format=S16LE ! tee name=t \
         t. ! queue ! voxtralrttranscriber name=tr model-path={model} threads=1 {extra} ! queue ! mux.subtitle_0 \
         t. ! queue ! audioconvert ! lamemp3enc ! mux.audio_0 \
         {muxer} name=mux ! filesink location={out}",
        model = common::tiny_model().display(),
        out = path.display(),
    );
    let pipeline = gst::parse::launch(&line).unwrap();
    let transcriber = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("tr")
        .unwrap();
    let pushed = record(&transcriber.static_pad("src").unwrap());
    let audio_pad = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("mux")
        .unwrap()
        .static_pad("audio_0")
        .unwrap();
    let audio = record(&audio_pad);
    run_to_eos(&pipeline, &line);
    let pushed = pushed.lock().unwrap().clone();
    let first_audio = audio.lock().unwrap().first().expect("audio was muxed").pts;
    let origin = pushed
        .first()
        .map_or(first_audio, |c| c.pts.min(first_audio));
    Muxed {
        pushed,
        origin,
        path,
    }
}

/// The subtitle samples qtdemux reads from `path` (empty samples, which
/// stand for the time between cues, left out).
fn demux(path: &std::path::Path) -> Vec<Cue> {
    let line = format!(
        "filesrc location={} ! qtdemux name=d d.subtitle_0 ! fakesink name=read sync=false",
        path.display()
    );
    let pipeline = gst::parse::launch(&line).unwrap();
    let sink = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("read")
        .unwrap();
    let read = record(&sink.static_pad("sink").unwrap());
    run_to_eos(&pipeline, &line);
    let cues = read.lock().unwrap().clone();
    cues.into_iter().filter(|c| !c.text.is_empty()).collect()
}

fn assert_same_cues(muxed: &Muxed, read: &[Cue]) {
    let pushed = &muxed.pushed;
    assert!(pushed.len() >= 10, "too few words to compare: {pushed:?}");
    let texts = |cues: &[Cue]| cues.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(read), texts(pushed), "the file's cue texts");
    for (p, r) in pushed.iter().zip(read) {
        let close = |a: u64, b: u64| a.abs_diff(b) <= TIMESCALE_ROUNDING_NS;
        let start = p.pts - muxed.origin;
        assert!(close(start, r.pts), "start of {p:?} read back as {r:?}");
        assert!(
            close(start + p.duration, r.pts + r.duration),
            "end of {p:?} read back as {r:?}"
        );
    }
}

fn check(muxer: &str, live: bool) {
    let name = format!("{muxer}-{}", if live { "live" } else { "file" });
    let muxed = mux(muxer, live, 60, &name);
    assert!(
        std::fs::metadata(&muxed.path).unwrap().len() > 10_000,
        "{name}"
    );
    assert_same_cues(&muxed, &demux(&muxed.path));
}

#[test]
fn audio_and_words_mux_into_mp4_and_every_cue_keeps_its_time() {
    check("mp4mux", false);
}

#[test]
fn audio_and_words_mux_into_quicktime_and_every_cue_keeps_its_time() {
    check("qtmux", false);
}

#[test]
fn live_audio_and_words_mux_into_mp4_and_every_cue_keeps_its_time() {
    check("mp4mux", true);
}

#[test]
fn live_audio_and_words_mux_into_quicktime_and_every_cue_keeps_its_time() {
    check("qtmux", true);
}

/// Issue 21: caption lines, each held until it is full or a pause comes,
/// must not hold the subtitle pad back longer than default queues buffer.
fn check_lines(muxer: &str) {
    let name = format!("{muxer}-lines");
    let muxed = mux_with(muxer, false, 150, &name, "output=lines");
    assert!(
        std::fs::metadata(&muxed.path).unwrap().len() > 10_000,
        "{name}"
    );
    assert!(muxed.pushed.len() >= 3, "too few lines: {:?}", muxed.pushed);
    let read = demux(&muxed.path);
    let texts = |cues: &[Cue]| cues.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&read), texts(&muxed.pushed));
}

#[test]
fn audio_and_caption_lines_mux_into_mp4_with_default_queues() {
    check_lines("mp4mux");
}

#[test]
fn audio_and_caption_lines_mux_into_quicktime_with_default_queues() {
    check_lines("qtmux");
}
