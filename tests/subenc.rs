// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtsubenc` (issue 44 §4): the transcriber's words and its
//! translations into subtitle files of a style, from one run of one
//! microphone: English and Spanish SRT, SCC (English on CC1, Spanish on
//! CC3, and a Spanish CC1 file for the readers that read CC1 only), IMSC
//! 1.1 Text and EBU-TT-D, each read back by the third-party readers
//! (tests/common/readers.rs) with no problem, every word in order and in
//! time, the style's rules held on every cue. Then a pipeline killed with
//! `kill -9`, and bad input.
//!
//! The speech is the bulletin of tests/common/bulletin.rs (espeak-ng at
//! 2.1 words a second, each word marked for the tone fixture, worded
//! "words" by a house dictionary); the chat double translates each unit
//! into "[es] " and its text.

#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use common::bulletin::{self, assert_rules, Rules, NETFLIX, NETFLIX_OTHER};
use common::readers::{self, Kind};
use common::subtitle_checks::{assert_clean, check_scc, check_timed_text};
use gst::prelude::*;
use gstvoxtralrt::speakers::SPEAKER_CHANGE_EVENT;
use gstvoxtralrt::subtitles::{spread_words, Cue, CueBuilder, Style, StyleName};

const MS: u64 = 1_000_000;
const F32_CAPS: &str = common::remote::F32_CAPS;

/// What reached one language's encoders: each text buffer (start, end
/// ns, text), and where the input ended (the last buffer's or GAP's end).
#[derive(Debug, Default, Clone)]
struct Fed {
    buffers: Vec<(u64, u64, String)>,
    until: u64,
}

impl Fed {
    /// The words each buffer's text is spread into (start ms, text): what
    /// the cues must show, in order.
    fn words(&self) -> Vec<(u64, String)> {
        self.buffers
            .iter()
            .flat_map(|(start, end, text)| spread_words(text, *start, *end, None))
            .map(|w| (w.start_ns / MS, w.text))
            .collect()
    }

    /// The cues `style` makes of the words: what the files must hold.
    fn cues(&self, style: Style) -> Vec<Cue> {
        let mut builder = CueBuilder::new(style);
        let mut cues = Vec::new();
        for (start, end, text) in &self.buffers {
            for word in spread_words(text, *start, *end, None) {
                cues.extend(builder.push(word));
            }
        }
        cues.extend(builder.finish(Some(self.until)));
        cues
    }
}

/// Records what goes through `pad`: text buffers and GAPs.
fn record(pad: &gst::Pad) -> Arc<Mutex<Fed>> {
    let fed: Arc<Mutex<Fed>> = Arc::default();
    let log = fed.clone();
    pad.add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            let mut fed = log.lock().unwrap();
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) => {
                    let start = b.pts().unwrap().nseconds();
                    let end = start + b.duration().unwrap().nseconds();
                    fed.until = fed.until.max(end);
                    let text = common::text_of(b);
                    if !text.trim().is_empty() {
                        fed.buffers.push((start, end, text));
                    }
                }
                Some(gst::PadProbeData::Event(e)) => {
                    if let gst::EventView::Gap(gap) = e.view() {
                        let (pts, duration) = gap.get();
                        let end = pts + duration.unwrap_or(gst::ClockTime::ZERO);
                        fed.until = fed.until.max(end.nseconds());
                    }
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
    fed
}

/// The files of one language: (encoder name, its properties, file name).
const ENGLISH: &[(&str, &str, &str)] = &[
    ("en_srt", "format=srt", "en.srt"),
    ("en_scc", "format=scc", "en.scc"),
    ("en_ttml", "format=ttml", "en.ttml"),
    ("en_ebu", "format=ebu-tt-d", "en.ebu.xml"),
];
const SPANISH: &[(&str, &str, &str)] = &[
    ("es_srt", "format=srt", "es.srt"),
    ("es_cc3", "format=scc caption-channel=cc3", "es-cc3.scc"),
    ("es_cc1", "format=scc", "es-cc1.scc"),
    ("es_ttml", "format=ttml", "es.ttml"),
    ("es_ebu", "format=ebu-tt-d", "es.ebu.xml"),
];

/// One run of the bulletin into every file.
struct Run {
    dir: PathBuf,
    english: Fed,
    spanish: Fed,
    /// Each encoder's `stats`, by name.
    stats: Vec<(String, gst::Structure)>,
    warnings: Vec<String>,
}

impl Run {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn cues_counted(&self, encoder: &str) -> u64 {
        let (_, stats) = self.stats.iter().find(|(n, _)| n == encoder).unwrap();
        stats.get::<u64>("subtitle-cues").unwrap()
    }
}

fn branches(tee: &str, files: &[(&str, &str, &str)], dir: &Path) -> String {
    files
        .iter()
        .map(|(name, props, file)| {
            format!(
                "{tee}. ! queue ! voxtralrtsubenc name={name} {props} ! filesink location={} \
                 buffer-mode=unbuffered ",
                dir.join(file).display()
            )
        })
        .collect()
}

/// The bulletin, not live, into a transcriber with a Spanish translate
/// pad (the chat double), each language into its encoders.
fn the_run() -> &'static Run {
    static RUN: OnceLock<Run> = OnceLock::new();
    RUN.get_or_init(|| {
        common::init_plugin();
        let double = common::chat_double::ChatDouble::start(Default::default());
        let dir = common::scratch_dir("subenc-run");
        let line = format!(
            "appsrc name=src format=time caps={F32_CAPS} ! voxtralrttranscriber name=t \
             model-path={} threads=1 replacements={} language-code=en translate-url={} \
             translate-model={} translate_src_0::language-code=es ! tee name=en {}\
             t.translate_src_0 ! tee name=es {}",
            common::tone_model(),
            bulletin::dictionary().display(),
            double.base(),
            common::chat_double::SERVED_MODEL,
            branches("en", ENGLISH, &dir),
            branches("es", SPANISH, &dir),
        );
        let pipeline = gst::parse::launch(&line)
            .unwrap_or_else(|e| panic!("{line}: {e}"))
            .downcast::<gst::Pipeline>()
            .unwrap();
        let t = pipeline.by_name("t").unwrap();
        let english = record(&t.static_pad("src").unwrap());
        let spanish = record(&t.static_pad("translate_src_0").unwrap());
        let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = warnings.clone();
        pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
            if let gst::MessageView::Warning(w) = msg.view() {
                log.lock().unwrap().push(w.error().to_string());
            }
            gst::BusSyncReply::Pass
        });
        pipeline.set_state(gst::State::Playing).unwrap();
        let src = pipeline.by_name("src").unwrap();
        for (k, piece) in bulletin::speech().audio.chunks(1600).enumerate() {
            common::push_at(&src, piece, 100 * k as u64);
        }
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        common::expect_eos(&pipeline);
        let stats = ENGLISH
            .iter()
            .chain(SPANISH)
            .map(|(name, ..)| {
                let e = pipeline.by_name(name).unwrap();
                (name.to_string(), e.property::<gst::Structure>("stats"))
            })
            .collect();
        pipeline.set_state(gst::State::Null).unwrap();
        let run = Run {
            dir,
            english: english.lock().unwrap().clone(),
            spanish: spanish.lock().unwrap().clone(),
            stats,
            warnings: warnings.lock().unwrap().clone(),
        };
        run
    })
}

/// The style's cues of `fed` as an SRT file gives them (ms).
fn in_ms(cues: &[Cue]) -> Vec<bulletin::Cue> {
    cues.iter()
        .map(|c| bulletin::Cue {
            start: c.start_ns / MS,
            end: c.end_ns / MS,
            lines: c.lines.clone(),
        })
        .collect()
}

/// One language's SRT, SCC and IMSC files: the style's cues of what was
/// fed, read back by every reader; the style's rules on every cue.
fn check_language(run: &Run, fed: &Fed, language: &str, rules: &Rules, files: [&str; 3]) {
    let [srt, scc, ttml] = files.map(|f| run.file(f));
    let style = Style::new(StyleName::Netflix, Some(language), 32);
    let cues = fed.cues(style.clone());
    let scc_cues = fed.cues(style.with_line_limit(32));

    let written = bulletin::srt_cues(&std::fs::read_to_string(&srt).unwrap());
    assert_eq!(
        written,
        in_ms(&cues),
        "{language}: the SRT holds the style's cues"
    );
    let fastest = assert_rules(rules, &fed.words(), &written);
    eprintln!(
        "{language}: {} text buffers, {} words, {} cues, fastest {fastest:.1} characters a second",
        fed.buffers.len(),
        fed.words().len(),
        cues.len()
    );
    let scc_rules = Rules {
        chars: 32,
        ..*rules
    };
    assert_rules(&scc_rules, &fed.words(), &in_ms(&scc_cues));

    for (reader, reading) in [
        ("ttconv", readers::ttconv(&srt, Kind::Srt)),
        ("pycaption", readers::pycaption(&srt, Kind::Srt)),
    ] {
        check_timed_text(&format!("{reader} on {}", srt.display()), &reading, &cues);
    }
    for (reader, reading) in [
        ("ttconv", readers::ttconv(&scc, Kind::Scc)),
        ("pycaption", readers::pycaption(&scc, Kind::Scc)),
        ("ffmpeg", readers::ffmpeg_scc(&scc)),
    ] {
        check_scc(
            &format!("{reader} on {}", scc.display()),
            &reading,
            &scc_cues,
        );
    }
    let text = std::fs::read_to_string(&ttml).unwrap();
    assert!(text.contains(&format!("xml:lang=\"{language}\"")), "{text}");
    for (reader, reading) in [
        ("ttconv", readers::ttconv(&ttml, Kind::Ttml)),
        ("pycaption", readers::pycaption(&ttml, Kind::Ttml)),
        ("imschrm", readers::imschrm(&ttml)),
    ] {
        check_timed_text(&format!("{reader} on {}", ttml.display()), &reading, &cues);
    }
}

#[cfg(feature = "translate")]
#[test]
fn english_srt_scc_and_imsc_are_read_back_with_every_word_in_time_in_netflix_style() {
    let run = the_run();
    assert_eq!(run.english.words().len(), bulletin::speech().words);
    check_language(
        run,
        &run.english,
        "en",
        &NETFLIX,
        ["en.srt", "en.scc", "en.ttml"],
    );
    let cues = run.english.cues(Style::new(StyleName::Netflix, None, 32));
    assert_eq!(run.cues_counted("en_srt"), cues.len() as u64);
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[cfg(feature = "translate")]
#[test]
fn spanish_from_the_translate_pad_is_read_back_in_every_format_at_17_characters_a_second() {
    let run = the_run();
    // Every unit translated, and nothing else: the words of the Spanish
    // files are the English ones, each unit's after "[es]".
    let spanish: Vec<String> = run.spanish.words().into_iter().map(|w| w.1).collect();
    let english: Vec<String> = run.english.words().into_iter().map(|w| w.1).collect();
    let without_marks: Vec<&String> = spanish.iter().filter(|w| *w != "[es]").collect();
    assert_eq!(without_marks, english.iter().collect::<Vec<_>>());
    assert!(run.spanish.buffers.len() >= bulletin::BULLETIN.len());
    check_language(
        run,
        &run.spanish,
        "es",
        &NETFLIX_OTHER,
        ["es.srt", "es-cc1.scc", "es.ttml"],
    );
    // CC3: the same captions on field 2, which ffmpeg reads.
    let cues = run
        .spanish
        .cues(Style::new(StyleName::Netflix, Some("es"), 32).with_line_limit(32));
    let cc3 = run.file("es-cc3.scc");
    let cc1 = std::fs::read_to_string(run.file("es-cc1.scc")).unwrap();
    assert_ne!(std::fs::read_to_string(&cc3).unwrap(), cc1);
    check_scc("ffmpeg on es-cc3.scc", &readers::ffmpeg_scc(&cc3), &cues);
}

#[cfg(feature = "translate")]
#[test]
fn ebu_tt_d_files_of_both_languages_are_valid_against_the_ebu_schema() {
    let run = the_run();
    for (file, fed, language) in [
        ("en.ebu.xml", &run.english, "en"),
        ("es.ebu.xml", &run.spanish, "es"),
    ] {
        let path = run.file(file);
        readers::xmllint_ebu_tt_d(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let cues = fed.cues(Style::new(StyleName::Netflix, Some(language), 32));
        check_timed_text(
            &format!("ttconv on {file}"),
            &readers::ttconv(&path, Kind::Ttml),
            &cues,
        );
    }
}

/// An encoder with `props` into a filesink at `path`, driven by hand
/// through its sink pad; the pipeline plays and its bus is returned.
struct Driven {
    pipeline: gst::Pipeline,
    encoder: gst::Element,
    sinkpad: gst::Pad,
}

impl Driven {
    fn new(props: &str, path: &Path) -> Driven {
        Driven::before(props, "", path)
    }

    /// The encoder before the caps filter `caps` (none: "").
    fn before(props: &str, caps: &str, path: &Path) -> Driven {
        common::init_plugin();
        let filter = if caps.is_empty() {
            String::new()
        } else {
            format!("! {caps}")
        };
        let pipeline = gst::parse::launch(&format!(
            // async=false: the sink plays without a first buffer, so an EOS
            // after an error does not wait for a preroll that never comes.
            "voxtralrtsubenc name=e {props} {filter} ! filesink location={} buffer-mode=unbuffered async=false",
            path.display()
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        let encoder = pipeline.by_name("e").unwrap();
        let sinkpad = encoder.static_pad("sink").unwrap();
        let _ = pipeline.set_state(gst::State::Playing);
        let driven = Driven {
            pipeline,
            encoder,
            sinkpad,
        };
        driven.start();
        driven
    }

    /// The events a stream starts with.
    fn start(&self) {
        assert!(self
            .sinkpad
            .send_event(gst::event::StreamStart::new("text")));
        let caps = gst::Caps::builder("text/x-raw")
            .field("format", "utf8")
            .build();
        assert!(self.sinkpad.send_event(gst::event::Caps::new(&caps)));
        let segment = gst::FormattedSegment::<gst::ClockTime>::new();
        assert!(self.sinkpad.send_event(gst::event::Segment::new(&segment)));
    }

    /// Text from `start_ms` for `duration_ms` (none: a buffer without it).
    fn text(
        &self,
        bytes: &[u8],
        start_ms: Option<u64>,
        duration_ms: Option<u64>,
    ) -> gst::FlowReturn {
        let mut buffer = gst::Buffer::from_slice(bytes.to_vec());
        let b = buffer.get_mut().unwrap();
        b.set_pts(start_ms.map(gst::ClockTime::from_mseconds));
        b.set_duration(duration_ms.map(gst::ClockTime::from_mseconds));
        self.sinkpad.chain(buffer).into()
    }

    /// Ends the stream; returns the bus's WARNING and ERROR texts.
    fn finish(self) -> (Vec<String>, gst::Structure) {
        assert!(self.sinkpad.send_event(gst::event::Eos::new()));
        let bus = self.pipeline.bus().unwrap();
        let mut said = Vec::new();
        while let Some(msg) = bus.timed_pop(gst::ClockTime::from_mseconds(500)) {
            match msg.view() {
                gst::MessageView::Warning(w) => said.push(format!("WARNING {}", w.error())),
                gst::MessageView::Error(e) => said.push(format!("ERROR {}", e.error())),
                gst::MessageView::Eos(_) => break,
                _ => {}
            }
        }
        let stats = self.encoder.property::<gst::Structure>("stats");
        self.pipeline.set_state(gst::State::Null).unwrap();
        (said, stats)
    }
}

#[test]
fn a_buffer_without_a_timestamp_or_a_duration_is_an_error_that_says_so() {
    let dir = common::scratch_dir("subenc-untimed");
    for (pts, duration) in [(None, Some(500)), (Some(0), None)] {
        let driven = Driven::new("", &dir.join("untimed.srt"));
        assert_eq!(driven.text(b"hello", pts, duration), gst::FlowReturn::Error);
        let (said, _) = driven.finish();
        assert!(
            said.iter().any(|s| s.starts_with("ERROR")
                && s.contains("needs timed text: a buffer came without a timestamp or a duration")),
            "{said:?}"
        );
    }
}

#[test]
fn text_that_is_not_utf8_is_written_with_replacement_characters_warned_once_and_counted() {
    let dir = common::scratch_dir("subenc-utf8");
    let path = dir.join("latin1.srt");
    let driven = Driven::new("subtitle-style=broadcast", &path);
    assert_eq!(
        driven.text(b"caf\xe9 au lait.", Some(0), Some(1000)),
        gst::FlowReturn::Ok
    );
    assert_eq!(
        driven.text(b"\xff ok.", Some(2000), Some(500)),
        gst::FlowReturn::Ok
    );
    let (said, stats) = driven.finish();
    let warnings: Vec<&String> = said.iter().filter(|s| s.contains("not UTF-8")).collect();
    assert_eq!(warnings.len(), 1, "{said:?}");
    assert!(!said.iter().any(|s| s.starts_with("ERROR")), "{said:?}");
    assert_eq!(stats.get::<u64>("invalid-utf8-buffers").unwrap(), 2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("caf\u{fffd} au lait.") && text.contains("\u{fffd} ok."),
        "{text}"
    );
}

#[test]
fn downstream_may_call_back_into_the_encoder_while_it_pushes() {
    // Downstream answers each thing the encoder sends with an event into
    // the encoder, on the same streaming thread (a probe here): an encoder
    // that held its state lock while it pushed would wait on itself.
    let dir = common::scratch_dir("subenc-reentry");
    let path = dir.join("reentry.srt");
    let (done, finished) = std::sync::mpsc::channel();
    let file = path.clone();
    std::thread::spawn(move || {
        let driven = Driven::new("subtitle-style=broadcast", &file);
        let sinkpad = driven.sinkpad.clone();
        let srcpad = driven.encoder.static_pad("src").unwrap();
        srcpad.add_probe(gst::PadProbeType::DATA_DOWNSTREAM, move |_, _| {
            let change = gst::Structure::builder(SPEAKER_CHANGE_EVENT)
                .field("speaker", "Ann")
                .build();
            sinkpad.send_event(gst::event::CustomDownstream::new(change));
            gst::PadProbeReturn::Ok
        });
        let flows = [
            driven.text(b"Good evening.", Some(0), Some(1000)),
            driven.text(b"Here is the news.", Some(3000), Some(1000)),
        ];
        let _ = done.send((flows, driven.finish().0));
    });
    let (flows, said) = finished
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the encoder waited on itself: it pushed with its state lock held");
    assert_eq!(flows, [gst::FlowReturn::Ok; 2]);
    assert!(!said.iter().any(|s| s.starts_with("ERROR")), "{said:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("Good evening.") && text.contains("the news."),
        "{text}"
    );
}

/// Three sentences, as a transcriber's lines: (text, start ms, duration
/// ms).
const NEWS: [(&str, u64, u64); 3] = [
    ("Good evening.", 0, 900),
    ("Here is the news.", 1500, 1400),
    ("Rain is coming tonight.", 4000, 1600),
];

/// Drives NEWS through an encoder with `props` before `caps` into `path`;
/// returns the src caps and what the bus said.
fn news(props: &str, caps: &str, path: &Path) -> (Option<gst::Caps>, Vec<String>) {
    let driven = Driven::before(props, caps, path);
    for (text, start, duration) in NEWS {
        let flow = driven.text(text.as_bytes(), Some(start), Some(duration));
        assert_eq!(flow, gst::FlowReturn::Ok, "{text}");
    }
    let caps = driven.encoder.static_pad("src").unwrap().current_caps();
    let (said, _) = driven.finish();
    (caps, said)
}

#[test]
fn without_a_format_it_writes_what_downstream_caps_ask_webvtt_read_back_by_two_readers() {
    let dir = common::scratch_dir("subenc-vtt-caps");
    let path = dir.join("news.vtt");
    let (caps, said) = news("", "application/x-subtitle-vtt", &path);
    assert!(said.is_empty(), "{said:?}");
    assert_eq!(
        caps.unwrap().structure(0).unwrap().name(),
        "application/x-subtitle-vtt"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("WEBVTT\n"), "{text}");
    let spoken: Vec<String> = NEWS.iter().flat_map(|n| readers::words(n.0)).collect();
    for (what, reading) in [
        ("ttconv", readers::ttconv(&path, Kind::Vtt)),
        ("pycaption", readers::pycaption(&path, Kind::Vtt)),
    ] {
        assert_clean(what, &reading);
        assert_eq!(reading.words(), spoken, "{what} on {text}");
        assert_eq!(reading.captions[0].begin, 0.0, "{what}: {reading:?}");
    }
    // Into a sink that takes anything: SRT, as before the caps were read.
    let srt = dir.join("news.srt");
    let (caps, said) = news("", "", &srt);
    assert!(said.is_empty(), "{said:?}");
    assert_eq!(
        caps.unwrap().structure(0).unwrap().name(),
        "application/x-subtitle"
    );
    let reading = readers::ttconv(&srt, Kind::Srt);
    assert_clean("ttconv on the SRT", &reading);
    assert_eq!(reading.words(), spoken);
}

#[test]
fn ttml_caps_choose_the_profile_they_name_else_imsc() {
    let dir = common::scratch_dir("subenc-ttml-caps");
    for (caps, profile) in [
        ("application/ttml+xml", "imsc1.1-text"),
        ("application/ttml+xml,profile=ebu-tt-d", "ebu-tt-d"),
    ] {
        let path = dir.join(format!("{profile}.ttml"));
        let (out, said) = news("", caps, &path);
        assert!(said.is_empty(), "{said:?}");
        let out = out.unwrap();
        let s = out.structure(0).unwrap();
        assert_eq!(s.get::<&str>("profile").unwrap(), profile, "{caps}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("<tt "), "{text}");
    }
}

/// The first ERROR of `line`'s run: the name of the element that posted
/// it, and its error.
fn first_error(line: &str) -> (String, gst::glib::Error) {
    common::init_plugin();
    let pipeline = gst::parse::launch(line).unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let bus = pipeline.bus().unwrap();
    let msg = bus
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(60),
            &[gst::MessageType::Error, gst::MessageType::Eos],
        )
        .expect("an ERROR or EOS within 60 s");
    pipeline.set_state(gst::State::Null).unwrap();
    let gst::MessageView::Error(e) = msg.view() else {
        panic!("{line}: no ERROR, {msg:?}");
    };
    (msg.src().unwrap().name().to_string(), e.error())
}

#[test]
fn a_format_downstream_does_not_take_is_a_not_negotiated_error_of_the_encoder_not_the_transcriber()
{
    let model = common::tiny_model();
    for (format, caps) in [
        ("scc", "application/x-subtitle-vtt"),
        ("srt", "application/ttml+xml"),
    ] {
        let line = format!(
            "audiotestsrc num-buffers=50 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
             voxtralrttranscriber model-path={} threads=1 ! voxtralrtsubenc name=enc format={format} ! \
             {caps} ! fakesink",
            model.display()
        );
        let (source, error) = first_error(&line);
        assert_eq!(source, "enc", "{caps}: {error}");
        assert!(
            error.matches(gst::CoreError::Negotiation),
            "{caps}: {error:?}"
        );
        let message = error.message();
        assert!(
            message.contains(&format!("format={format} is not what downstream takes"))
                && message.contains(caps),
            "names the format and what downstream takes: {message}"
        );
    }
    // Caps that none of its formats match fail the line where it is built.
    common::init_plugin();
    let error = gst::parse::launch("voxtralrtsubenc name=enc ! text/x-raw ! fakesink").unwrap_err();
    assert!(
        error.message().contains("enc can't handle caps text/x-raw"),
        "{error}"
    );
}

#[test]
fn a_flush_starts_the_file_over_with_its_header() {
    let dir = common::scratch_dir("subenc-flush");
    let path = dir.join("flushed.ttml");
    let driven = Driven::new("format=ttml", &path);
    assert_eq!(
        driven.text(b"Good evening.", Some(0), Some(900)),
        gst::FlowReturn::Ok
    );
    assert_eq!(
        driven.text(b"Welcome.", Some(3000), Some(500)),
        gst::FlowReturn::Ok
    );
    let before = std::fs::read_to_string(&path).unwrap();
    assert!(before.contains("Good evening."), "{before}");
    assert!(driven.sinkpad.send_event(gst::event::FlushStart::new()));
    assert!(driven.sinkpad.send_event(gst::event::FlushStop::new(true)));
    let segment = gst::FormattedSegment::<gst::ClockTime>::new();
    assert!(driven
        .sinkpad
        .send_event(gst::event::Segment::new(&segment)));
    assert_eq!(
        driven.text(b"Tonight, the weather.", Some(10_000), Some(1200)),
        gst::FlowReturn::Ok
    );
    let (said, _) = driven.finish();
    assert!(said.is_empty(), "{said:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("<?xml"), "{text}");
    assert!(
        !text.contains("Good evening") && !text.contains("Welcome"),
        "{text}"
    );
    let reading = readers::ttconv(&path, Kind::Ttml);
    assert_clean("ttconv on the flushed file", &reading);
    assert_eq!(reading.words(), ["Tonight", "the", "weather"]);
    assert!(text.contains("xml:id=\"c1\""), "numbered afresh: {text}");
}

/// What a live pipeline into encoders and filesinks leaves when it is
/// killed with SIGKILL once `unbuffered.srt` holds 5 cues: (file, text),
/// for each format with `buffer-mode=unbuffered` and for SRT and TTML
/// with filesink's default buffering.
fn killed_files() -> Vec<(String, String)> {
    let dir = common::scratch_dir("subenc-killed");
    let files = [
        ("srt", "unbuffered.srt", true),
        ("scc", "unbuffered.scc", true),
        ("ttml", "unbuffered.ttml", true),
        ("ebu-tt-d", "unbuffered.ebu.xml", true),
        ("srt", "default.srt", false),
        ("ttml", "default.ttml", false),
    ];
    let mut args: Vec<String> = [
        "audiotestsrc",
        "is-live=true",
        "samplesperbuffer=1600",
        "!",
        "audio/x-raw,rate=16000,channels=1",
        "!",
        "voxtralrttranscriber",
        &format!("model-path={}", common::tiny_model().display()),
        "threads=1",
        "!",
        "tee",
        "name=t",
    ]
    .map(str::to_owned)
    .to_vec();
    for (format, file, unbuffered) in files {
        args.extend(["t.", "!", "queue", "!", "voxtralrtsubenc"].map(str::to_owned));
        args.push(format!("format={format}"));
        args.extend(["!", "filesink"].map(str::to_owned));
        args.push(format!("location={}", dir.join(file).display()));
        if unbuffered {
            args.push("buffer-mode=unbuffered".to_owned());
        }
    }
    let mut child = common::process::Guarded::spawn(
        std::process::Command::new("gst-launch-1.0")
            .args(&args)
            .env("GST_PLUGIN_PATH", common::plugin_dir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
        "gst-launch-1.0 (a live pipeline into voxtralrtsubenc)",
    );
    let cues = || {
        std::fs::read_to_string(dir.join("unbuffered.srt"))
            .map_or(0, |t| t.matches(" --> ").count())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while cues() < 5 {
        assert!(std::time::Instant::now() < deadline, "no cues written");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    child.kill_now(); // SIGKILL
    files
        .iter()
        .map(|(_, file, _)| {
            let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            (file.to_string(), text)
        })
        .collect()
}

/// `text` kept as `name` for a reader.
fn keep(name: &str, text: &str) -> PathBuf {
    let path = common::scratch_dir(&format!("subenc-kept-{name}")).join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_killed_pipeline_leaves_files_the_readers_accept() {
    let files = killed_files();
    let text = |name: &str| &files.iter().find(|(f, _)| f == name).unwrap().1;
    for (name, _) in &files {
        eprintln!("killed: {name}: {} bytes", text(name).len());
    }
    let mut readings = Vec::new();
    let srt = keep("unbuffered.srt", text("unbuffered.srt"));
    readings.push(("ttconv", readers::ttconv(&srt, Kind::Srt), 5));
    let scc = keep("unbuffered.scc", text("unbuffered.scc"));
    readings.push(("ttconv", readers::ttconv(&scc, Kind::Scc), 5));
    readings.push(("ffmpeg", readers::ffmpeg_scc(&scc), 5));
    let ttml = keep("unbuffered.ttml", text("unbuffered.ttml"));
    readings.push(("ttconv", readers::ttconv(&ttml, Kind::Ttml), 5));
    readings.push(("imschrm", readers::imschrm(&ttml), 5));
    // filesink's own buffer goes out at each seek: the file is whole, the
    // last cue missing.
    let default_ttml = keep("default.ttml", text("default.ttml"));
    readings.push(("ttconv", readers::ttconv(&default_ttml, Kind::Ttml), 4));
    for (reader, reading, least) in readings {
        assert_clean(reader, &reading);
        assert!(reading.captions.len() >= least, "{reader}: {reading:?}");
        eprintln!("killed, {reader}: {} captions", reading.captions.len());
    }
    let ebu = keep("unbuffered.ebu.xml", text("unbuffered.ebu.xml"));
    readers::xmllint_ebu_tt_d(&ebu).expect("EBU-TT-D valid against its schema");
    // SRT has no tail, so no seek: with filesink's default buffering the
    // cues stay in its 64 KiB buffer, and a kill loses them all.
    let default_srt = text("default.srt");
    assert!(
        default_srt.len() < text("unbuffered.srt").len(),
        "{default_srt:?}"
    );
}

/// docs/files-and-muxing.md's line, run as written against the chat
/// double: English and Spanish SRT, SCC (CC1 and CC3) and IMSC from one
/// run, each read back with the same words, the Spanish after "[es]"
/// (which the readers' words give as "es").
#[cfg(feature = "translate")]
#[test]
fn the_guides_line_writes_both_languages_in_srt_scc_and_imsc() {
    let double = common::chat_double::ChatDouble::start(Default::default());
    let line = common::doc_launch_line("voxtralrtsubenc format=scc caption-channel=cc3")
        .line
        .replace("http://127.0.0.1:8080/v1", &double.base())
        .replace("$TRANSLATE_MODEL", common::chat_double::SERVED_MODEL);
    let dir = common::readme_dir("subenc-guide");
    common::run_readme_line(&line, &dir);
    let file = |name: &str| dir.join(name);
    let english = readers::ttconv(&file("talk-en.srt"), Kind::Srt);
    assert_clean("ttconv on talk-en.srt", &english);
    let spoken = english.words();
    assert!(!spoken.is_empty(), "{english:?}");
    let without_marks =
        |words: Vec<String>| -> Vec<String> { words.into_iter().filter(|w| w != "es").collect() };
    let readings = [
        (
            "ttconv on talk-en.scc",
            readers::ttconv(&file("talk-en.scc"), Kind::Scc),
        ),
        (
            "imschrm on talk-en.ttml",
            readers::imschrm(&file("talk-en.ttml")),
        ),
        (
            "ttconv on talk-es.srt",
            readers::ttconv(&file("talk-es.srt"), Kind::Srt),
        ),
        (
            "ffmpeg on talk-es.scc (CC3)",
            readers::ffmpeg_scc(&file("talk-es.scc")),
        ),
        (
            "imschrm on talk-es.ttml",
            readers::imschrm(&file("talk-es.ttml")),
        ),
    ];
    for (what, reading) in readings {
        assert_clean(what, &reading);
        let words = reading.words();
        if what.contains("-es.") {
            assert!(words.contains(&"es".to_string()), "{what}: {words:?}");
        }
        assert_eq!(without_marks(words), spoken, "{what}");
    }
    let spanish = std::fs::read_to_string(file("talk-es.ttml")).unwrap();
    assert!(spanish.contains("xml:lang=\"es\""), "{spanish}");
}
