// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Argument parsing and set-up shared by the examples.

#![allow(dead_code)]

use std::path::PathBuf;

/// The model given with --model or $VOXTRAL_MODEL, else the test model. A
/// preset name (`q4_k_m`, ...) or `hf://` reference is fetched into the
/// Hugging Face cache first, with a progress bar; without network the test
/// model is used, with a note.
pub fn model_path(arg: Option<String>) -> PathBuf {
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/voxtral-rt-tiny.gguf");
    if let Some(name) = arg.or_else(|| std::env::var("VOXTRAL_MODEL").ok()) {
        return fetched(name, &fixture);
    }
    eprintln!(
        "note: no --model or VOXTRAL_MODEL given; using the synthetic test model {} \
         (it is not a speech model: its words are made up)",
        fixture.display()
    );
    fixture
}

/// A name (preset or hf://) fetched with a progress bar; a path as it is.
#[cfg(feature = "download")]
fn fetched(name: String, fixture: &std::path::Path) -> PathBuf {
    use gstvoxtralrt::models::{hub, ModelRef};
    let by_name = name.starts_with("hf://") || gstvoxtralrt::models::preset(&name).is_some();
    match ModelRef::from_model_name(&name) {
        Ok(ModelRef::Hub(file)) if by_name => match hub::fetch_with_progress_bar(&file) {
            Ok(path) => path,
            Err(e) => {
                eprintln!(
                    "note: could not fetch {name}: {e}\nnote: using the synthetic test model {} \
                         (it is not a speech model: its words are made up)",
                    fixture.display()
                );
                fixture.to_owned()
            }
        },
        _ => PathBuf::from(name),
    }
}

#[cfg(not(feature = "download"))]
fn fetched(name: String, _fixture: &std::path::Path) -> PathBuf {
    PathBuf::from(name)
}

/// Command-line arguments: `--name value` options, `--flag` switches and
/// positional arguments.
pub struct Args {
    options: Vec<(String, Option<String>)>,
    pub positional: Vec<String>,
}

impl Args {
    /// Parses `std::env::args`; `switches` take no value. Prints `usage` and
    /// exits for --help.
    pub fn parse(usage: &str, switches: &[&str]) -> Args {
        let mut options = Vec::new();
        let mut positional = Vec::new();
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            if arg == "--help" || arg == "-h" {
                println!("{usage}");
                std::process::exit(0);
            }
            match arg.strip_prefix("--") {
                Some(name) if switches.contains(&name) => options.push((name.to_owned(), None)),
                Some(name) => {
                    let value = it
                        .next()
                        .unwrap_or_else(|| fail(usage, &format!("--{name} needs a value")));
                    options.push((name.to_owned(), Some(value)));
                }
                None => positional.push(arg),
            }
        }
        Args {
            options,
            positional,
        }
    }

    pub fn value(&self, name: &str) -> Option<String> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.clone())
    }

    pub fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    pub fn number<T: std::str::FromStr>(&self, name: &str, default: T, usage: &str) -> T {
        match self.value(name) {
            None => default,
            Some(v) => v
                .parse()
                .unwrap_or_else(|_| fail(usage, &format!("--{name}: not a number: {v}"))),
        }
    }
}

/// Where the audio to transcribe comes from: `--audio FILE`, or `--source
/// mic` (the default) or `test`.
pub enum Audio {
    /// A file, played from its start.
    File(String),
    /// A live source element description.
    Live(&'static str),
}

impl Audio {
    pub fn from_args(args: &Args, usage: &str) -> Audio {
        match (args.value("audio"), args.value("source").as_deref()) {
            (Some(_), Some(_)) => fail(usage, "--audio and --source exclude each other"),
            (Some(file), None) => Audio::File(file),
            (None, None | Some("mic")) => Audio::Live("autoaudiosrc"),
            (None, Some("test")) => Audio::Live("audiotestsrc is-live=true wave=sine"),
            (None, Some(other)) => fail(usage, &format!("unknown source {other}")),
        }
    }
}

/// `--overload skip|queue`: the transcriber's `overload` property, what
/// becomes of live audio the model falls more than `latency` behind on
/// (`skip`: the oldest goes and the captions stay live; `queue`: every
/// word comes, however late). `None` without the option: the element's
/// default (skip).
pub fn overload(args: &Args, usage: &str) -> Option<&'static str> {
    match args.value("overload").as_deref() {
        None => None,
        Some("skip") => Some("skip"),
        Some("queue") => Some("queue"),
        Some(other) => fail(
            usage,
            &format!("--overload takes skip or queue, not {other}"),
        ),
    }
}

/// `overload` as launch-line text for the transcriber: ` overload=MODE`,
/// or nothing for the element's default.
pub fn overload_property(overload: Option<&str>) -> String {
    overload.map_or_else(String::new, |mode| format!(" overload={mode}"))
}

pub fn fail(usage: &str, message: &str) -> ! {
    eprintln!("error: {message}\n\n{usage}");
    std::process::exit(2);
}

/// Initialises GStreamer and registers the plugin in this process.
pub fn init() {
    gst::init().expect("initialising GStreamer");
    gstvoxtralrt::plugin_register_static().expect("registering the voxtralrt plugin");
}

/// Builds a pipeline from a launch line, or exits with `usage` and the reason.
pub fn launch(usage: &str, line: &str) -> gst::Pipeline {
    use gst::prelude::*;
    gst::parse::launch(line)
        .unwrap_or_else(|e| fail(usage, &e.to_string()))
        .downcast::<gst::Pipeline>()
        .expect("a launch line with several elements is a pipeline")
}

/// Runs `pipeline` until EOS or an error; `tick` is called about every
/// second meanwhile. Returns the error text, if any.
pub fn run(pipeline: &gst::Pipeline, mut tick: impl FnMut(&gst::Pipeline)) -> Result<(), String> {
    use gst::prelude::*;
    let bus = pipeline.bus().expect("pipelines have a bus");
    pipeline
        .set_state(gst::State::Playing)
        .map_err(|_| first_error(&bus).unwrap_or_else(|| "the pipeline could not start".into()))?;
    let result = loop {
        match bus.timed_pop(gst::ClockTime::from_seconds(1)) {
            None => tick(pipeline),
            Some(msg) => match msg.view() {
                gst::MessageView::Eos(_) => break Ok(()),
                gst::MessageView::Error(e) => break Err(e.error().to_string()),
                gst::MessageView::Warning(w) => eprintln!("warning: {}", w.error()),
                _ => {}
            },
        }
    };
    let _ = pipeline.set_state(gst::State::Null);
    result
}

fn first_error(bus: &gst::Bus) -> Option<String> {
    let msg =
        bus.timed_pop_filtered(gst::ClockTime::from_seconds(1), &[gst::MessageType::Error])?;
    match msg.view() {
        gst::MessageView::Error(e) => Some(e.error().to_string()),
        _ => None,
    }
}

/// A test pattern never ends by itself: the first video frame at or after
/// the end of the audio ends the video (the source gets EOS back, as at the
/// end of a file), so that the streams all end together (RTSP clients get
/// BYE). `media_pipeline` has a tee named `audio` and a video source named
/// `video`.
pub fn end_video_with_audio(media_pipeline: &gst::Element) {
    use gst::prelude::*;
    use std::sync::{Arc, Mutex};
    let bin = media_pipeline
        .downcast_ref::<gst::Bin>()
        .expect("a media pipeline is a bin");
    let tee = bin
        .by_name("audio")
        .expect("the launch line has a tee named audio");
    let video = bin
        .by_name("video")
        .expect("the launch line has a video source");
    // The end of the audio so far, and whether it has ended.
    let audio: Arc<Mutex<(gst::ClockTime, bool)>> = Arc::default();
    let seen = audio.clone();
    tee.static_pad("sink").unwrap().add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            let mut seen = seen.lock().unwrap();
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) => {
                    if let Some(pts) = b.pts() {
                        seen.0 = seen.0.max(pts + b.duration().unwrap_or_default());
                    }
                }
                Some(gst::PadProbeData::Event(e)) if e.type_() == gst::EventType::Eos => {
                    seen.1 = true;
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
    video
        .static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            let pts = info.buffer().and_then(|b| b.pts());
            match (*audio.lock().unwrap(), pts) {
                ((end, true), Some(pts)) if pts >= end => {
                    // Handled (not Drop) makes the source see this flow.
                    info.flow_res = Err(gst::FlowError::Eos);
                    gst::PadProbeReturn::Handled
                }
                _ => gst::PadProbeReturn::Ok,
            }
        });
}
