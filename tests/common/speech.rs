// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Speech for the tests that judge it (the stall watchdog, the caption
//! alarm): espeak-ng's, and a file of it through a transcriber.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;
use gstvoxtralrt::recognizer::Recognizer;

use super::remote::Run;

/// About 13 s of English from espeak-ng (22.05 kHz), made once per test.
pub fn speech(dir: &Path) -> PathBuf {
    let wav = dir.join("speech.wav");
    let text = "The quick brown fox jumps over the lazy dog. Live captions need a watchdog \
                for a model that falls silent while people talk. This sentence keeps going \
                for a while so that the detector hears speech all along.";
    let out = std::process::Command::new("espeak-ng")
        .args(["-s", "150", "-w"])
        .arg(&wav)
        .arg(text)
        .output()
        .expect("espeak-ng (Debian package espeak-ng)");
    assert!(out.status.success(), "{}", super::output_text(&out));
    wav
}

/// What a test wraps the element's recognizer in.
pub type Wrap = Box<dyn Fn(Box<dyn Recognizer>) -> Box<dyn Recognizer> + Send + Sync>;

/// Runs `wav` through voxtralrttranscriber with `props`, its recognizer
/// wrapped by `wrap` if given.
pub fn transcribe_wav(wav: &Path, props: &str, wrap: Option<Wrap>) -> Run {
    super::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "filesrc location={} ! wavparse ! audioconvert ! audioresample ! \
         audio/x-raw,rate=16000,channels=1 ! voxtralrttranscriber name=t threads=1 {props} ! \
         fakesink name=out sync=false",
        wav.display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let t = pipeline.by_name("t").unwrap();
    if let Some(wrap) = wrap {
        super::recognizers::wrap(&t, wrap);
    }
    let run = Arc::new(Mutex::new(Run::default()));
    super::remote::record(&pipeline, &t, &run);
    let msg = super::run_to_end(pipeline.upcast_ref(), Duration::from_secs(120));
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let stats = t.property::<gst::Structure>("stats");
    let mut run = std::mem::take(&mut *run.lock().unwrap());
    run.stats = Some(stats);
    run
}
