// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Subtitle styles (issue 44 §1): every rule of a style checked on every
//! cue of speech at a natural pace, through the sink's files and the
//! transcriber's `output=lines`, with the local engine and the vLLM double.
//!
//! The speech: espeak-ng says a news bulletin word by word (`-s 175`: a
//! word said alone is slower than in a sentence), the words one after the
//! other, 240 ms more after a comma and 560 ms after a sentence: 2.1 words
//! a second, pauses included. Each word is marked at its start by an 80 ms
//! 1 kHz pip, which the tone fixture writes as a word ("x"); a house
//! dictionary words each "x" as "words", six characters with its space,
//! about an English word's length. So the transcript has the bulletin's
//! pace and pauses, and the reading speed of English at that pace.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use common::readers::{self, Kind};
use common::subtitle_checks::{
    assert_clean, assert_scc_timing, assert_ttml_timing, assert_words, scc_words, ttml_words,
};
use gst::prelude::*;
use gstvoxtralrt::subtitles::{CueBuilder, Style, StyleName, Word};

const MS: u64 = 1_000_000;
const F32_CAPS: &str = common::remote::F32_CAPS;

const BULLETIN: &[&str] = &[
    "Good evening and welcome to the late news.",
    "Tonight we look at the weather, the roads and the markets.",
    "First, the weather.",
    "It stays fine and warm through the weekend.",
    "There is a chance of rain on Monday in the north.",
    "Farmers say the fields need it.",
    "On the roads, traffic is light.",
    "The bridge in the city centre opens again tomorrow morning.",
    "Drivers should allow more time near the harbour.",
    "Now the markets.",
    "Shares rose a little in early trading, then fell back by the close.",
    "The pound was steady against the euro.",
    "In sport, the home team won their match by two goals.",
    "Their captain scored the second in the last minute.",
    "The coach said he was proud of every player.",
    "Next week the team travels to the coast.",
    "And finally, a story from the zoo.",
    "A baby elephant was born this morning.",
    "Keepers say mother and calf are doing well.",
    "Visitors can see them from the end of the month.",
    "That is all from us tonight.",
    "Thank you for watching.",
    "Stay with us for the film after the break.",
    "Good night.",
];

/// The bulletin as audio, and how many words it says.
struct Speech {
    audio: Vec<f32>,
    words: usize,
}

/// espeak-ng saying `word` alone, its silence trimmed, at a quarter of its
/// level (so that its own 1 kHz never reaches the fixture's threshold).
fn espeak_word(word: &str, dir: &Path) -> Vec<f32> {
    let wav = dir.join(format!("{word}.wav"));
    let spoke = std::process::Command::new("espeak-ng")
        .args(["-s", "175", "-w"])
        .arg(&wav)
        .arg(word)
        .status()
        .expect("espeak-ng (Debian package espeak-ng)");
    assert!(spoke.success());
    common::raw_of(
        std::process::Command::new("sox").arg(&wav),
        &dir.join(format!("{word}.f32")),
        &[
            "silence", "1", "0.01", "-40d", "reverse", "silence", "1", "0.01", "-40d", "reverse",
            "vol", "0.25",
        ],
    )
}

fn speech() -> &'static Speech {
    static SPEECH: OnceLock<Speech> = OnceLock::new();
    SPEECH.get_or_init(|| {
        let dir = common::scratch_dir("subtitles-speech");
        let frame = common::FRAME;
        // Three seconds of silence first (the fixture writes nothing for
        // its first frames, and a pop-on SCC caption loads before it
        // shows).
        let mut audio = vec![0.0f32; 38 * frame];
        let mut words = 0;
        for sentence in BULLETIN {
            for word in sentence.split(' ') {
                let bare: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
                let said = espeak_word(&bare.to_lowercase(), &dir);
                let at = audio.len() / frame;
                audio.extend(&said);
                let frames = audio.len().div_ceil(frame).max(at + 1);
                audio.resize(frames * frame, 0.0);
                common::add_tone(&mut audio, at..at + 1, 1000.0);
                let pause = if word.ends_with('.') {
                    7
                } else if word.ends_with(',') {
                    3
                } else {
                    0
                };
                audio.resize(audio.len() + pause * frame, 0.0);
                words += 1;
            }
        }
        audio.resize(audio.len() + 25 * frame, 0.0);
        Speech { audio, words }
    })
}

/// The house dictionary that words each "x".
fn dictionary() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = common::scratch_dir("subtitles-dictionary").join("words.txt");
        std::fs::write(&path, "x => words\n").unwrap();
        path
    })
    .clone()
}

/// A cue as a file or a buffer gives it: start and end (ms) and lines.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cue {
    start: u64,
    end: u64,
    lines: Vec<String>,
}

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

/// The cues of an SRT file (whole cues only: a cut one fails).
fn srt_cues(text: &str) -> Vec<Cue> {
    let ms = |t: &str| {
        let (hms, millis) = t.split_once(',').unwrap();
        let parts: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + millis.parse::<u64>().unwrap()
    };
    text.split_inclusive("\n\n")
        .enumerate()
        .map(|(i, block)| {
            assert!(block.ends_with("\n\n"), "a cut cue: {block:?}");
            let lines: Vec<&str> = block.trim_end().lines().collect();
            assert_eq!(lines[0], (i + 1).to_string(), "{block:?}");
            let (start, end) = lines[1].split_once(" --> ").unwrap();
            Cue {
                start: ms(start),
                end: ms(end),
                lines: lines[2..].iter().map(|l| l.to_string()).collect(),
            }
        })
        .collect()
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

/// A style's rules, as the guides give them (ms, characters).
struct Rules {
    lines: usize,
    chars: usize,
    min_ms: u64,
    max_ms: u64,
    gap_ms: u64,
    /// Characters a second, or words a minute.
    speed: Speed,
}

enum Speed {
    Cps(f64),
    Wpm(f64),
}

const NETFLIX: Rules = Rules {
    lines: 2,
    chars: 42,
    min_ms: 833,
    max_ms: 7000,
    gap_ms: 83,
    speed: Speed::Cps(20.0),
};

const BBC: Rules = Rules {
    lines: 2,
    chars: 37,
    min_ms: 1000,
    max_ms: 7000,
    gap_ms: 80,
    speed: Speed::Wpm(180.0),
};

const DCMP: Rules = Rules {
    lines: 2,
    chars: 32,
    min_ms: 2000,
    max_ms: 7000,
    gap_ms: 66,
    speed: Speed::Wpm(225.0),
};

/// Every rule on every cue, and every word of the transcript exactly once,
/// in order, in a cue that starts with its first word. Times are the
/// file's milliseconds (a millisecond's rounding allowed). Returns the
/// fastest reading speed of a cue.
fn assert_rules(rules: &Rules, outcome: &Outcome) -> f64 {
    let (words, cues) = (&outcome.words, &outcome.cues);
    let said: Vec<&str> = words.iter().map(|w| w.1.as_str()).collect();
    let shown: Vec<&str> = cues
        .iter()
        .flat_map(|c| c.lines.iter().flat_map(|l| l.split(' ')))
        .collect();
    assert_eq!(shown, said, "every word once, in order");
    assert!(cues.len() >= 20, "{} cues", cues.len());
    let mut fastest = 0.0f64;
    let mut first_word = 0;
    for (i, cue) in cues.iter().enumerate() {
        let n = cue
            .lines
            .iter()
            .map(|l| l.split(' ').count())
            .sum::<usize>();
        assert!(
            cue.start.abs_diff(words[first_word].0) <= 1,
            "{cue:?} starts away from its first word at {} ms",
            words[first_word].0
        );
        first_word += n;
        assert!(cue.lines.len() <= rules.lines, "{cue:?}");
        for line in &cue.lines {
            assert!(line.chars().count() <= rules.chars, "{cue:?}");
        }
        let duration = cue.end - cue.start;
        assert!(duration <= rules.max_ms, "{cue:?}");
        let next = cues.get(i + 1);
        if let Some(next) = next {
            assert!(
                next.start + 1 >= cue.end + rules.gap_ms,
                "{cue:?} then {next:?}"
            );
        }
        // The minimum and the reading speed where the speech allows them:
        // else the next cue starts right after the gap.
        let cut = next.is_some_and(|next| next.start <= cue.end + rules.gap_ms + 1);
        let chars = cue.lines.join(" ").chars().count() as f64;
        let speed = match rules.speed {
            Speed::Cps(limit) => (chars * 1000.0 / duration as f64, limit),
            Speed::Wpm(limit) => (n as f64 * 60_000.0 / duration as f64, limit),
        };
        fastest = fastest.max(speed.0);
        assert!(duration + 1 >= rules.min_ms || cut, "{cue:?} then {next:?}");
        assert!(speed.0 <= speed.1 * 1.01 || cut, "{cue:?}: {:.1}", speed.0);
    }
    fastest
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
    let fastest = assert_rules(&NETFLIX, &outcome);
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
        let fastest = assert_rules(&rules, &outcome);
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
    let fastest = assert_rules(&NETFLIX, &default);
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

#[test]
fn an_unknown_style_or_format_is_refused_naming_the_valid_ones() {
    let model = format!("model-path={}", common::tiny_model().display());
    let (ok, log) = common::gst_launch(&[
        "audiotestsrc",
        "num-buffers=1",
        "!",
        "voxtralrtsink",
        &model,
        "subtitle-style=hollywood",
        "format=docx",
    ]);
    assert!(ok, "{log}");
    assert!(
        log.contains(
            "subtitle-style \"hollywood\" is none of broadcast, netflix, bbc, dcmp; netflix stays"
        ),
        "{log}"
    );
    assert!(
        log.contains(
            "format \"docx\" is none of auto, txt, srt, vtt, jsonl, scc, ttml, ebu-tt-d; auto stays"
        ),
        "{log}"
    );
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
