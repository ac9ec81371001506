// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Running a pipeline to its end, and what passed a pad: buffers and the
//! `rstranscribe/...` events between them, in order.

use std::sync::{Arc, Mutex};

use gst::prelude::*;

pub const FINAL_TRANSCRIPT: &str = "rstranscribe/final-transcript";

/// What passed a pad.
#[derive(Debug, Clone)]
pub enum Item {
    Buffer {
        data: Vec<u8>,
    },
    /// A custom downstream event of gst-plugins-rs' transcribers, by name.
    Event(String),
}

pub type Log = Arc<Mutex<Vec<Item>>>;

/// Records the buffers (also in lists) and `rstranscribe/...` events that
/// pass `pad`.
pub fn record(pad: &gst::Pad) -> Log {
    let log = Log::default();
    let into = log.clone();
    let probes = gst::PadProbeType::BUFFER
        | gst::PadProbeType::BUFFER_LIST
        | gst::PadProbeType::EVENT_DOWNSTREAM;
    pad.add_probe(probes, move |_, info| {
        let mut log = into.lock().unwrap();
        match &info.data {
            Some(gst::PadProbeData::Buffer(b)) => log.push(Item::of(b)),
            Some(gst::PadProbeData::BufferList(list)) => log.extend(list.iter().map(Item::of)),
            Some(gst::PadProbeData::Event(e)) => {
                if let Some(s) = e
                    .structure()
                    .filter(|s| s.name().starts_with("rstranscribe/"))
                {
                    log.push(Item::Event(s.name().to_string()));
                }
            }
            _ => {}
        }
        gst::PadProbeReturn::Ok
    });
    log
}

impl Item {
    fn of(b: &gst::BufferRef) -> Item {
        Item::Buffer {
            data: b.map_readable().map(|m| m.to_vec()).unwrap_or_default(),
        }
    }
}

/// Records what goes into element `name`'s sink pad.
pub fn record_into(pipeline: &gst::Pipeline, name: &str) -> Log {
    record(&by_name(pipeline, name).static_pad("sink").unwrap())
}

pub fn by_name(pipeline: &gst::Pipeline, name: &str) -> gst::Element {
    pipeline
        .by_name(name)
        .unwrap_or_else(|| panic!("no element {name}"))
}

/// The text buffers of a log, each `[text]`, and each final-transcript
/// event as `|`: `[x x x]|[x x]|`.
pub fn shape(log: &Log) -> String {
    log.lock()
        .unwrap()
        .iter()
        .map(|item| match item {
            Item::Buffer { data, .. } if data.is_empty() => String::new(),
            Item::Buffer { data, .. } => format!("[{}]", String::from_utf8_lossy(data)),
            Item::Event(name) if name == FINAL_TRANSCRIPT => "|".to_owned(),
            Item::Event(_) => String::new(),
        })
        .collect()
}

/// The texts of a log's non-empty buffers.
pub fn texts(log: &Log) -> Vec<String> {
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|item| match item {
            Item::Buffer { data, .. } if !data.is_empty() => {
                Some(String::from_utf8_lossy(data).into_owned())
            }
            _ => None,
        })
        .collect()
}

/// The data of a log's buffers, in order.
pub fn data(log: &Log) -> Vec<Vec<u8>> {
    log.lock()
        .unwrap()
        .iter()
        .filter_map(|item| match item {
            Item::Buffer { data, .. } => Some(data.clone()),
            Item::Event(_) => None,
        })
        .collect()
}

/// Drops the final-transcript events that pass `pad`: a consumer as it is
/// without them.
pub fn drop_final_transcripts(pad: &gst::Pad) {
    pad.add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, |_, info| {
        match info.event().and_then(|e| e.structure()) {
            Some(s) if s.name() == FINAL_TRANSCRIPT => gst::PadProbeReturn::Drop,
            _ => gst::PadProbeReturn::Ok,
        }
    });
}

/// Builds a pipeline from a launch line.
pub fn launch(line: &str) -> Result<gst::Pipeline, String> {
    gst::parse::launch(line)
        .map_err(|e| format!("{e} in: {line}"))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| "not a pipeline".to_owned())
}

/// How a run ended.
pub struct Ended {
    /// The WARNING messages, `source: text`.
    pub warnings: Vec<String>,
    /// The names of the element messages.
    pub messages: Vec<String>,
}

/// Plays `pipeline` (after `start`, called once it is PLAYING) until EOS;
/// an ERROR, or no EOS within `seconds`, fails. Back to NULL either way.
pub fn play(pipeline: &gst::Pipeline, seconds: u64, start: impl FnOnce()) -> Result<Ended, String> {
    pipeline
        .set_state(gst::State::Playing)
        .map_err(|e| format!("could not start: {e}"))?;
    start();
    let bus = pipeline.bus().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let (mut warnings, mut messages) = (Vec::new(), Vec::new());
    let end = loop {
        let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else {
            break Err(format!("no EOS within {seconds} s"));
        };
        let Some(msg) = bus.timed_pop(gst::ClockTime::from_nseconds(left.as_nanos() as u64)) else {
            continue;
        };
        let source = || {
            msg.src()
                .map_or("?".into(), |s| s.path_string().to_string())
        };
        match msg.view() {
            gst::MessageView::Eos(_) => break Ok(()),
            gst::MessageView::Error(e) => {
                break Err(format!(
                    "ERROR from {}: {} ({:?})",
                    source(),
                    e.error(),
                    e.debug()
                ));
            }
            gst::MessageView::Warning(w) => warnings.push(format!("{}: {}", source(), w.error())),
            gst::MessageView::Element(e) => {
                messages.extend(e.structure().map(|s| s.name().to_string()));
            }
            _ => {}
        }
    };
    let _ = pipeline.set_state(gst::State::Null);
    end.map(|()| Ended { warnings, messages })
}
