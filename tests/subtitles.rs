// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Subtitle styles (issue 44 §1): every rule of a style checked on every
//! cue of speech at a natural pace (the bulletin of
//! tests/common/bulletin.rs), through the sink's files and the
//! transcriber's `output=lines`, with the local engine and the vLLM double.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use common::bulletin::{assert_rules, dictionary, speech, srt_cues, Cue, BBC, DCMP, NETFLIX};
use common::readers::{self, Kind};
use common::subtitle_checks::{
    assert_clean, assert_scc_timing, assert_ttml_timing, assert_words, scc_words, ttml_words,
};
use gst::prelude::*;
use gstvoxtralrt::subtitles::{CueBuilder, Style, StyleName};
use gstvoxtralrt::transcript::Word;

const MS: u64 = 1_000_000;
const F32_CAPS: &str = common::remote::F32_CAPS;

/// What a run gave.
#[derive(Debug, Default)]
struct Outcome {
    /// The words of the voxtralrt-transcript messages: (start ms, text).
    words: Vec<(u64, String)>,
    /// The same with their start and end in ns.
    timed: Vec<(u64, u64, String)>,
    /// The sink's file.
    file: PathBuf,
    /// The cues of the file (or of the buffers with output=lines).
    cues: Vec<Cue>,
    stats: Option<gst::Structure>,
    warnings: Vec<String>,
}

impl Outcome {
    fn stat(&self, field: &str) -> u64 {
        self.stats.as_ref().unwrap().get::<u64>(field).unwrap()
    }
}

/// Runs the bulletin (non-live, 100 ms buffers from an appsrc) into
/// `element` (its properties, `location=` added for the sink: an SRT file,
/// whose cues are read); the words are its transcript messages, or its
/// buffers.
fn run(element: &str, props: &str) -> Outcome {
    run_into(element, props, "out.srt")
}

/// The same, the sink writing the file `name`.
fn run_into(element: &str, props: &str, name: &str) -> Outcome {
    common::init_plugin();
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = common::scratch_dir(&format!("subtitles-run-{n}"));
    let path = dir.join(name);
    let (tail, is_sink) = if element == "voxtralrtsink" {
        (format!("location={}", path.display()), true)
    } else {
        (
            "! appsink name=out sync=false emit-signals=true".to_owned(),
            false,
        )
    };
    let line = format!(
        "appsrc name=src format=time caps={F32_CAPS} ! {element} name=e threads=1 \
         replacements={} {props} {tail}",
        dictionary().display()
    );
    let pipeline = gst::parse::launch(&line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .downcast::<gst::Pipeline>()
        .unwrap();
    let outcome = Arc::new(Mutex::new(Outcome::default()));
    if !is_sink {
        let o = outcome.clone();
        pipeline
            .by_name("out")
            .unwrap()
            .connect("new-sample", false, move |args| {
                let sink = args[0].get::<gst::Element>().unwrap();
                let sample = sink.emit_by_name::<gst::Sample>("pull-sample", &[]);
                let b = sample.buffer().unwrap();
                let start = b.pts().unwrap().nseconds() / MS;
                let end = start + b.duration().unwrap().nseconds() / MS;
                let text = common::text_of(&b.to_owned());
                let mut o = o.lock().unwrap();
                if !text.is_empty() {
                    o.cues.push(Cue {
                        start,
                        end,
                        lines: text.lines().map(str::to_owned).collect(),
                    });
                }
                Some(gst::FlowReturn::Ok.to_value())
            });
    }
    let o = outcome.clone();
    pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
        let mut o = o.lock().unwrap();
        match msg.view() {
            gst::MessageView::Warning(w) => o.warnings.push(w.error().to_string()),
            gst::MessageView::Element(e) => {
                if let Some(s) = e.structure().filter(|s| s.name() == "voxtralrt-transcript") {
                    let start = s.get::<u64>("stream-time").unwrap();
                    let end = s.get::<u64>("stream-time-end").unwrap();
                    let text = s.get::<String>("text").unwrap();
                    o.words.push((start / MS, text.clone()));
                    o.timed.push((start, end, text));
                }
            }
            _ => {}
        }
        gst::BusSyncReply::Pass
    });
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    for (k, piece) in speech().audio.chunks(1600).enumerate() {
        common::push_at(&src, piece, 100 * k as u64);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::expect_eos(&pipeline);
    let stats = pipeline
        .by_name("e")
        .unwrap()
        .property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let mut outcome = std::mem::take(&mut *outcome.lock().unwrap());
    outcome.stats = Some(stats);
    if is_sink && name.ends_with(".srt") {
        outcome.cues = srt_cues(&std::fs::read_to_string(&path).unwrap());
    }
    outcome.file = path;
    outcome
}

fn report(name: &str, outcome: &Outcome, fastest: f64) {
    let durations: Vec<u64> = outcome.cues.iter().map(|c| c.end - c.start).collect();
    eprintln!(
        "{name}: {} words, {} cues, {} to {} ms on screen, fastest {fastest:.1}; \
         counted too fast {}, short {}",
        outcome.words.len(),
        outcome.cues.len(),
        durations.iter().min().unwrap(),
        durations.iter().max().unwrap(),
        outcome.stat("subtitle-cues-too-fast"),
        outcome.stat("subtitle-cues-short"),
    );
}

#[test]
fn the_bulletin_is_speech_at_a_natural_pace() {
    let speech = speech();
    let seconds = speech.audio.len() as f64 / 16_000.0;
    let pace = speech.words as f64 / seconds;
    eprintln!(
        "{} words in {seconds:.1} s: {pace:.2} a second",
        speech.words
    );
    assert!((2.0..=3.0).contains(&pace), "{pace:.2} words a second");
    // The fixture writes one word per spoken word.
    let outcome = run(
        "voxtralrtsink",
        &format!("model-path={}", common::tone_model()),
    );
    assert_eq!(outcome.words.len(), speech.words);
}

#[test]
fn an_srt_file_with_default_properties_meets_netflix_on_every_cue() {
    let outcome = run(
        "voxtralrtsink",
        &format!("model-path={}", common::tone_model()),
    );
    let fastest = assert_rules(&NETFLIX, &outcome.words, &outcome.cues);
    report("sink, default", &outcome, fastest);
    assert_eq!(outcome.stat("subtitle-cues"), outcome.cues.len() as u64);
    assert_eq!(outcome.stat("subtitle-cues-too-fast"), 0);
    assert_eq!(outcome.stat("subtitle-cues-short"), 0);
}

#[test]
fn output_lines_in_netflix_gives_the_files_cues_from_both_elements() {
    let model = format!("model-path={}", common::tone_model());
    let file = run("voxtralrtsink", &model);
    let lines = format!("{model} output=lines subtitle-style=netflix");
    let sink = run("voxtralrtsink", &lines);
    assert_eq!(sink.cues, file.cues, "the sink's output=lines");
    assert_eq!(sink.stat("subtitle-cues"), file.cues.len() as u64);
    let transcriber = run("voxtralrttranscriber", &lines);
    assert_eq!(
        transcriber.cues, file.cues,
        "the transcriber's output=lines"
    );
    assert_eq!(transcriber.stat("subtitle-cues"), file.cues.len() as u64);
}

#[test]
fn bbc_and_dcmp_meet_their_rules_on_every_cue() {
    let model = format!("model-path={}", common::tone_model());
    for (name, rules) in [("bbc", BBC), ("dcmp", DCMP)] {
        let outcome = run("voxtralrtsink", &format!("{model} subtitle-style={name}"));
        let fastest = assert_rules(&rules, &outcome.words, &outcome.cues);
        report(name, &outcome, fastest);
        assert_eq!(outcome.stat("subtitle-cues-too-fast"), 0, "{name}");
    }
}

#[test]
fn the_vllm_double_meets_netflix_with_default_properties_and_when_asked() {
    let double = common::vllm_double::Double::start(
        common::fixture("voxtral-rt-tone.gguf"),
        Default::default(),
    );
    let remote = format!(
        "engine=vllm url={} model={}",
        double.url(),
        common::vllm_double::SERVED_MODEL
    );
    let default = run("voxtralrtsink", &remote);
    let fastest = assert_rules(&NETFLIX, &default.words, &default.cues);
    report("vLLM double, default", &default, fastest);
    let netflix = run("voxtralrtsink", &format!("{remote} subtitle-style=netflix"));
    assert_eq!(netflix.cues, default.cues);
}

#[test]
fn broadcast_keeps_the_transcripts_rows() {
    let model = format!("model-path={}", common::tone_model());
    let broadcast = run(
        "voxtralrttranscriber",
        &format!("{model} output=lines subtitle-style=broadcast"),
    );
    let default = run("voxtralrttranscriber", &format!("{model} output=lines"));
    assert_eq!(broadcast.cues, default.cues, "broadcast is the default");
    for cue in &broadcast.cues {
        assert_eq!(cue.lines.len(), 1, "{cue:?}");
        assert!(cue.lines[0].chars().count() <= 32, "{cue:?}");
    }
}

/// The transcriber's LATENCY answer on its src pad with `props`, live.
fn latency_with(props: &str) -> u64 {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} {props} ! fakesink",
        common::tiny_model().display()
    ))
    .unwrap();
    let (live, min) = common::latency_of_pad(&pipeline, "src");
    assert!(live);
    min.nseconds()
}

#[test]
fn a_style_on_lines_adds_its_longest_cue_to_the_latency_and_nothing_else_does() {
    let words = latency_with("");
    assert_eq!(latency_with("subtitle-style=netflix"), words, "words");
    assert_eq!(latency_with("output=lines"), words, "broadcast lines");
    let hold = 7_000_000_000 + 83_333_334;
    assert_eq!(
        latency_with("output=lines subtitle-style=netflix"),
        words + hold
    );
}

#[test]
fn live_a_cue_leaves_once_its_end_is_decided_within_the_latency() {
    common::init_plugin();
    // The bulletin's first sentences, in real time.
    let audio = &speech().audio[..16_000 * 24];
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 replacements={} output=lines \
         subtitle-style=netflix ! fakesink sync=false",
        common::tone_model(),
        dictionary().display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    let left = Arc::new(Mutex::new(Vec::<(u64, u64, String)>::new())); // (pts, running time, text)
    let t = pipeline.by_name("t").unwrap();
    let (log, weak) = (left.clone(), pipeline.downgrade());
    t.static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            let b = info.buffer().unwrap();
            let pipeline = weak.upgrade().unwrap();
            let now = pipeline.current_running_time().unwrap().nseconds();
            let text = common::text_of(&b.to_owned());
            log.lock()
                .unwrap()
                .push((b.pts().unwrap().nseconds(), now, text));
            gst::PadProbeReturn::Ok
        });
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    common::push_in_real_time(&src, audio, &clock, || {});
    let mut q = gst::query::Latency::new();
    assert!(t.static_pad("src").unwrap().query(&mut q));
    let latency = q.result().1.nseconds();
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let mut skipped = Vec::new();
    let bus = pipeline.bus().unwrap();
    loop {
        let msg = bus
            .timed_pop(gst::ClockTime::from_seconds(30))
            .expect("no EOS within 30 s");
        match msg.view() {
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            gst::MessageView::Element(e) => {
                if let Some(s) = e.structure().filter(|s| s.name() == "voxtralrt-skipped") {
                    skipped.push(s.to_owned());
                }
            }
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    let left = left.lock().unwrap();
    let cues: Vec<_> = left.iter().filter(|c| !c.2.is_empty()).collect();
    assert!(cues.len() >= 5 || !skipped.is_empty(), "{left:?}");
    // Before EOS, each cue left once its end was decided: no later than
    // the latency after its start. (The last ones leave at EOS, sooner.)
    let mut worst = 0;
    for (pts, at, text) in &cues {
        let waited = at.saturating_sub(*pts);
        worst = worst.max(waited);
        assert!(
            waited <= latency || !skipped.is_empty(),
            "{text:?} at {} ms left {} ms later (latency {} ms)",
            pts / MS,
            waited / MS,
            latency / MS
        );
    }
    // The time a cue waits is mostly its own: its words and its end.
    assert!(worst > 2_000 * MS || !skipped.is_empty(), "{worst}");
    eprintln!(
        "{} cues, the latest left {} ms after its start (LATENCY {} ms){}",
        cues.len(),
        worst / MS,
        latency / MS,
        if skipped.is_empty() {
            String::new()
        } else {
            format!("; the machine fell behind: {skipped:?}")
        }
    );
}

/// The cues `style` makes of a run's words, in ns (what the sink's file
/// holds).
fn cues_of(outcome: &Outcome, style: Style) -> Vec<gstvoxtralrt::subtitles::Cue> {
    let mut builder = CueBuilder::new(style);
    let mut cues = Vec::new();
    for (start, end, text) in &outcome.timed {
        cues.extend(builder.push(Word::new(text, *start, *end)));
    }
    cues.extend(builder.finish(None));
    cues
}

#[test]
fn scc_ttml_and_ebu_tt_d_files_of_the_sink_are_read_back_with_every_word_in_time() {
    let model = format!("model-path={}", common::tone_model());
    // The SRT of the same words: the cues the other files hold.
    let srt = run("voxtralrtsink", &model);
    let netflix = cues_of(&srt, Style::new(StyleName::Netflix, None, 32));
    let in_ms = |cues: &[gstvoxtralrt::subtitles::Cue]| -> Vec<(u64, Vec<String>)> {
        cues.iter()
            .map(|c| (c.start_ns / MS, c.lines.clone()))
            .collect()
    };
    let from_srt: Vec<(u64, Vec<String>)> = srt
        .cues
        .iter()
        .map(|c| (c.start, c.lines.clone()))
        .collect();
    assert_eq!(in_ms(&netflix), from_srt);

    // SCC, in dcmp's 32-character lines (CEA-608's row).
    let scc = run_into(
        "voxtralrtsink",
        &format!("{model} subtitle-style=dcmp"),
        "out.scc",
    );
    let dcmp = cues_of(&scc, Style::new(StyleName::Dcmp, None, 32));
    for (reader, reading) in [
        ("ttconv", readers::ttconv(&scc.file, Kind::Scc)),
        ("pycaption", readers::pycaption(&scc.file, Kind::Scc)),
        ("ffmpeg", readers::ffmpeg_scc(&scc.file)),
    ] {
        let what = format!("{reader} on the sink's SCC");
        assert_clean(&what, &reading);
        let first = assert_words(&what, &reading, &scc_words(&dcmp));
        let worst = assert_scc_timing(&what, &reading, &dcmp, &first);
        eprintln!(
            "{what}: {} captions, start errors up to {worst:.2} frames",
            reading.captions.len()
        );
    }

    // IMSC 1.1 Text and EBU-TT-D in the default style.
    let imsc = run_into("voxtralrtsink", &model, "out.ttml");
    let ebu = run_into("voxtralrtsink", &model, "out.ebu.ttml");
    readers::xmllint_ebu_tt_d(&ebu.file).expect("EBU-TT-D valid against its schema");
    for (what, path) in [("IMSC", &imsc.file), ("EBU-TT-D", &ebu.file)] {
        let mut readings = vec![
            ("ttconv", readers::ttconv(path, Kind::Ttml)),
            ("pycaption", readers::pycaption(path, Kind::Ttml)),
        ];
        if what == "IMSC" {
            readings.push(("imschrm", readers::imschrm(path)));
        }
        for (reader, reading) in readings {
            let what = format!("{reader} on the sink's {what}");
            assert_clean(&what, &reading);
            assert_words(&what, &reading, &ttml_words(&netflix));
            let worst = assert_ttml_timing(&what, &reading, &netflix);
            eprintln!(
                "{what}: {} captions, times within {worst:.3} ms",
                reading.captions.len()
            );
        }
    }
}
