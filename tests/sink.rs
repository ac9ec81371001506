// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! voxtralrtsink: messages, the signal, transcript files, EOS and errors.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;

const SAMPLE: &str =
    "filesrc location=examples/data/sample.wav ! wavparse ! audioconvert ! audioresample";

fn pipeline(tail: &str) -> gst::Pipeline {
    common::init_plugin();
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).unwrap();
    let line = format!(
        "{SAMPLE} ! {}",
        tail.replace("MODEL", &common::tiny_model().display().to_string())
    );
    gst::parse::launch(&line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .downcast::<gst::Pipeline>()
        .unwrap()
}

/// Runs to EOS, returning every message seen before it (panics on ERROR).
fn run(pipeline: &gst::Pipeline) -> Vec<gst::Message> {
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let mut messages = Vec::new();
    loop {
        let msg = bus
            .timed_pop(gst::ClockTime::from_seconds(60))
            .expect("the pipeline stalled");
        match msg.view() {
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => panic!("{} ({:?})", e.error(), e.debug()),
            _ => messages.push(msg),
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    messages
}

fn transcripts(messages: &[gst::Message]) -> Vec<gst::Structure> {
    messages
        .iter()
        .filter_map(|m| m.structure())
        .filter(|s| s.name() == gstvoxtralrt::sink::MESSAGE_NAME)
        .map(|s| s.to_owned())
        .collect()
}

/// The words voxtralrttranscriber gives for the sample, as (text, pts).
fn transcriber_words() -> Vec<(String, u64)> {
    let pipeline = pipeline(
        "voxtralrttranscriber model-path=MODEL threads=1 ! fakesink name=out signal-handoffs=true",
    );
    let words = common::handoffs(&pipeline, "out");
    run(&pipeline);
    let words = words.lock().unwrap();
    words
        .iter()
        .map(|b| (common::text_of(b), b.pts().unwrap().nseconds()))
        .collect()
}

#[test]
fn each_word_is_posted_with_its_times_before_eos() {
    let messages = run(&pipeline("voxtralrtsink model-path=MODEL threads=1"));
    let words = transcripts(&messages);
    let mut last = 0;
    for w in &words {
        let start = w.get::<u64>("running-time").unwrap();
        let end = w.get::<u64>("running-time-end").unwrap();
        assert!(start >= last && end >= start, "{w}");
        assert_eq!(w.get::<u64>("stream-time").unwrap(), start);
        assert_eq!(w.get::<u64>("pts").unwrap(), start);
        assert_eq!(w.get::<u64>("duration").unwrap(), end - start);
        assert!(w.get::<bool>("is-final").unwrap());
        last = start;
    }
    // The sink loses nothing: the same words, at the same times, as the
    // transcriber element.
    let posted = text_and_pts(&messages);
    assert_eq!(posted, transcriber_words());
    assert!(posted.len() > 40);
}

fn text_and_pts(messages: &[gst::Message]) -> Vec<(String, u64)> {
    transcripts(messages)
        .iter()
        .map(|w| {
            (
                w.get::<String>("text").unwrap(),
                w.get::<u64>("pts").unwrap(),
            )
        })
        .collect()
}

/// Captions on the pad and the text on the bus, from one model: what the
/// WebRTC example sends in the video and on its data channel.
#[test]
fn the_transcriber_posts_the_same_messages_beside_caption_output_when_asked() {
    let captions = "closedcaption/x-cea-708,format=cc_data,framerate=30/1 ! fakesink";
    let quiet = run(&pipeline(&format!(
        "voxtralrttranscriber model-path=MODEL threads=1 ! {captions}"
    )));
    assert!(
        transcripts(&quiet).is_empty(),
        "the transcriber posted without post-messages"
    );
    let posted = run(&pipeline(&format!(
        "voxtralrttranscriber model-path=MODEL threads=1 post-messages=true ! {captions}"
    )));
    let posted = text_and_pts(&posted);
    assert_eq!(posted, transcriber_words());
    assert!(posted.len() > 40);
}

#[test]
fn the_transcript_signal_carries_every_word() {
    let pipeline =
        pipeline("voxtralrtsink name=sink model-path=MODEL threads=1 post-messages=false");
    let got = Arc::new(Mutex::new(Vec::new()));
    let seen = got.clone();
    pipeline
        .by_name("sink")
        .unwrap()
        .connect("transcript", false, move |args| {
            let text = args[1].get::<String>().unwrap();
            let start = args[2].get::<u64>().unwrap();
            let duration = args[3].get::<u64>().unwrap();
            seen.lock().unwrap().push((text, start, duration));
            None
        });
    let messages = run(&pipeline);
    assert!(
        transcripts(&messages).is_empty(),
        "post-messages=false still posted"
    );
    let got = got.lock().unwrap();
    let expected = transcriber_words();
    assert_eq!(got.len(), expected.len());
    for ((text, start, duration), (want, pts)) in got.iter().zip(&expected) {
        assert_eq!((text, start), (want, pts));
        assert!(*duration > 0);
    }
}

fn transcript_file(format: &str, extra: &str) -> String {
    let dir = common::scratch_dir(&format!("sink-{format}-{}", extra.replace([' ', '='], "-")));
    let path = dir.join(format!("out.{format}"));
    run(&pipeline(&format!(
        "voxtralrtsink model-path=MODEL threads=1 location={} {extra}",
        path.display()
    )));
    std::fs::read_to_string(&path).unwrap()
}

/// `HH:MM:SS,mmm` of `ns`.
fn srt_time(ns: u64) -> String {
    let ms = ns / 1_000_000;
    format!(
        "{:02}:{:02}:{:02},{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// The blocks of an SRT file: (start, end, text lines).
fn srt_blocks(srt: &str) -> Vec<(String, String, Vec<String>)> {
    srt.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .enumerate()
        .map(|(i, block)| {
            let lines: Vec<&str> = block.lines().collect();
            assert_eq!(lines[0], (i + 1).to_string(), "{block}");
            let (start, end) = lines[1].split_once(" --> ").unwrap();
            let text = lines[2..].iter().map(|l| l.to_string()).collect();
            (start.to_owned(), end.to_owned(), text)
        })
        .collect()
}

#[test]
fn an_srt_file_holds_every_word_once_in_order_in_cues_a_person_can_read() {
    let srt = transcript_file("srt", "");
    let expected = transcriber_words();
    let blocks = srt_blocks(&srt);
    // The default style (netflix): up to 2 lines of 42 characters, each
    // cue starting with its first word, in time order.
    let mut next_word = 0;
    let mut last_end = String::new();
    for (start, end, lines) in &blocks {
        assert!(!lines.is_empty() && lines.len() <= 2, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 42), "{lines:?}");
        assert_eq!(*start, srt_time(expected[next_word].1), "{lines:?}");
        assert!(*start > last_end && end > start, "{start} --> {end}");
        next_word += lines.iter().map(|l| l.split(' ').count()).sum::<usize>();
        last_end = end.clone();
    }
    let shown: Vec<String> = blocks
        .iter()
        .flat_map(|b| b.2.iter().flat_map(|l| l.split(' ').map(str::to_owned)))
        .collect();
    let said: Vec<String> = expected.into_iter().map(|w| w.0).collect();
    assert_eq!(shown, said);
    assert!(blocks.len() < said.len() / 5, "{} cues", blocks.len());
}

#[test]
fn subtitle_style_broadcast_gives_a_cue_per_row_of_max_line_chars() {
    let srt = transcript_file("srt", "subtitle-style=broadcast max-line-chars=20");
    let blocks = srt_blocks(&srt);
    assert!(blocks.len() > 5);
    for (_, _, lines) in &blocks {
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].chars().count() <= 20, "{lines:?}");
    }
}

#[test]
fn a_vtt_file_starts_with_its_header_and_lines_output_gives_lines() {
    let vtt = transcript_file("vtt", "output=lines subtitle-style=broadcast");
    assert!(vtt.starts_with("WEBVTT\n\n"));
    let cues: Vec<&str> = vtt["WEBVTT\n\n".len()..]
        .split("\n\n")
        .filter(|b| !b.is_empty())
        .collect();
    assert!(!cues.is_empty());
    for cue in cues {
        let lines: Vec<&str> = cue.lines().collect();
        assert!(
            lines[0].contains(" --> ") && lines[0].contains('.'),
            "{cue}"
        );
        assert_eq!(lines.len(), 2, "{cue}");
        assert!(lines[1].chars().count() <= 32);
    }
}

#[test]
fn a_jsonl_file_has_one_object_per_word() {
    let jsonl = transcript_file("jsonl", "");
    let expected = transcriber_words();
    let lines: Vec<&str> = jsonl.lines().collect();
    assert_eq!(lines.len(), expected.len());
    for (line, (word, _)) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(&format!("{{\"text\":\"{word}\",\"start\":")),
            "{line}"
        );
        assert!(line.ends_with("\"is_final\":true}"));
    }
}

#[test]
fn a_txt_file_is_the_plain_transcript() {
    let txt = transcript_file("txt", "format=txt");
    let expected: Vec<String> = transcriber_words().into_iter().map(|w| w.0).collect();
    assert_eq!(txt.split_whitespace().collect::<Vec<_>>(), expected);
}

#[test]
fn an_unwritable_location_is_refused_at_start() {
    common::init_plugin();
    let pipeline =
        pipeline("voxtralrtsink model-path=MODEL threads=1 location=/nonexistent-dir/out.srt");
    assert!(pipeline.set_state(gst::State::Paused).is_err());
    let msg = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(gst::ClockTime::from_seconds(5), &[gst::MessageType::Error])
        .expect("an ERROR message");
    let gst::MessageView::Error(e) = msg.view() else {
        unreachable!()
    };
    assert!(
        e.error().to_string().contains("/nonexistent-dir/out.srt"),
        "{}",
        e.error()
    );
    pipeline.set_state(gst::State::Null).unwrap();
}

/// Parses SRT or WebVTT text, returning the number of whole, well-formed
/// cues (a cue of one or two lines).
fn whole_cues(text: &str, vtt: bool) -> usize {
    let body = if vtt {
        text.strip_prefix("WEBVTT\n\n").expect("the WebVTT header")
    } else {
        text
    };
    let mut n = 0;
    for block in body.split_inclusive("\n\n") {
        let lines: Vec<&str> = block.trim_end().lines().collect();
        if !block.ends_with("\n\n") {
            panic!("a cut cue at the end: {block:?}");
        }
        let times = if vtt {
            0
        } else {
            assert_eq!(lines[0].parse::<usize>().unwrap(), n + 1);
            1
        };
        assert!(lines[times].contains(" --> "), "{block:?}");
        assert!((1..=2).contains(&(lines.len() - times - 1)), "{block:?}");
        n += 1;
    }
    n
}

/// A live pipeline into voxtralrtsink writing `file`, killed without
/// warning (SIGKILL) once 5 cues are in (5 times `marker`); the file as it
/// was left.
fn killed_while_writing(file: &str) -> String {
    let marker = match file.rsplit('.').next() {
        Some("scc") => "942f 942f",
        Some("ttml") => "<p ",
        _ => " --> ",
    };
    let dir = common::scratch_dir(&format!("killed-{file}"));
    let path = dir.join(file);
    let mut child = common::process::Guarded::spawn(
        std::process::Command::new("gst-launch-1.0")
            .args([
                "audiotestsrc",
                "is-live=true",
                "samplesperbuffer=1600",
                "!",
                "audio/x-raw,rate=16000,channels=1",
                "!",
                "voxtralrtsink",
                &format!("model-path={}", common::tiny_model().display()),
                "threads=1",
                &format!("location={}", path.display()),
            ])
            .env("GST_PLUGIN_PATH", common::plugin_dir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
        "gst-launch-1.0 (a live pipeline into voxtralrtsink)",
    );
    // Wait for some cues, then kill the process without warning.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::read_to_string(&path).map_or(0, |t| t.matches(marker).count()) < 5 {
        assert!(std::time::Instant::now() < deadline, "no cues written");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill_now(); // SIGKILL
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn a_killed_pipeline_leaves_a_valid_srt_file() {
    let text = killed_while_writing("live.srt");
    assert!(whole_cues(&text, false) >= 5);
}

#[test]
fn a_killed_pipeline_leaves_a_valid_vtt_file() {
    let text = killed_while_writing("live.vtt");
    assert!(whole_cues(&text, true) >= 5);
}

/// The killed file at `name` in a scratch directory, for a reader.
fn keep(name: &str, text: &str) -> std::path::PathBuf {
    let path = common::scratch_dir(&format!("killed-read-{name}")).join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_killed_pipeline_leaves_a_valid_scc_file() {
    use common::readers::{self, Kind};
    let text = killed_while_writing("live.scc");
    assert!(text.starts_with("Scenarist_SCC V1.0\n\n"), "{text}");
    let path = keep("live.scc", &text);
    for (reader, reading) in [
        ("ttconv", readers::ttconv(&path, Kind::Scc)),
        ("ffmpeg", readers::ffmpeg_scc(&path)),
    ] {
        common::subtitle_checks::assert_clean(reader, &reading);
        assert!(reading.captions.len() >= 5, "{reader}: {reading:?}");
    }
}

#[test]
fn a_killed_pipeline_leaves_valid_imsc_and_ebu_tt_d_files() {
    use common::readers::{self, Kind};
    let imsc = keep("live.ttml", &killed_while_writing("live.ttml"));
    for (reader, reading) in [
        ("ttconv", readers::ttconv(&imsc, Kind::Ttml)),
        ("imschrm", readers::imschrm(&imsc)),
    ] {
        common::subtitle_checks::assert_clean(reader, &reading);
        assert!(reading.captions.len() >= 5, "{reader}: {reading:?}");
    }
    let ebu = keep("live.ebu.ttml", &killed_while_writing("live.ebu.ttml"));
    readers::xmllint_ebu_tt_d(&ebu).expect("EBU-TT-D valid against its schema");
}
