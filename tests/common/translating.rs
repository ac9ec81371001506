// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The tone fixture's words through a transcriber with one translate pad,
//! against a chat server: what the pads gave (tests/translation.rs and
//! tests/llama_server.rs).

use std::sync::{Arc, Mutex};

use gst::prelude::*;

use super::remote::F32_CAPS;
use super::{tone_audio, tone_model};

/// Three runs of words, each after a pause longer than a unit's (700 ms).
pub const FRAMES: [usize; 6] = [10, 11, 12, 30, 31, 50];
pub const TOTAL_FRAMES: usize = 60;

/// (pts, duration, text) of each buffer through a pad.
pub type Buffers = Arc<Mutex<Vec<(u64, u64, String)>>>;

pub fn record(pad: &gst::Pad) -> Buffers {
    let got: Buffers = Arc::default();
    let log = got.clone();
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
        if let Some(b) = info.buffer().filter(|b| b.size() > 0) {
            let (pts, dur) = (b.pts().unwrap(), b.duration().unwrap());
            log.lock()
                .unwrap()
                .push((pts.nseconds(), dur.nseconds(), super::text_of(b)));
        }
        gst::PadProbeReturn::Ok
    });
    got
}

pub struct Outcome {
    pub words: Vec<(u64, u64, String)>,
    pub translated: Vec<(u64, u64, String)>,
    /// On the translate pad, in the order they came: ("buffer", PTS) and
    /// ("gap", start).
    pub timeline: Vec<(&'static str, u64)>,
    pub stats: gst::Structure,
    pub warnings: Vec<String>,
}

/// Records each buffer's PTS and each GAP's start through `pad`.
pub fn record_timeline(pad: &gst::Pad) -> Arc<Mutex<Vec<(&'static str, u64)>>> {
    let timeline: Arc<Mutex<Vec<(&'static str, u64)>>> = Arc::default();
    let log = timeline.clone();
    pad.add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) if b.size() > 0 => {
                    log.lock()
                        .unwrap()
                        .push(("buffer", b.pts().unwrap().nseconds()));
                }
                Some(gst::PadProbeData::Event(e)) => {
                    if let gst::EventView::Gap(gap) = e.view() {
                        log.lock().unwrap().push(("gap", gap.get().0.nseconds()));
                    }
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
    timeline
}

/// An appsrc (`live` or not) into a transcriber of the tone fixture with
/// one translate pad for `language` on `url` and `props`: its src pad into
/// `words`, its translate pad into `translated` (fakesinks).
pub fn pipeline(url: &str, props: &str, language: &str, live: bool) -> gst::Pipeline {
    pipeline_of(&tone_model(), url, props, language, live)
}

/// [`pipeline`] with another model.
pub fn pipeline_of(
    model: &str,
    url: &str,
    props: &str,
    language: &str,
    live: bool,
) -> gst::Pipeline {
    super::init_plugin();
    gst::parse::launch(&format!(
        "appsrc name=src is-live={live} format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={model} threads=1 translate-url={url} \
         {props} translate_src_0::language-code={language} \
         ! fakesink name=words sync=false \
         t.translate_src_0 ! fakesink name=translated sync=false"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap()
}

/// The tone fixture's three units through [`pipeline`]: what the pads gave.
pub fn run_with(url: &str, props: &str, language: &str, live: bool) -> Outcome {
    let pipeline = pipeline(url, props, language, live);
    let by_name = |n: &str| pipeline.by_name(n).unwrap();
    let words = record(&by_name("words").static_pad("sink").unwrap());
    let translated_pad = by_name("translated").static_pad("sink").unwrap();
    let translated = record(&translated_pad);
    let timeline = record_timeline(&translated_pad);
    let warnings: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = warnings.clone();
    pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
        if let gst::MessageView::Warning(w) = msg.view() {
            log.lock().unwrap().push(w.error().to_string());
        }
        gst::BusSyncReply::Pass
    });
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = by_name("src");
    let audio = tone_audio(TOTAL_FRAMES, &FRAMES);
    if live {
        super::push_in_real_time(&src, &audio, &clock, || {});
    } else {
        let buffer = gst::Buffer::from_mut_slice(super::to_f32le(&audio));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    super::expect_eos(&pipeline);
    let stats = by_name("t").property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let outcome = Outcome {
        words: words.lock().unwrap().clone(),
        translated: translated.lock().unwrap().clone(),
        timeline: timeline.lock().unwrap().clone(),
        stats,
        warnings: warnings.lock().unwrap().clone(),
    };
    outcome
}

/// The pad's counts in `stats`.
pub fn counts(stats: &gst::Structure) -> gst::Structure {
    let pads = stats.get::<gst::Array>("translations").unwrap();
    pads.as_slice()[0].get::<gst::Structure>().unwrap()
}

/// The units the words make: runs split at the pauses.
pub fn units(words: &[(u64, u64, String)]) -> Vec<(u64, u64, String)> {
    let mut units: Vec<(u64, u64, String)> = Vec::new();
    for (pts, dur, text) in words {
        match units.last_mut() {
            Some(u) if pts.saturating_sub(u.1) < 700_000_000 => {
                u.1 = pts + dur;
                u.2 = format!("{} {text}", u.2);
            }
            _ => units.push((*pts, pts + dur, text.clone())),
        }
    }
    units
}
