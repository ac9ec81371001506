// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Who is speaking (issue 33, parts 2 and 4): `voxtralrt/speaker` events from
//! the application mark a change where they sit in the audio, and every
//! output says who spoke: the words' `rstranscribe/speaker-change` events,
//! lines that never hold two speakers, `>>` rows in CEA-608/708, the sink's
//! files and messages.

// The local engine runs the fixture models (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::{Arc, Mutex};

use common::cc608::cc1_chars;
use common::cc708::services_708;
use common::{tone_audio, tone_frames, tone_model, truth};
use gst::prelude::*;

const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
const MS: u64 = 1_000_000;

/// Where the application says who speaks: Alice from the start, Bob from
/// 2.0 s, Carol from 3.5 s (in the middle of the last tone burst).
const TURNS: [(u64, &str); 3] = [(0, "Alice"), (2_000, "Bob"), (3_500, "Carol")];

fn speaker_event(name: &str) -> gst::Event {
    gst::event::CustomDownstream::new(
        gst::Structure::builder("voxtralrt/speaker")
            .field("speaker", name)
            .build(),
    )
}

/// The speakers of the `rstranscribe/speaker-change` events the harness
/// got, in order.
fn speaker_changes(h: &mut gst_check::Harness) -> Vec<String> {
    let mut changes = Vec::new();
    while let Some(e) = h.try_pull_event() {
        if let Some(s) = e
            .structure()
            .filter(|s| s.name() == "rstranscribe/speaker-change")
        {
            changes.push(s.get::<String>("speaker").unwrap());
        }
    }
    changes
}

/// The speaker `TURNS` gives a word starting at `t` (ns).
fn expected_speaker(t: u64) -> &'static str {
    TURNS
        .iter()
        .rev()
        .find(|&&(from, _)| from * MS <= t)
        .map(|&(_, name)| name)
        .unwrap()
}

/// What came out of the transcriber, in order.
#[derive(Debug, Clone, PartialEq)]
enum Out {
    Word(u64, String),
    SpeakerChange(String),
}

/// The tone audio (66 frames) in 100 ms buffers, `TURNS` announced before
/// the buffers they start at.
fn push_tone_with_turns(h: &mut gst_check::Harness) {
    let audio = tone_audio(66, &tone_frames());
    for (k, piece) in audio.chunks(1600).enumerate() {
        let pts = 100 * k as u64;
        for &(_, name) in TURNS.iter().filter(|&&(at, _)| at == pts) {
            assert!(h.push_event(speaker_event(name)));
        }
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        b.get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(pts));
        h.push(b).unwrap();
    }
    h.push_event(gst::event::Eos::new());
}

/// The transcriber with `props` on the tone audio with `TURNS`: its words
/// and speaker-change events, in the order they left it.
fn transcribe(props: &str) -> Vec<Out> {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 {props}",
        tone_model()
    ));
    h.set_src_caps_str(F32_CAPS);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    h.sinkpad().unwrap().add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) if b.size() > 0 => {
                    let text = common::text_of(b);
                    let pts = b.pts().unwrap().nseconds();
                    record.lock().unwrap().push(Out::Word(pts, text));
                }
                Some(gst::PadProbeData::Event(e)) => {
                    if let Some(s) = e
                        .structure()
                        .filter(|s| s.name() == "rstranscribe/speaker-change")
                    {
                        let speaker = s.get::<String>("speaker").unwrap();
                        record.lock().unwrap().push(Out::SpeakerChange(speaker));
                    }
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
    push_tone_with_turns(&mut h);
    while let Ok(Some(_)) = h.pull_until_eos() {}
    let out = seen.lock().unwrap().clone();
    out
}

/// The speaker of each word: the last speaker change before it.
fn words_with_speakers(out: &[Out]) -> Vec<(u64, String, Option<String>)> {
    let mut speaker = None;
    let mut words = Vec::new();
    for o in out {
        match o {
            Out::SpeakerChange(s) => speaker = Some(s.clone()),
            Out::Word(t, text) => words.push((*t, text.clone(), speaker.clone())),
        }
    }
    words
}

#[test]
fn every_word_carries_the_speaker_in_force_where_it_starts() {
    let out = transcribe("");
    let words = words_with_speakers(&out);
    let times: Vec<u64> = words.iter().map(|w| w.0).collect();
    let truth: Vec<u64> = tone_frames().into_iter().map(truth).collect();
    assert_eq!(
        times, truth,
        "the words and their times as without speakers"
    );
    for (t, _, speaker) in &words {
        assert_eq!(
            speaker.as_deref(),
            Some(expected_speaker(*t)),
            "the word at {t} ns: {out:?}"
        );
    }
    // One event per change, before the first word of each new speaker
    // (the model writes Bob's first word 480 ms after he started).
    let changes: Vec<&Out> = out
        .iter()
        .filter(|o| matches!(o, Out::SpeakerChange(_)))
        .collect();
    assert_eq!(
        changes,
        ["Alice", "Bob", "Carol"]
            .map(|s| Out::SpeakerChange(s.into()))
            .iter()
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_line_never_holds_two_speakers() {
    let out = transcribe("output=lines");
    let lines = words_with_speakers(&out);
    // A line per speaker here: Bob's two bursts are 480 ms apart, less
    // than a pause that ends a line.
    let words: Vec<usize> = lines
        .iter()
        .map(|l| l.1.split_whitespace().count())
        .collect();
    assert_eq!(words, [3, 9, 6], "{out:?}");
    // The last burst (3.2-3.92 s) is cut where Carol starts.
    let carol = lines
        .iter()
        .position(|l| l.2.as_deref() == Some("Carol"))
        .expect("a line of Carol's");
    assert_eq!(lines[carol].0, truth(50), "{lines:?}");
    assert_eq!(lines[carol - 1].2.as_deref(), Some("Bob"));
    for (t, text, speaker) in &lines {
        assert_eq!(
            speaker.as_deref(),
            Some(expected_speaker(*t)),
            "the line {text:?} at {t} ns"
        );
    }
}

/// The transcriber's caption output (`caps`) on the tone audio with
/// `TURNS`.
fn captions(caps: &str) -> Vec<gst::Buffer> {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 ! capsfilter caps={caps}",
        tone_model()
    ));
    h.set_src_caps_str(F32_CAPS);
    push_tone_with_turns(&mut h);
    let mut out = Vec::new();
    while let Ok(Some(b)) = h.pull_until_eos() {
        out.push(b);
    }
    out
}

#[test]
fn each_change_starts_a_cc1_row_and_a_708_row_with_the_prefix() {
    let buffers = captions("closedcaption/x-cea-608,format=raw,framerate=30000/1001");
    let pairs: Vec<(u64, [u8; 2])> = buffers
        .iter()
        .map(|b| {
            let m = b.map_readable().unwrap();
            (b.pts().unwrap().nseconds(), [m[0], m[1]])
        })
        .collect();
    let text: String = cc1_chars(&pairs).into_iter().map(|(_, c)| c).collect();
    assert_eq!(text.matches(">>").count(), 3, "CC1: {text:?}");
    // Alice's 3 words, Bob's 9, Carol's 6: each run starts with the prefix.
    let runs: Vec<usize> = text
        .split(">>")
        .skip(1)
        .map(|run| run.split_whitespace().filter(|w| *w == "x").count())
        .collect();
    assert_eq!(runs, [3, 9, 6], "CC1: {text:?}");

    let buffers = captions("closedcaption/x-cea-708,format=cc_data,framerate=30000/1001");
    let services = services_708(&buffers);
    let service_1 = &services[&1];
    assert_eq!(service_1.matches(">>").count(), 3, "708: {service_1:?}");
}

#[test]
fn a_name_outputs_cannot_carry_is_warned_about_and_the_pad_name_used() {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1",
        tone_model()
    ));
    h.set_src_caps_str(F32_CAPS);
    let bus = gst::Bus::new();
    h.element().unwrap().set_bus(Some(&bus));
    let long = "A".repeat(40);
    assert!(h.push_event(speaker_event(&long)));
    let audio = tone_audio(30, &[16, 17]);
    let mut b = gst::Buffer::from_mut_slice(common::to_f32le(&audio));
    b.get_mut().unwrap().set_pts(gst::ClockTime::ZERO);
    h.push(b).unwrap();
    h.push_event(gst::event::Eos::new());
    while let Ok(Some(_)) = h.pull_until_eos() {}
    assert_eq!(speaker_changes(&mut h), ["sink"]);
    let warning = bus
        .iter()
        .find_map(|m| match m.view() {
            gst::MessageView::Warning(w) => Some(w.error().to_string()),
            _ => None,
        })
        .expect("a WARNING");
    assert!(
        warning.contains("40 characters") && warning.contains("sink"),
        "{warning}"
    );
}

/// The sink's `format` file of the panel's two espeak-ng voices on one
/// mixed input, with a `voxtralrt/speaker` event at each turn; and the
/// turns' starts.
fn sink_file_of_two_voices(format: &str) -> (String, Vec<(u64, &'static str)>) {
    common::init_plugin();
    let dir = common::scratch_dir(&format!("speakers-{format}"));
    let turns = common::panel_turns(&dir);
    let path = dir.join(format!("panel.{format}"));
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrtsink model-path={} threads=1 location={}",
        tone_model(),
        path.display()
    ));
    h.set_src_caps_str(F32_CAPS);
    let starts = common::panel_starts(&turns);
    for ((name, audio), (at, _)) in turns.iter().zip(&starts) {
        assert!(h.push_event(speaker_event(name)));
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(audio));
        b.get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_nseconds(*at));
        h.push(b).unwrap();
    }
    h.push_event(gst::event::Eos::new());
    (std::fs::read_to_string(&path).unwrap(), starts)
}

#[test]
fn two_voices_taking_turns_are_named_in_every_file_format() {
    let (jsonl, turns) = sink_file_of_two_voices("jsonl");
    let mut speakers = Vec::new();
    for (start, speaker) in common::jsonl_words(&jsonl) {
        let expected = common::panel_speaker_at(&turns, start);
        assert_eq!(speaker, expected, "{jsonl}");
        speakers.push(expected);
    }
    speakers.dedup();
    assert_eq!(speakers, ["Host", "Guest", "Host"], "{jsonl}");

    let (srt, _) = sink_file_of_two_voices("srt");
    let named: Vec<&str> = srt
        .lines()
        .filter_map(|l| l.split_once(": ").map(|(name, _)| name))
        .collect();
    assert_eq!(
        named,
        ["Host", "Guest", "Host"],
        "a name at each change: {srt}"
    );

    let (vtt, _) = sink_file_of_two_voices("vtt");
    let cues: Vec<&str> = vtt
        .split("\n\n")
        .skip(1)
        .filter(|c| !c.is_empty())
        .collect();
    assert!(!cues.is_empty(), "{vtt}");
    for cue in cues {
        let text = cue.lines().nth(1).unwrap_or_default();
        let voice = text
            .strip_prefix("<v ")
            .and_then(|t| t.split_once('>'))
            .map(|(name, _)| name);
        assert!(
            matches!(voice, Some("Host" | "Guest")),
            "a voice span on every cue: {cue:?}"
        );
    }
}

#[test]
fn the_sink_pad_speaker_names_every_word_and_without_it_none_is_named() {
    common::init_plugin();
    let run = |speaker: Option<&str>| {
        let mut h = gst_check::Harness::new_parse(&format!(
            "voxtralrttranscriber name=t model-path={} threads=1",
            tone_model()
        ));
        h.set_src_caps_str(F32_CAPS);
        if let Some(name) = speaker {
            let bin = h.element().unwrap().downcast::<gst::Bin>().unwrap();
            let t = bin.by_name("t").unwrap();
            t.static_pad("sink").unwrap().set_property("speaker", name);
        }
        let audio = tone_audio(30, &[16, 17]);
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(&audio));
        b.get_mut().unwrap().set_pts(gst::ClockTime::ZERO);
        h.push(b).unwrap();
        h.push_event(gst::event::Eos::new());
        let mut words = 0;
        while let Ok(Some(_)) = h.pull_until_eos() {
            words += 1;
        }
        (words, speaker_changes(&mut h))
    };
    assert_eq!(run(Some("Solo")), (2, vec!["Solo".to_owned()]));
    assert_eq!(run(None), (2, Vec::new()), "no speaker source: no event");
}

/// Sets the `speaker` of transcriber `t`'s sink pad from its streaming
/// thread, just before the buffer each turn starts at (ns): in order with
/// the audio.
fn name_speakers_at(pipeline: &gst::Pipeline, turns: Vec<(u64, &'static str)>) {
    let sink = pipeline.by_name("t").unwrap().static_pad("sink").unwrap();
    sink.add_probe(gst::PadProbeType::BUFFER, move |pad, info| {
        if let Some(gst::PadProbeData::Buffer(b)) = &info.data {
            let t = b.pts().unwrap().nseconds();
            if let Some(&(_, name)) = turns.iter().find(|(at, _)| *at == t) {
                pad.set_property("speaker", name);
            }
        }
        gst::PadProbeReturn::Ok
    });
}

#[test]
fn ffmpeg_reads_the_prefix_at_each_change_in_cc1_from_h264_sei() {
    common::init_plugin();
    let dir = common::scratch_dir("speakers-ts");
    let ts = dir.join("panel.ts");
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=audio format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! \
         ccconverter ! closedcaption/x-cea-708,format=cc_data ! queue ! c.caption {}",
        tone_model(),
        common::readback::video_into_ts(210, "30000/1001", &ts)
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let turns = TURNS.iter().map(|&(ms, name)| (ms * MS, name)).collect();
    name_speakers_at(&pipeline, turns);
    let src = pipeline.by_name("audio").unwrap();
    let audio = tone_audio(66, &tone_frames());
    for (k, piece) in audio.chunks(1600).enumerate() {
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::run_to_end(pipeline.upcast_ref(), std::time::Duration::from_secs(120));

    let cues = common::readback::subcc_cues(&ts);
    let rows = common::readback::rolled_rows(&cues);
    assert_eq!(
        rows,
        [">> x x x", ">> x x x x x x x x x", ">> x x x x x x"],
        "a row per speaker, each after '>> ': {cues:?}"
    );
}

/// Reads the cues of `panel.vtt` in `dir` with Chromium's own WebVTT
/// parser (a `<track>`): per cue, its start (s), the title of its voice
/// span and its text.
const VTT_PAGE: &str = r#"<!doctype html><video id="v"></video><script>
const track = document.createElement("track");
track.kind = "captions";
track.src = "panel.vtt";
track.addEventListener("load", () => {
  window.cues = JSON.stringify([...track.track.cues].map((cue) => {
    const html = cue.getCueAsHTML();
    const voice = html.querySelector("span[title]");
    return { start: cue.startTime, voice: voice ? voice.title : null, text: html.textContent };
  }));
});
track.addEventListener("error", () => { window.cues = "error"; });
document.getElementById("v").appendChild(track);
track.track.mode = "hidden";
</script>"#;

#[test]
fn chromium_reads_a_voice_span_on_every_cue_of_the_sinks_webvtt() {
    use common::chromium::{Chromium, DevTools};
    let (vtt, turns) = sink_file_of_two_voices("vtt");
    let dir = common::scratch_dir("speakers-vtt-chromium");
    std::fs::write(dir.join("panel.vtt"), &vtt).unwrap();
    std::fs::write(dir.join("page.html"), VTT_PAGE).unwrap();
    let http = common::http::Http::serve(&dir);
    let mut chromium = Chromium::start(&dir.join("profile"));
    let mut page = DevTools::open(&chromium.devtools_url(), &http.url("page.html"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let cues = loop {
        if let Some(text) = page.evaluate("window.cues").as_str() {
            break text.to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the track never loaded"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_ne!(cues, "error", "Chromium could not load the WebVTT file");
    let cues: Vec<serde_json::Value> = serde_json::from_str(&cues).unwrap();
    let written = vtt.split("\n\n").skip(1).filter(|c| !c.is_empty()).count();
    assert!(written > 0, "{vtt}");
    assert_eq!(cues.len(), written, "every cue parsed: {cues:?}");
    for cue in &cues {
        let start = (cue["start"].as_f64().unwrap() * 1e9).round() as u64;
        let expected = common::panel_speaker_at(&turns, start);
        assert_eq!(cue["voice"], expected, "{cue}");
        assert!(!cue["text"].as_str().unwrap().trim().is_empty(), "{cue}");
    }
}

#[test]
fn two_voices_on_one_mixed_pad_start_a_prefixed_row_at_each_turn_in_cc1_and_708() {
    common::init_plugin();
    let dir = common::scratch_dir("speakers-panel-cc");
    let turns = common::panel_turns(&dir);
    let starts = common::panel_starts(&turns);
    let samples: usize = turns.iter().map(|t| t.1.len()).sum();
    let frames = samples as u64 * 30 / 16_000 + 30;
    let ts = dir.join("panel.ts");
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=audio format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! \
         ccconverter ! closedcaption/x-cea-708,format=cc_data ! tee name=cc ! queue ! \
         fakesink name=cdata signal-handoffs=true sync=false cc. ! queue ! c.caption {}",
        tone_model(),
        common::readback::video_into_ts(frames, "30000/1001", &ts)
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    // Each turn is one buffer.
    name_speakers_at(&pipeline, starts.clone());
    let buffers = common::handoffs(&pipeline, "cdata");
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("audio").unwrap();
    for ((_, audio), (at, _)) in turns.iter().zip(&starts) {
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(audio));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_nseconds(*at));
        bm.set_duration(gst::ClockTime::from_nseconds(
            audio.len() as u64 * 1_000_000_000 / 16_000,
        ));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::run_to_end(pipeline.upcast_ref(), std::time::Duration::from_secs(120));
    pipeline.set_state(gst::State::Null).unwrap();

    let cues = common::readback::subcc_cues(&ts);
    let rows = common::readback::new_rows(&cues);
    let prefixed = rows.iter().filter(|r| r.starts_with(">>")).count();
    assert_eq!(
        prefixed, 3,
        "a '>>' row per turn in CC1: {rows:?} from {cues:?}"
    );
    let services = services_708(&buffers.lock().unwrap());
    assert_eq!(
        services[&1].matches(">> ").count(),
        3,
        "708: {:?}",
        services[&1]
    );
}
