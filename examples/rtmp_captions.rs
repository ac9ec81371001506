// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Publishes video with live closed captions (CEA-608/708 in the H.264 SEI)
//! to an RTMP server, and keeps transcribing while the server is away: the
//! RTMP output is a pipeline of its own, fed from the capture pipeline
//! through appsink and appsrc, and built again with backoff after its
//! ERROR.

mod common;

use common::Audio;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::glib;
use gst::prelude::*;

const USAGE: &str = "\
Publish video with live closed captions to an RTMP server (YouTube Live,
Twitch, nginx-rtmp, ...), reconnecting when the server goes away.

usage: cargo run --example rtmp_captions -- --url rtmp://HOST/APP/KEY [options]

  --url URL          where to publish (required)
  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE, fetched once into the
                     Hugging Face cache (default: $VOXTRAL_MODEL, else the
                     synthetic test model)
  --audio FILE       transcribe this file (in real time), then end
  --source NAME      without --audio: mic (autoaudiosrc, the default) or test
                     (a live test tone)
  --threads N        CPU threads (default 0 = all)
  --overload MODE    skip (the default) or queue: when the model falls more
                     than its latency behind live audio (--source; a file
                     is never skipped), skip the oldest audio to stay live,
                     or keep it all (every word, late)

Prints each word on stdout as `[SECONDS] WORD`. When the RTMP server closes
the connection or cannot be reached, the error is printed with the URL and
the output is connected again after 1 s, then 2, 4 and 8 s; the
transcription goes on meanwhile, and the captions of that time are lost to
the stream only.";

/// The caption frame rate, and so the video's.
const FRAMERATE: &str = "30000/1001";
/// The first wait before connecting again, doubled per failure up to
/// `MAX_RETRY`.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const MAX_RETRY: Duration = Duration::from_secs(8);
/// An output that ran this long before failing starts its backoff again.
const HEALTHY: Duration = Duration::from_secs(10);

fn main() {
    let args = common::Args::parse(USAGE, &[]);
    let url = args
        .value("url")
        .unwrap_or_else(|| common::fail(USAGE, "--url is required"));
    if !url.starts_with("rtmp://") && !url.starts_with("rtmps://") {
        common::fail(USAGE, "--url must be rtmp://HOST/APP/KEY or rtmps://...");
    }
    let overload = common::overload(&args, USAGE);
    let model = common::model_path(args.value("model"));
    let audio = Audio::from_args(&args, USAGE);
    common::init();
    let capture = common::launch(
        USAGE,
        &capture_line(
            &audio,
            &model,
            args.number("threads", 0u32, USAGE),
            overload,
        ),
    );
    if matches!(audio, Audio::File(_)) {
        common::end_video_with_audio(capture.upcast_ref());
    }
    let main_loop = glib::MainLoop::new(None, false);
    let relay = Relay::new(url, &capture, main_loop.clone());
    let _capture_watch = watch_capture(&capture, &relay, &main_loop);
    relay.connect();
    if capture.set_state(gst::State::Playing).is_err() {
        // The bus has the reason: its watch (of higher priority than an
        // idle source) prints it first.
        relay.failed.store(true, Ordering::SeqCst);
        let main_loop = main_loop.clone();
        glib::idle_add_once(move || main_loop.quit());
    }
    main_loop.run();
    let _ = capture.set_state(gst::State::Null);
    relay.stop();
    eprintln!(
        "transcribed {} words; the RTMP output failed {} times",
        relay.words.load(Ordering::SeqCst),
        relay.failures.load(Ordering::SeqCst)
    );
    if relay.failed.load(Ordering::SeqCst) {
        std::process::exit(1);
    }
}

/// The live RTMP line of docs/streaming.md up to flvmux, ending in an
/// appsink that the relay takes the FLV from. With a file, the appsink's clock keeps it to
/// real time, as rtmp2sink would.
fn capture_line(
    audio: &Audio,
    model: &std::path::Path,
    threads: u32,
    overload: Option<&str>,
) -> String {
    let (source, video, live) = match audio {
        Audio::File(path) => (
            format!("filesrc location=\"{path}\" ! decodebin"),
            "videotestsrc pattern=smpte",
            "",
        ),
        Audio::Live(source) => (
            source.to_string(),
            "videotestsrc pattern=smpte is-live=true",
            " latency=2000000000",
        ),
    };
    format!(
        "{source} ! audioconvert ! audioresample ! tee name=audio \
         audio. ! queue ! voxtralrttranscriber model-path=\"{model}\" threads={threads}{overload} post-messages=true ! \
           closedcaption/x-cea-708,format=cc_data,framerate={FRAMERATE} ! queue ! cc.caption \
         {video} name=video ! video/x-raw,width=640,height=360,framerate={FRAMERATE} ! queue ! \
           cccombiner name=cc ! x264enc name=encoder tune=zerolatency key-int-max=60 ! h264parse ! queue ! mux. \
         audio. ! queue max-size-time=3000000000 ! audioconvert ! audioresample ! \
           audio/x-raw,rate=48000,channels=2 ! voaacenc bitrate=128000 ! aacparse ! queue ! mux. \
         flvmux name=mux streamable=true{live} ! appsink name=flv sync=true emit-signals=true",
        model = model.display(),
        overload = common::overload_property(overload),
    )
}

/// The RTMP output: built, fed, and built again after an error.
struct Relay {
    url: String,
    encoder: gst::Element,
    main_loop: glib::MainLoop,
    output: Mutex<Option<Output>>,
    retry: Mutex<Duration>,
    /// The capture pipeline has ended: the output ends after it.
    ended: AtomicBool,
    /// The capture pipeline failed: the example exits with 1.
    failed: AtomicBool,
    words: AtomicU32,
    failures: AtomicU32,
}

/// One connection's pipeline: `appsrc ! rtmp2sink`.
struct Output {
    pipeline: gst::Pipeline,
    appsrc: gst::Element,
    started: Instant,
    _watch: gst::bus::BusWatchGuard,
}

impl Relay {
    fn new(url: String, capture: &gst::Pipeline, main_loop: glib::MainLoop) -> Arc<Relay> {
        let relay = Arc::new(Relay {
            url,
            encoder: capture
                .by_name("encoder")
                .expect("the capture line names its encoder"),
            main_loop,
            output: Mutex::new(None),
            retry: Mutex::new(FIRST_RETRY),
            ended: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            words: AtomicU32::new(0),
            failures: AtomicU32::new(0),
        });
        let appsink = capture
            .by_name("flv")
            .expect("the capture line ends in an appsink named flv");
        let feeding = relay.clone();
        appsink.connect("new-sample", false, move |values| {
            let sink = values[0].get::<gst::Element>().expect("appsink");
            if let Some(sample) = sink.emit_by_name::<Option<gst::Sample>>("pull-sample", &[]) {
                feeding.forward(&sample);
            }
            Some(gst::FlowReturn::Ok.to_value())
        });
        let ending = relay.clone();
        appsink.connect("eos", false, move |_| {
            ending.end();
            None
        });
        relay
    }

    /// Builds an output pipeline and starts it connecting.
    fn connect(self: &Arc<Self>) {
        let line = format!(
            "appsrc name=src format=time max-time=2000000000 leaky-type=downstream ! \
             rtmp2sink name=rtmp sync=false location=\"{}\"",
            self.url
        );
        let pipeline = gst::parse::launch(&line)
            .expect("the output line is valid")
            .downcast::<gst::Pipeline>()
            .expect("a launch line with several elements is a pipeline");
        let appsrc = pipeline.by_name("src").expect("the output line has src");
        let watching = Arc::downgrade(self);
        let watch = pipeline
            .bus()
            .expect("pipelines have a bus")
            .add_watch(move |_, message| {
                if let Some(relay) = watching.upgrade() {
                    relay.on_output_message(message);
                }
                glib::ControlFlow::Continue
            })
            .expect("a new bus has no watch");
        eprintln!("rtmp: connecting to {}", self.url);
        let _ = pipeline.set_state(gst::State::Playing);
        *self.output.lock().unwrap() = Some(Output {
            pipeline,
            appsrc,
            started: Instant::now(),
            _watch: watch,
        });
        // The new connection's viewers can decode from its first frames.
        self.request_keyframe();
    }

    /// Hands a sample of FLV to the output, if one is up; the output takes
    /// the caps (with the stream header) from the sample.
    fn forward(&self, sample: &gst::Sample) {
        if let Some(output) = self.output.lock().unwrap().as_ref() {
            let _ = output
                .appsrc
                .emit_by_name::<gst::FlowReturn>("push-sample", &[sample]);
        }
    }

    fn on_output_message(self: &Arc<Self>, message: &gst::Message) {
        match message.view() {
            gst::MessageView::Error(e) => self.on_output_error(e),
            gst::MessageView::Eos(_) if self.ended.load(Ordering::SeqCst) => {
                self.main_loop.quit();
            }
            _ => {}
        }
    }

    /// Drops the failed output and schedules the next one: the capture
    /// pipeline, and so the transcriber, never sees the error.
    fn on_output_error(self: &Arc<Self>, error: &gst::message::Error) {
        let Some(failed) = self.output.lock().unwrap().take() else {
            return;
        };
        let _ = failed.pipeline.set_state(gst::State::Null);
        self.failures.fetch_add(1, Ordering::SeqCst);
        if self.ended.load(Ordering::SeqCst) {
            eprintln!(
                "rtmp: {} failed: {}; the input has ended",
                self.url,
                error.error()
            );
            self.main_loop.quit();
            return;
        }
        let delay = self.next_retry(failed.started.elapsed());
        eprintln!(
            "rtmp: {} failed: {}; connecting again in {} s",
            self.url,
            error.error(),
            delay.as_secs()
        );
        let relay = Arc::downgrade(self);
        glib::timeout_add_once(delay, move || {
            if let Some(relay) = relay.upgrade() {
                if !relay.ended.load(Ordering::SeqCst) {
                    relay.connect();
                }
            }
        });
    }

    /// 1 s, 2, 4, 8, 8, ...; back to 1 s after an output that ran well.
    fn next_retry(&self, ran: Duration) -> Duration {
        let mut retry = self.retry.lock().unwrap();
        if ran >= HEALTHY {
            *retry = FIRST_RETRY;
        }
        let delay = *retry;
        *retry = (delay * 2).min(MAX_RETRY);
        delay
    }

    /// Asks the encoder for a keyframe with its headers (an upstream
    /// force-key-unit event, which GstVideoEncoder handles).
    fn request_keyframe(&self) {
        let event = gst::event::CustomUpstream::new(
            gst::Structure::builder("GstForceKeyUnit")
                .field("all-headers", true)
                .field("count", 0u32)
                .build(),
        );
        if let Some(pad) = self.encoder.static_pad("src") {
            pad.send_event(event);
        }
    }

    /// The capture pipeline's EOS: the output gets it after its last data.
    fn end(&self) {
        self.ended.store(true, Ordering::SeqCst);
        match self.output.lock().unwrap().as_ref() {
            Some(output) => {
                let _ = output
                    .appsrc
                    .emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
            }
            None => self.main_loop.quit(),
        }
    }

    fn stop(&self) {
        if let Some(output) = self.output.lock().unwrap().take() {
            let _ = output.pipeline.set_state(gst::State::Null);
        }
    }

    fn on_word(&self, word: &gst::StructureRef) {
        let (Ok(text), Ok(pts)) = (word.get::<String>("text"), word.get::<u64>("pts")) else {
            return;
        };
        self.words.fetch_add(1, Ordering::SeqCst);
        println!("[{:.2}] {text}", pts as f64 / 1e9);
    }
}

/// The capture pipeline's bus: words, warnings, and its end or error.
fn watch_capture(
    capture: &gst::Pipeline,
    relay: &Arc<Relay>,
    main_loop: &glib::MainLoop,
) -> gst::bus::BusWatchGuard {
    let relay = relay.clone();
    let main_loop = main_loop.clone();
    capture
        .bus()
        .expect("pipelines have a bus")
        .add_watch(move |_, message| {
            match message.view() {
                gst::MessageView::Element(e) => {
                    if let Some(s) = e
                        .structure()
                        .filter(|s| s.name() == gstvoxtralrt::sink::MESSAGE_NAME)
                    {
                        relay.on_word(s);
                    }
                }
                gst::MessageView::Warning(w) => eprintln!("warning: {}", w.error()),
                gst::MessageView::Error(e) => {
                    eprintln!("error: {}", e.error());
                    relay.failed.store(true, Ordering::SeqCst);
                    main_loop.quit();
                }
                _ => {}
            }
            glib::ControlFlow::Continue
        })
        .expect("a new bus has no watch")
}
