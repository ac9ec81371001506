// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The house dictionary (`replacements`) and the profanity rules
//! (`profanity`, `profanity-list`) in real pipelines: every output says the
//! same, a dictionary can change while playing, and bad lines are named.
//!
//! The tiny fixture model says "hello from the tiny voxtral test model"
//! over and over, whatever it hears.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;

use common::cc608::cc1_chars;
use common::remote::{record, Run};

const AUDIO: &str =
    "audiotestsrc num-buffers=40 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1";

fn write_dictionary(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn rules(dictionary: &Path) -> String {
    format!(
        "model-path={} threads=1 replacements={} profanity=mask profanity-list=Test",
        common::tiny_model().display(),
        dictionary.display()
    )
}

fn run(line: &str) {
    let pipeline = gst::parse::launch(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let msg = common::run_to_end(&pipeline, Duration::from_secs(120));
    assert!(
        matches!(msg.view(), gst::MessageView::Eos(_)),
        "{line}: {msg:?}"
    );
}

/// The words the house wants, and the ones it does not, in `text`.
fn assert_worded(what: &str, text: &str) {
    assert!(
        text.contains("Hi from the Voxtral Mini t*** model"),
        "{what}: {text}"
    );
    // ("tiny" alone may end the text: the audio can stop in "voxtral".)
    for raw in ["hello", "tiny voxtral", "test"] {
        assert!(!text.contains(raw), "{what} still says {raw:?}: {text}");
    }
}

#[test]
fn a_dictionary_and_a_profanity_rule_change_the_same_words_in_srt_captions_and_jsonl() {
    common::init_plugin();
    let dir = common::scratch_dir("wording-outputs");
    let dictionary = write_dictionary(
        &dir,
        "house.txt",
        "# house style\nhello => Hi\ntiny voxtral => Voxtral Mini   # the product\n",
    );
    let rules = rules(&dictionary);

    let srt = dir.join("words.srt");
    run(&format!(
        "{AUDIO} ! voxtralrttranscriber {rules} output=lines ! srtenc ! filesink location={}",
        srt.display()
    ));
    let srt = std::fs::read_to_string(srt).unwrap();
    let srt_text: Vec<&str> = srt
        .lines()
        .filter(|l| !l.is_empty() && !l.contains("-->") && l.parse::<u32>().is_err())
        .collect();
    assert_worded("SRT", &srt_text.join(" "));

    let jsonl = dir.join("words.jsonl");
    run(&format!(
        "{AUDIO} ! voxtralrtsink {rules} format=jsonl location={}",
        jsonl.display()
    ));
    let words: Vec<String> = std::fs::read_to_string(jsonl)
        .unwrap()
        .lines()
        .map(|l| {
            let start = l.find("\"text\":\"").unwrap() + 8;
            l[start..start + l[start..].find('"').unwrap()].to_owned()
        })
        .collect();
    assert_worded("JSONL", &words.join(" "));

    let pipeline = gst::parse::launch(&format!(
        "{AUDIO} ! voxtralrttranscriber {rules} ! \
         closedcaption/x-cea-608,format=raw,framerate=30/1 ! \
         fakesink name=cc signal-handoffs=true sync=false"
    ))
    .unwrap();
    let buffers = common::handoffs(pipeline.downcast_ref().unwrap(), "cc");
    common::run_to_end(&pipeline, Duration::from_secs(120));
    let pairs: Vec<(u64, [u8; 2])> = buffers
        .lock()
        .unwrap()
        .iter()
        .map(|b| {
            let m = b.map_readable().unwrap();
            (b.pts().unwrap().nseconds(), [m[0], m[1]])
        })
        .collect();
    let shown: String = cc1_chars(&pairs).into_iter().map(|(_, c)| c).collect();
    assert_worded("CC1", &shown);
}

/// Runs a live pipeline into voxtralrtsink for `seconds`, calling
/// `during(sink, second)` after each second.
fn run_live(rules: &str, seconds: u64, mut during: impl FnMut(&gst::Element, u64)) -> Run {
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc is-live=true samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber name=t {rules} ! fakesink sync=false"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let transcriber = pipeline.by_name("t").unwrap();
    let result = Arc::new(Mutex::new(Run::default()));
    record(&pipeline, &transcriber, &result);
    pipeline.set_state(gst::State::Playing).unwrap();
    for second in 1..=seconds {
        std::thread::sleep(Duration::from_secs(1));
        during(&transcriber, second);
    }
    pipeline.send_event(gst::event::Eos::new());
    common::run_to_end(pipeline.upcast_ref(), Duration::from_secs(30));
    pipeline.set_state(gst::State::Null).unwrap();
    let run = std::mem::take(&mut *result.lock().unwrap());
    run
}

#[test]
fn a_dictionary_set_while_playing_is_read_again_and_its_bad_lines_are_warned_by_number() {
    common::init_plugin();
    let dir = common::scratch_dir("wording-live");
    let first = write_dictionary(&dir, "first.txt", "hello => Hi\n");
    let second = write_dictionary(
        &dir,
        "second.txt",
        "hello => Howdy\nthis line has no arrow\nmodel => Model\n",
    );
    let missing = dir.join("missing.txt");
    let mut changed_at = None;
    let run = run_live(&rules(&first), 6, |t, second_of_run| match second_of_run {
        2 => t.set_property("replacements", missing.to_str().unwrap()),
        3 => {
            t.set_property("replacements", second.to_str().unwrap());
            changed_at = Some(t.current_running_time().unwrap().nseconds());
        }
        _ => {}
    });
    let changed_at = changed_at.unwrap();
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    // The missing file: a warning, and the first dictionary stays.
    assert!(
        run.warnings
            .iter()
            .any(|w| w.contains("missing.txt") && w.contains("stays")),
        "{:?}",
        run.warnings
    );
    assert!(
        run.warnings
            .iter()
            .any(|w| w.contains("second.txt") && w.contains("line 2")),
        "{:?}",
        run.warnings
    );
    let said = |word: &str| run.words.iter().filter(|(_, w)| w == word).count();
    assert_eq!(said("hello"), 0, "{:?}", run.words);
    // Words from before the change (by their time) keep the first rule;
    // the second applies from a little after it (held words, latency).
    let times_of = |word: &str| {
        let times = run.words.iter().filter(|(_, w)| w == word).map(|(t, _)| *t);
        times.collect::<Vec<u64>>()
    };
    let latest_hi = *times_of("Hi").iter().max().unwrap();
    let first_howdy = *times_of("Howdy").iter().min().unwrap();
    assert!(latest_hi < first_howdy, "{:?}", run.words);
    assert!(first_howdy <= changed_at + 1_000_000_000, "{:?}", run.words);
    assert!(said("Model") > 0 && said("model") > 0, "{:?}", run.words);
}

#[test]
fn the_properties_read_back_and_a_dictionary_with_a_phrase_adds_its_hold_to_the_latency() {
    common::init_plugin();
    let dir = common::scratch_dir("wording-latency");
    let single = write_dictionary(&dir, "single.txt", "hello => Hi\n");
    let phrase = write_dictionary(&dir, "phrase.txt", "tiny voxtral => Voxtral Mini\n");
    let latency_with = |dictionary: &Path| {
        let pipeline = gst::parse::launch(&format!(
            "audiotestsrc is-live=true ! audio/x-raw,rate=16000,channels=1 ! \
             voxtralrttranscriber name=t {} ! fakesink",
            rules(dictionary)
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        let t = pipeline.by_name("t").unwrap();
        assert_eq!(
            t.property::<Option<String>>("replacements").as_deref(),
            dictionary.to_str()
        );
        assert_eq!(
            t.property::<Option<String>>("profanity-list").unwrap(),
            "Test"
        );
        pipeline.set_state(gst::State::Playing).unwrap();
        let _ = pipeline.state(gst::ClockTime::from_seconds(10));
        let mut q = gst::query::Latency::new();
        assert!(t.static_pad("src").unwrap().query(&mut q));
        pipeline.set_state(gst::State::Null).unwrap();
        q.result().1
    };
    let one_word = latency_with(&single);
    let two_words = latency_with(&phrase);
    assert_eq!(
        two_words - one_word,
        gst::ClockTime::from_nseconds(gstvoxtralrt::wording::MAX_HOLD_NS)
    );
}
