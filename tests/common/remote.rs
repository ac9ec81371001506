// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Running voxtralrttranscriber with engine=vllm on some audio, for the
//! remote engine's tests (the double and the real server).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;

pub const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

/// What one run gave.
#[derive(Debug, Default)]
pub struct Run {
    /// (pts ns, text) of every word.
    pub words: Vec<(u64, String)>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
    /// Element messages by name.
    pub messages: Vec<gst::Structure>,
    /// Each element message's name and when it was posted.
    pub posted: Vec<(String, Instant)>,
    pub stats: Option<gst::Structure>,
    pub took: Duration,
}

impl Run {
    pub fn stat(&self, field: &str) -> u64 {
        self.stats.as_ref().unwrap().get::<u64>(field).unwrap()
    }
    pub fn messages_named(&self, name: &str) -> Vec<&gst::Structure> {
        self.messages.iter().filter(|m| m.name() == name).collect()
    }

    /// When the first element message `name` was posted.
    pub fn posted_at(&self, name: &str) -> Option<Instant> {
        self.posted.iter().find(|p| p.0 == name).map(|p| p.1)
    }

    /// Keeps an ERROR, WARNING or element message.
    pub fn record(&mut self, msg: &gst::Message) {
        match msg.view() {
            gst::MessageView::Error(e) => self.errors.push(e.error().to_string()),
            gst::MessageView::Warning(w) => self.warnings.push(w.error().to_string()),
            gst::MessageView::Element(e) => {
                self.messages.extend(e.structure().map(|s| s.to_owned()))
            }
            _ => {}
        }
    }
}

/// Records into `run` every word `element` pushes and every message its
/// pipeline's bus gets (the messages stay on the bus too).
pub fn record(pipeline: &gst::Pipeline, element: &gst::Element, run: &Arc<Mutex<Run>>) {
    let r = run.clone();
    element
        .static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            let b = info.buffer().unwrap();
            r.lock()
                .unwrap()
                .words
                .push((b.pts().unwrap().nseconds(), super::text_of(&b.to_owned())));
            gst::PadProbeReturn::Ok
        });
    let r = run.clone();
    pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
        r.lock().unwrap().record(msg);
        gst::BusSyncReply::Pass
    });
}

/// The tone fixture's audio with three bursts of 3 frames, 4 s apart
/// (at 0.96, 4.96 and 8.96 s; 12.8 s in all), and their frames: with
/// speech-only each is an utterance of its own, with 2.4 s of silence
/// between the end of one (its hangover and final commit) and the next.
pub fn bursts_4_s_apart() -> (Vec<f32>, Vec<usize>) {
    let frames: Vec<usize> = (12..160).step_by(50).flat_map(|s| s..s + 3).collect();
    (super::tone_audio(160, &frames), frames)
}

/// Transcribes `audio` (non-live, 100 ms buffers) with engine=vllm at `url`.
pub fn transcribe(url: &str, model: &str, audio: &[f32], extra: &str) -> Run {
    transcribe_with(url, model, audio, extra, |_| {})
}

/// The same, the buffers pushed no faster than real time (still non-live).
pub fn transcribe_paced(url: &str, model: &str, audio: &[f32], extra: &str) -> Run {
    PACED.with(|p| p.set(true));
    let run = transcribe(url, model, audio, extra);
    PACED.with(|p| p.set(false));
    run
}

thread_local! {
    static PACED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The same, with the element set up by `configure` before it starts.
pub fn transcribe_with(
    url: &str,
    model: &str,
    audio: &[f32],
    extra: &str,
    configure: impl FnOnce(&gst::Element),
) -> Run {
    let properties = format!("engine=vllm url={url} model={model} {extra}");
    transcribe_with_properties(&properties, audio, configure)
}

/// Transcribes `audio` as [`transcribe_with`] does, the transcriber's
/// `properties` set in their order.
pub fn transcribe_with_properties(
    properties: &str,
    audio: &[f32],
    configure: impl FnOnce(&gst::Element),
) -> Run {
    super::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t {properties} ! \
         appsink name=out sync=false"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let run = Arc::new(Mutex::new(Run::default()));
    let sink = pipeline.by_name("out").unwrap();
    let r = run.clone();
    sink.set_property("emit-signals", true);
    sink.connect("new-sample", false, move |args| {
        let sink = args[0].get::<gst::Element>().unwrap();
        let sample = sink.emit_by_name::<gst::Sample>("pull-sample", &[]);
        let b = sample.buffer().unwrap();
        r.lock()
            .unwrap()
            .words
            .push((b.pts().unwrap().nseconds(), super::text_of(&b.to_owned())));
        Some(gst::FlowReturn::Ok.to_value())
    });
    configure(&pipeline.by_name("t").unwrap());
    let r = run.clone();
    pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
        if let gst::MessageView::Element(e) = msg.view() {
            let name = e
                .structure()
                .map_or_else(String::new, |s| s.name().to_string());
            r.lock().unwrap().posted.push((name, Instant::now()));
        }
        gst::BusSyncReply::Pass
    });
    let started = Instant::now();
    // A setting the element refuses fails the state change, with an ERROR.
    let playing = pipeline.set_state(gst::State::Playing).is_ok();
    let src = pipeline.by_name("src").unwrap();
    let paced = PACED.with(|p| p.get());
    for (k, piece) in audio.chunks(1600).enumerate().filter(|_| playing) {
        if paced {
            let due = started + Duration::from_millis(100 * k as u64);
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        let mut b = gst::Buffer::from_mut_slice(super::to_f32le(piece));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        if src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]) != gst::FlowReturn::Ok {
            break;
        }
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let bus = pipeline.bus().unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_mseconds(left.as_millis() as u64))
        else {
            panic!("no EOS or ERROR within 90 s");
        };
        let mut r = run.lock().unwrap();
        r.record(&msg);
        if matches!(
            msg.view(),
            gst::MessageView::Eos(_) | gst::MessageView::Error(_)
        ) {
            break;
        }
    }
    let t = pipeline.by_name("t").unwrap();
    let stats = t.property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let mut run = std::mem::take(&mut *run.lock().unwrap());
    run.stats = Some(stats);
    run.took = started.elapsed();
    run
}
