// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The shared half: one pipeline that captures, transcribes and encodes
//! once, whatever the number of viewers.
//!
//! Why one pipeline with tees rather than a pipeline per viewer fed from
//! appsinks: every viewer then shares one clock, one running time and one
//! set of encoded frames, so a cue's running time means the same instant
//! for all of them and a viewer's media timeline is just "running time
//! minus the moment its first frame went out" (see `viewer.rs`). Appsink ->
//! appsrc hand-over would need its own timestamp rebasing and latency
//! bookkeeping per viewer for no gain. Each viewer hangs off the encoded
//! tees through a leaky queue, so a slow or departing viewer never stalls
//! the others or the transcriber, and its elements live in a bin of their
//! own that is removed as one piece.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};

use gst::prelude::*;

use crate::viewer::{Viewer, ViewerId};

/// Video geometry and rate: small enough for two encoders on two cores;
/// 30 fps is a frame rate CEA-608 captions are defined for.
pub const WIDTH: u32 = 640;
pub const HEIGHT: u32 = 360;
pub const FPS: u32 = 30;

/// How long recognised words are kept to give a viewer that connects the
/// words already said about the frames it is about to see (the video
/// leaves `latency` behind the audio, so these are still in its future).
const HISTORY_NS: u64 = 30_000_000_000;

pub enum AudioSource {
    Test,
    Mic,
    File(PathBuf),
}

/// What the file source's mixer takes from both its inputs.
/// How long the mixer of `--audio FILE` waits for the file's data.
const MIX_WAIT: gst::ClockTime = gst::ClockTime::from_seconds(1);
const MIX_CAPS: &str = "audio/x-raw,format=S16LE,rate=48000,channels=1,layout=interleaved";

pub struct Config {
    pub model: PathBuf,
    pub source: AudioSource,
    pub threads: u32,
    /// `stun://host:port`, for webrtcbin's stun-server.
    pub stun: Option<String>,
    /// `turn(s)://user:password@host:port`, for webrtcbin's turn-server.
    pub turn: Option<String>,
    /// Who speaks into the source: the transcriber's sink pad `speaker`.
    pub speaker: Option<String>,
    /// The transcriber's `overload`, if given (else the element's default).
    pub overload: Option<&'static str>,
    /// The transcriber's `latency` (ms), if given.
    pub latency: Option<u32>,
}

/// One recognised word (or line), on the shared pipeline's running time.
#[derive(Clone, Debug)]
pub struct Cue {
    pub text: String,
    pub start: u64,
    pub end: u64,
    pub is_final: bool,
    /// Who said it, when the transcriber knows (a speaker source is in use).
    pub speaker: Option<String>,
}

pub struct Media {
    pub pipeline: gst::Pipeline,
    pub config: Config,
    viewers: Mutex<BTreeMap<ViewerId, Arc<Viewer>>>,
    history: Mutex<VecDeque<Cue>>,
    next_id: Mutex<ViewerId>,
    started: Mutex<bool>,
}

/// The shared pipeline's launch line. Audio is split once for the
/// transcriber and once for Opus; the transcriber's closed captions go into
/// the video through cccombiner, and the captioned video is encoded once
/// per codec. Tees that no viewer hangs off yet drop what they get
/// (allow-not-linked).
fn launch_line(config: &Config) -> String {
    let audio_in = match &config.source {
        AudioSource::Test => "audiotestsrc is-live=true wave=sine freq=440 volume=0.3".to_owned(),
        AudioSource::Mic => "autoaudiosrc".to_owned(),
        // A file is mixed onto a live silent source: the file is then paced
        // by the clock, starts at running time 0, and after its end the
        // stream goes on in silence for viewers that stay or come later.
        // Both inputs in one fixed format: audiomixer takes its caps from the
        // first input to negotiate, and refused the other ("wrong format")
        // when the file's branch came first with its own. The mixer waits
        // up to MIX_WAIT for the file's first buffer: a live mixer does not
        // wait for a pad without data, and the file's start arrived late on
        // a busy machine (decodebin still plugging), was clipped by a few
        // ms, and its audio no longer began on the model's 80 ms frames.
        AudioSource::File(path) => format!(
            "audiotestsrc is-live=true wave=silence ! audioconvert ! {MIX_CAPS} ! mix. \
             filesrc location=\"{}\" ! decodebin ! audioconvert ! audioresample ! {MIX_CAPS} ! mix. \
             audiomixer name=mix latency={}",
            path.display(),
            MIX_WAIT.nseconds()
        ),
    };
    format!(
        "{audio_in} ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=1 ! tee name=audio \
         audio. ! queue ! audioconvert ! audioresample ! audio/x-raw,rate=16000,channels=1 ! \
           voxtralrttranscriber name=transcriber model-path=\"{model}\" threads={threads}{overload}{latency} post-messages=true ! \
           closedcaption/x-cea-708,format=cc_data,framerate={FPS}/1 ! ccconverter ! \
           closedcaption/x-cea-708,format=cc_data ! queue ! cc.caption \
         audio. ! queue ! opusenc bitrate=64000 ! tee name=opus allow-not-linked=true \
         videotestsrc is-live=true pattern=ball ! \
           video/x-raw,format=I420,width={WIDTH},height={HEIGHT},framerate={FPS}/1 ! \
           timeoverlay halignment=right valignment=top font-desc=\"Sans 16\" ! \
           queue max-size-buffers=0 max-size-bytes=0 max-size-time=6000000000 ! \
           cccombiner name=cc ! tee name=video \
         video. ! queue ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=60 bitrate=800 ! \
           video/x-h264,profile=constrained-baseline ! h264parse config-interval=-1 ! \
           tee name=h264 allow-not-linked=true \
         video. ! queue ! vp8enc deadline=1 cpu-used=8 keyframe-max-dist=60 target-bitrate=800000 ! \
           tee name=vp8 allow-not-linked=true",
        model = config.model.display(),
        threads = config.threads,
        overload = crate::common::overload_property(config.overload),
        latency = config
            .latency
            .map_or_else(String::new, |ms| format!(" latency={ms}")),
    )
}

impl Media {
    /// Builds the shared pipeline and brings it to READY, so that a model
    /// that cannot load is reported before the server says it is ready.
    pub fn new(config: Config) -> Result<Arc<Media>, String> {
        let pipeline = gst::parse::launch(&launch_line(&config))
            .map_err(|e| format!("building the pipeline: {e}"))?
            .downcast::<gst::Pipeline>()
            .map_err(|_| "the launch line is not a pipeline".to_owned())?;
        if let Some(speaker) = &config.speaker {
            let transcriber = pipeline.by_name("transcriber").expect("named in the line");
            let sink = transcriber.static_pad("sink").expect("its sink pad");
            sink.set_property("speaker", speaker);
        }
        pipeline
            .set_state(gst::State::Ready)
            .map_err(|_| "the pipeline could not get ready (is the model path right?)")?;
        Ok(Arc::new(Media {
            pipeline,
            config,
            viewers: Mutex::new(BTreeMap::new()),
            history: Mutex::new(VecDeque::new()),
            next_id: Mutex::new(1),
            started: Mutex::new(false),
        }))
    }

    /// The tee of encoded `name` ("h264", "vp8" or "opus").
    pub fn tee(&self, name: &str) -> gst::Element {
        self.pipeline
            .by_name(name)
            .expect("the launch line names its tees")
    }

    /// Creates a viewer's peer and hangs it off the shared pipeline; the
    /// first viewer starts the stream, so a file plays from its start for
    /// it.
    pub fn add_viewer(
        self: &Arc<Self>,
        outgoing: std::sync::mpsc::Sender<crate::signalling::Outgoing>,
    ) -> Result<Arc<Viewer>, String> {
        let id = {
            let mut next = self.next_id.lock().unwrap();
            *next += 1;
            *next - 1
        };
        let viewer = Viewer::new(id, Arc::downgrade(self), outgoing)?;
        self.viewers.lock().unwrap().insert(id, viewer.clone());
        let mut started = self.started.lock().unwrap();
        if !*started {
            self.pipeline
                .set_state(gst::State::Playing)
                .map_err(|_| "the pipeline could not start")?;
            *started = true;
        }
        drop(started);
        viewer.negotiate();
        Ok(viewer)
    }

    /// Takes a viewer's elements out of the pipeline. Safe to call more
    /// than once, from any thread but a streaming thread of that viewer.
    pub fn remove_viewer(&self, id: ViewerId) {
        let viewer = self.viewers.lock().unwrap().remove(&id);
        if let Some(viewer) = viewer {
            viewer.detach(&self.pipeline);
            println!("viewer {id}: left ({} watching)", self.viewer_count());
        }
    }

    /// Removes a viewer from a thread of its own: webrtcbin's callbacks
    /// run on its threads, which its own state change would wait for.
    pub fn remove_viewer_later(media: &Weak<Media>, id: ViewerId) {
        let media = media.clone();
        std::thread::spawn(move || {
            if let Some(media) = media.upgrade() {
                media.remove_viewer(id);
            }
        });
    }

    pub fn viewer_count(&self) -> usize {
        self.viewers.lock().unwrap().len()
    }

    /// Starts `viewer`'s media timeline at `origin` (running time). The
    /// transcript stays locked meanwhile, so each cue reaches the viewer
    /// once and in order.
    pub fn start_timeline(&self, viewer: &Viewer, origin: u64) {
        let history = self.history.lock().unwrap();
        viewer.set_origin(origin, history.iter());
    }

    /// Keeps a new cue for later viewers and hands it to every viewer.
    fn publish(&self, cue: Cue) {
        println!(
            "cue {:8.3} - {:8.3} s  {}",
            cue.start as f64 / 1e9,
            cue.end as f64 / 1e9,
            cue.text
        );
        let mut history = self.history.lock().unwrap();
        let viewers: Vec<Arc<Viewer>> = self.viewers.lock().unwrap().values().cloned().collect();
        for viewer in viewers {
            viewer.send_cue(&cue);
        }
        history.push_back(cue);
        let newest = history.back().map_or(0, |c| c.end);
        while history.front().is_some_and(|c| c.end + HISTORY_NS < newest) {
            history.pop_front();
        }
    }

    /// The viewer whose bin holds `object`, if any.
    fn viewer_of(&self, object: &gst::Object) -> Option<ViewerId> {
        let viewers = self.viewers.lock().unwrap();
        viewers
            .iter()
            .find(|(_, v)| v.owns(object))
            .map(|(id, _)| *id)
    }

    /// Handles the bus until the pipeline fails or ends. An error inside
    /// one viewer's elements costs only that viewer.
    pub fn run_bus(self: &Arc<Self>) -> Result<(), String> {
        let bus = self.pipeline.bus().expect("pipelines have a bus");
        for msg in bus.iter_timed(gst::ClockTime::NONE) {
            match msg.view() {
                gst::MessageView::Element(e) => {
                    if let Some(cue) = e.structure().and_then(cue_of) {
                        self.publish(cue);
                    }
                }
                gst::MessageView::Latency(_) => {
                    // A viewer's elements joined or left: their latency
                    // counts for every sink.
                    let _ = self.pipeline.recalculate_latency();
                }
                gst::MessageView::Error(e) => {
                    let from_viewer = e.src().and_then(|src| self.viewer_of(src));
                    match from_viewer {
                        Some(id) => {
                            eprintln!("viewer {id}: error {}: dropping this viewer", e.error());
                            Media::remove_viewer_later(&Arc::downgrade(self), id);
                        }
                        None => {
                            return Err(format!(
                                "{}: {}",
                                e.src().map(|s| s.path_string()).unwrap_or_default(),
                                e.error()
                            ))
                        }
                    }
                }
                gst::MessageView::Warning(w) => eprintln!("warning: {}", w.error()),
                gst::MessageView::Eos(_) => return Ok(()),
                _ => {}
            }
        }
        Ok(())
    }
}

/// A `voxtralrt-transcript` element message as a cue.
fn cue_of(s: &gst::StructureRef) -> Option<Cue> {
    if s.name() != "voxtralrt-transcript" {
        return None;
    }
    Some(Cue {
        text: s.get::<String>("text").ok()?,
        start: s.get::<u64>("running-time").ok()?,
        end: s.get::<u64>("running-time-end").ok()?,
        is_final: s.get::<bool>("is-final").unwrap_or(true),
        speaker: s.get::<String>("speaker").ok(),
    })
}
