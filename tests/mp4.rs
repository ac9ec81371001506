// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Audio and subtitles into MP4 and QuickTime files with default queues,
//! read back with qtdemux: every cue keeps its text and its time.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

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
    run_feeding(pipeline, what, None);
}

/// The same, with `audio` pushed in real time into its live appsrc `src`
/// once it plays, then EOS.
fn run_feeding(pipeline: &gst::Element, what: &str, audio: Option<Vec<f32>>) {
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let feeder = audio.map(|audio| {
        let src = pipeline
            .downcast_ref::<gst::Bin>()
            .unwrap()
            .by_name("src")
            .expect("an appsrc named src");
        let clock = gst::SystemClock::obtain();
        std::thread::spawn(move || {
            common::push_in_real_time(&src, &audio, &clock, || {});
            let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        })
    });
    let message = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(90),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipeline.set_state(gst::State::Null).unwrap();
    if let Some(feeder) = feeder {
        feeder.join().unwrap();
    }
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
    /// The empty buffers it pushed over silences.
    empty: usize,
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
    let source = format!(
        "audiotestsrc is-live={live} num-buffers={buffers} samplesperbuffer=1600 ! \
         audio/x-raw,rate=16000,channels=1,format=S16LE"
    );
    let model = format!("model-path={}", common::tiny_model().display());
    mux_from(muxer, &source, name, &format!("{model} {extra}"))
}

/// Transcribes what `source` gives (transcriber properties `props`) into
/// `muxer` next to the audio, as MP3, with default queues.
fn mux_from(muxer: &str, source: &str, name: &str, props: &str) -> Muxed {
    mux_fed(muxer, source, name, props, None)
}

/// The same from a live appsrc named `src`, fed `audio` in real time.
fn mux_live(muxer: &str, source: &str, name: &str, props: &str, audio: Vec<f32>) -> Muxed {
    mux_fed(muxer, source, name, props, Some(audio))
}

fn mux_fed(muxer: &str, source: &str, name: &str, props: &str, audio: Option<Vec<f32>>) -> Muxed {
    common::init_plugin();
    let path = common::scratch_dir(name).join("out.mp4");
    let line = format!(
        "{source} ! tee name=t \
         t. ! queue ! voxtralrttranscriber name=tr threads=1 {props} ! queue ! mux.subtitle_0 \
         t. ! queue ! audioconvert ! lamemp3enc ! mux.audio_0 \
         {muxer} name=mux ! filesink location={out}",
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
    let muxed_audio = record(&audio_pad);
    run_feeding(&pipeline, &line, audio);
    let all = pushed.lock().unwrap().clone();
    let first_audio = muxed_audio
        .lock()
        .unwrap()
        .first()
        .expect("audio was muxed")
        .pts;
    let origin = all.first().map_or(first_audio, |c| c.pts.min(first_audio));
    let (empty, pushed): (Vec<Cue>, Vec<Cue>) = all.into_iter().partition(|c| c.text.is_empty());
    Muxed {
        pushed,
        empty: empty.len(),
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

/// Speech with pauses, as the tone fixture hears it: an 80 ms burst (a word,
/// "x") every `every_ms`, for 15 s.
fn bursts(dir: &std::path::Path, every_ms: usize) -> String {
    let mut audio = vec![0.0f32; 15 * 16_000];
    let frames = audio.len() / common::FRAME;
    let every = every_ms / 80;
    for f in (0..frames).step_by(every) {
        common::add_tone(&mut audio, f..f + 1, 1000.0);
    }
    let wav = dir.join("bursts.wav");
    common::write_wav(&wav, &audio);
    format!("filesrc location={} ! wavparse", wav.display())
}

/// Words with long pauses (1.5 s) and lines that fill slowly (a word every
/// 0.4 s): an MP4 muxer takes the audio only up to its sparse track's last
/// buffer and drops GAPs, so with GAPs alone both hung with default queues.
fn check_pauses(muxer: &str, every_ms: usize, output: &str) {
    let name = format!("{muxer}-{output}-every-{every_ms}");
    let source = bursts(&common::scratch_dir(&format!("{name}-audio")), every_ms);
    let props = format!("model-path={} output={output}", common::tone_model());
    let muxed = mux_from(muxer, &source, &name, &props);
    assert!(muxed.pushed.len() >= 3, "{name}: {:?}", muxed.pushed);
    assert!(muxed.empty > 0, "{name}: no empty buffer over the silences");
    let read = demux(&muxed.path);
    let texts = |cues: &[Cue]| cues.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&read), texts(&muxed.pushed), "{name}");
}

#[test]
fn words_with_long_pauses_mux_into_mp4_and_quicktime_with_default_queues() {
    for muxer in ["mp4mux", "qtmux"] {
        check_pauses(muxer, 1500, "words");
    }
}

#[test]
fn slowly_filled_caption_lines_mux_into_mp4_and_quicktime_with_default_queues() {
    for muxer in ["mp4mux", "qtmux"] {
        check_pauses(muxer, 400, "lines");
    }
}

#[test]
fn a_transcriber_inside_a_bin_finds_the_mp4_muxer_beyond_it() {
    // Its src pad's peer is the inner side of the bin's ghost pad.
    let dir = common::scratch_dir("mp4-from-a-bin");
    let props = format!("model-path={}", common::tone_model());
    let source = bursts(&dir, 1500);
    common::init_plugin();
    let path = dir.join("out.mp4");
    let line = format!(
        "{source} ! tee name=t \
         t. ! queue ! bin.( name=inner voxtralrttranscriber threads=1 {props} ) ! queue ! mux.subtitle_0 \
         t. ! queue ! audioconvert ! lamemp3enc ! mux.audio_0 \
         mp4mux name=mux ! filesink location={}",
        path.display()
    );
    run_to_eos(&gst::parse::launch(&line).unwrap(), &line);
    assert!(demux(&path).len() >= 5, "{}", path.display());
}

#[test]
fn silences_are_empty_buffers_only_for_an_mp4_muxer() {
    // matroskamux takes GAPs; empty buffers would be empty cues in srtenc
    // or webvttenc, so nothing but an MP4 muxer gets them.
    common::init_plugin();
    let dir = common::scratch_dir("empty-only-for-mp4");
    let line = format!(
        "{} ! voxtralrttranscriber name=tr threads=1 model-path={} ! queue ! matroskamux ! fakesink",
        bursts(&dir, 1500),
        common::tone_model()
    );
    let pipeline = gst::parse::launch(&line).unwrap();
    let tr = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("tr")
        .unwrap();
    let pushed = record(&tr.static_pad("src").unwrap());
    run_to_eos(&pipeline, &line);
    let pushed = pushed.lock().unwrap();
    assert!(pushed.len() >= 5, "{pushed:?}");
    assert!(pushed.iter().all(|c| !c.text.is_empty()), "{pushed:?}");
}

#[test]
fn a_long_delay_muxes_when_the_audio_queue_holds_the_latency() {
    // The advice of docs/files-and-muxing.md for delay=1200 and more: the audio branch waits
    // for text that comes that much later.
    common::init_plugin();
    let path = common::scratch_dir("long-delay").join("out.mp4");
    let line = format!(
        "audiotestsrc num-buffers=60 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         tee name=t t. ! queue ! voxtralrttranscriber threads=1 model-path={} delay=1200 ! \
         queue ! mux.subtitle_0 t. ! queue max-size-time=3000000000 ! audioconvert ! lamemp3enc ! \
         mux.audio_0 mp4mux name=mux ! filesink location={}",
        common::tiny_model().display(),
        path.display()
    );
    run_to_eos(&gst::parse::launch(&line).unwrap(), &line);
    assert!(!demux(&path).is_empty(), "no cue in {}", path.display());
}

/// Audio like a user's, 16 kHz mono: what the tests below mux.
#[derive(Debug, Clone, Copy)]
enum Sound {
    /// espeak-ng words with 1.6 s pauses between them.
    Speech,
    /// sox's pink noise.
    PinkNoise,
    /// A chord of four tones with a tremolo, as sustained music.
    Music,
}

/// Samples of `sound`, about `seconds` long (made by espeak-ng or sox).
fn sound(sound: Sound, seconds: u32, dir: &std::path::Path) -> Vec<f32> {
    let raw = dir.join("sound.f32");
    let mut sox = std::process::Command::new("sox");
    match sound {
        Sound::Speech => {
            let words = [
                "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
            ];
            let ssml: String = (0..seconds / 2)
                .map(|i| {
                    format!(
                        "{} <break time=\"1600ms\"/> ",
                        words[i as usize % words.len()]
                    )
                })
                .collect();
            let wav = dir.join("speech.wav");
            let spoke = std::process::Command::new("espeak-ng")
                .args(["-m", "-w"])
                .arg(&wav)
                .arg(format!("<speak>{ssml}</speak>"))
                .status()
                .expect("espeak-ng (Debian package espeak-ng)");
            assert!(spoke.success(), "espeak-ng failed");
            sox.arg(&wav);
        }
        Sound::PinkNoise | Sound::Music => {
            sox.args(["-n", "-r", "16000", "-c", "1"]);
        }
    }
    sox.args([
        "-r", "16000", "-c", "1", "-e", "float", "-b", "32", "-t", "raw",
    ])
    .arg(&raw);
    let secs = seconds.to_string();
    match sound {
        Sound::Speech => sox.args(["trim", "0", &secs]),
        Sound::PinkNoise => sox.args(["synth", &secs, "pinknoise", "vol", "0.3"]),
        Sound::Music => sox.args([
            "synth", &secs, "sine", "220", "sine", "277", "sine", "330", "sine", "440", "remix",
            "-", "tremolo", "3", "40", "gain", "-n", "-3",
        ]),
    };
    assert!(sox.status().expect("sox").success(), "sox failed");
    common::read_f32le(&raw)
}

/// Muxes `sound` next to its words or lines (`output`) into `muxer` with
/// default queues, from a file or from a live source fed in real time, and
/// reads every cue back.
fn check_sound(sound_kind: Sound, output: &str, muxer: &str, live: bool) {
    let name = format!(
        "{sound_kind:?}-{output}-{muxer}-{}",
        if live { "live" } else { "file" }
    );
    let dir = common::scratch_dir(&format!("{name}-audio"));
    // Live runs take their length in real time.
    let audio = sound(sound_kind, if live { 8 } else { 30 }, &dir);
    let props = format!(
        "model-path={} output={output}",
        common::tiny_model().display()
    );
    let muxed = if live {
        let caps = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
        let source = format!("appsrc name=src is-live=true format=time caps={caps}");
        mux_live(muxer, &source, &name, &props, audio)
    } else {
        let wav = dir.join("in.wav");
        common::write_wav(&wav, &audio);
        let source = format!("filesrc location={} ! wavparse", wav.display());
        mux_from(muxer, &source, &name, &props)
    };
    assert!(muxed.pushed.len() >= 3, "{name}: {:?}", muxed.pushed);
    let read = demux(&muxed.path);
    let texts = |cues: &[Cue]| cues.iter().map(|c| c.text.clone()).collect::<Vec<_>>();
    assert_eq!(
        texts(&read),
        texts(&muxed.pushed),
        "{name}: the cues read back"
    );
}

fn check_every_muxer(sound_kind: Sound, live: bool) {
    for output in ["words", "lines"] {
        for muxer in ["mp4mux", "qtmux"] {
            check_sound(sound_kind, output, muxer, live);
        }
    }
}

#[test]
fn speech_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    check_every_muxer(Sound::Speech, false);
}

#[test]
fn pink_noise_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    // It hung MP4 files with output=lines: a stall's "the text stands here"
    // was a GAP, which qtmux drops.
    check_every_muxer(Sound::PinkNoise, false);
}

#[test]
fn music_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    check_every_muxer(Sound::Music, false);
}

#[test]
fn live_speech_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    check_every_muxer(Sound::Speech, true);
}

#[test]
fn live_pink_noise_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    check_every_muxer(Sound::PinkNoise, true);
}

#[test]
fn live_music_muxes_into_mp4_and_quicktime_as_words_and_as_lines() {
    check_every_muxer(Sound::Music, true);
}
