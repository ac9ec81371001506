// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! An RTSP server whose H.264 video carries the transcript as CEA-608/708
//! closed captions (A/53 SEI), with the audio as Opus: any RTSP player that
//! decodes SEI captions shows them, with nothing but stock GStreamer 1.22
//! elements around the transcriber.

mod common;

use common::Audio;

use gst::prelude::*;
use gst_rtsp_server::prelude::*;

const USAGE: &str = "\
Serve video with live closed captions over RTSP.

usage: cargo run --example rtsp_captions -- [options]

  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE, fetched once into the
                     Hugging Face cache (default: $VOXTRAL_MODEL, else the
                     synthetic test model)
  --audio FILE       transcribe this file: each client gets its own session,
                     from the file's start to its end
  --source NAME      without --audio: mic (autoaudiosrc, the default) or test
                     (a live test tone); all clients share one live stream
  --video NAME       test (a test pattern, the default) or v4l2 (a camera)
  --port N           RTSP port (default 8554; 0 picks a free one)
  --address ADDR     address to listen on (default 127.0.0.1; 0.0.0.0 serves
                     the network)
  --mount PATH       the stream's path (default /captions)
  --threads N        CPU threads (default 0 = all)
  --overload MODE    skip (the default) or queue: when the model falls more
                     than its latency behind live audio (--source; a file
                     is never skipped), skip the oldest audio to stay live,
                     or keep it all (every word, late)

Prints `serving rtsp://ADDRESS:PORT/PATH` once clients can connect. The
captions are CEA-608 (CC1) and CEA-708 (service 1) in the H.264 SEI: VLC
shows them under Subtitle > Sub Track; see docs/streaming.md for ffplay and
ffmpeg.";

/// The caption frame rate: the video is converted to it, and the
/// transcriber writes one caption packet per frame of it.
const FRAMERATE: &str = "30000/1001";

/// Where the video comes from.
#[derive(Clone, Copy)]
enum Video {
    TestPattern,
    V4l2,
}

impl Video {
    /// The launch description; a live stream needs a live test pattern.
    fn source(self, live: bool) -> &'static str {
        match (self, live) {
            (Video::TestPattern, false) => "videotestsrc pattern=smpte",
            (Video::TestPattern, true) => "videotestsrc pattern=smpte is-live=true",
            (Video::V4l2, _) => "v4l2src ! videoconvert ! videoscale ! videorate",
        }
    }
}

struct Options {
    model: std::path::PathBuf,
    audio: Audio,
    video: Video,
    port: u16,
    address: String,
    mount: String,
    threads: u32,
    /// The transcriber's `overload`, if given.
    overload: Option<&'static str>,
}

fn main() {
    let options = parse_options();
    common::init();
    or_exit(check_model(&options));
    if let Audio::File(path) = &options.audio {
        or_exit(check_audio_file(path).map_err(|e| format!("{path}: {e}")));
    }
    let main_loop = gst::glib::MainLoop::new(None, false);
    let server = or_exit(serve(&options));
    let shown = match options.address.as_str() {
        // Reachable on the loopback address either way.
        "0.0.0.0" | "::" => "127.0.0.1",
        address => address,
    };
    println!(
        "serving rtsp://{shown}:{}{}",
        server.bound_port(),
        options.mount
    );
    main_loop.run();
}

fn or_exit<T>(result: Result<T, String>) -> T {
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    })
}

fn parse_options() -> Options {
    let args = common::Args::parse(USAGE, &[]);
    let overload = common::overload(&args, USAGE);
    let model = common::model_path(args.value("model"));
    let audio = Audio::from_args(&args, USAGE);
    let video = match args.value("video").as_deref() {
        None | Some("test") => Video::TestPattern,
        Some("v4l2") => Video::V4l2,
        Some(other) => common::fail(USAGE, &format!("unknown video {other}")),
    };
    let mount = args.value("mount").unwrap_or_else(|| "/captions".into());
    if !mount.starts_with('/') {
        common::fail(USAGE, "--mount must start with /");
    }
    Options {
        model,
        audio,
        video,
        port: args.number("port", 8554, USAGE),
        address: args.value("address").unwrap_or_else(|| "127.0.0.1".into()),
        mount,
        threads: args.number("threads", 0, USAGE),
        overload,
    }
}

/// Loads the model once before serving, so that a wrong path or a broken
/// file is reported here rather than to the first client as a failed
/// session. The instance goes back to the plugin's model pool, where a
/// session in the next 30 s finds it loaded.
fn check_model(options: &Options) -> Result<(), String> {
    let transcriber = gst::ElementFactory::make("voxtralrttranscriber")
        .property(
            "model-path",
            options.model.to_str().ok_or("a non-UTF-8 model path")?,
        )
        .property("threads", options.threads)
        .build()
        .map_err(|e| e.to_string())?;
    let pipeline = gst::Pipeline::new();
    pipeline.add(&transcriber).map_err(|e| e.to_string())?;
    let loaded = pipeline.set_state(gst::State::Ready);
    let error = first_error(&pipeline);
    let _ = pipeline.set_state(gst::State::Null);
    match (loaded, error) {
        (Ok(_), None) => Ok(()),
        (_, Some(e)) => Err(e),
        (Err(_), None) => Err(format!(
            "could not load the model {}",
            options.model.display()
        )),
    }
}

/// Prerolls the file through decodebin: a missing file, or one without
/// decodable audio, is an error before the server starts.
fn check_audio_file(path: &str) -> Result<(), String> {
    if !std::path::Path::new(path).is_file() {
        return Err("not a file".into());
    }
    let pipeline = gst::parse::launch(&format!(
        "filesrc location=\"{path}\" ! decodebin ! audioconvert ! fakesink"
    ))
    .map_err(|e| e.to_string())?
    .downcast::<gst::Pipeline>()
    .expect("a launch line with several elements is a pipeline");
    let _ = pipeline.set_state(gst::State::Paused);
    let bus = pipeline.bus().expect("pipelines have a bus");
    let outcome = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(30),
        &[gst::MessageType::AsyncDone, gst::MessageType::Error],
    );
    let _ = pipeline.set_state(gst::State::Null);
    match outcome.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::AsyncDone(_)) => Ok(()),
        Some(gst::MessageView::Error(e)) => Err(e.error().to_string()),
        _ => Err("no audio could be decoded within 30 s".into()),
    }
}

fn first_error(pipeline: &gst::Pipeline) -> Option<String> {
    let bus = pipeline.bus()?;
    let msg = bus.pop_filtered(&[gst::MessageType::Error])?;
    match msg.view() {
        gst::MessageView::Error(e) => Some(e.error().to_string()),
        _ => None,
    }
}

/// Starts the RTSP server on the default main context.
fn serve(options: &Options) -> Result<gst_rtsp_server::RTSPServer, String> {
    let server = gst_rtsp_server::RTSPServer::new();
    server.set_address(&options.address);
    server.set_service(&options.port.to_string());
    let factory = gst_rtsp_server::RTSPMediaFactory::new();
    factory.set_launch(&format!("( {} )", launch_line(options)));
    match &options.audio {
        // A pipeline per session, so that each client hears the file from
        // its start; the video ends with the audio.
        Audio::File(_) => {
            factory.set_shared(false);
            factory
                .connect_media_configure(|_, media| common::end_video_with_audio(&media.element()));
        }
        Audio::Live(_) => {
            factory.set_shared(true);
            factory.connect_media_configure(|_, media| refuse_seeks(&media.element()));
        }
    }
    server
        .mount_points()
        .expect("a new server has mount points")
        .add_factory(&options.mount, factory);
    server.attach(None).map_err(|_| {
        format!(
            "could not listen on {}:{} (in use, or not an address of this machine)",
            options.address, options.port
        )
    })?;
    Ok(server)
}

/// The media pipeline: the audio into the transcriber, whose CEA-708
/// cc_data goes with each video frame through cccombiner into x264enc (the
/// only caption format it writes as SEI), then RTP; the same audio as
/// Opus.
fn launch_line(options: &Options) -> String {
    let audio = match &options.audio {
        Audio::File(path) => format!("filesrc location=\"{path}\" ! decodebin"),
        Audio::Live(source) => source.to_string(),
    };
    let video = options
        .video
        .source(matches!(options.audio, Audio::Live(_)));
    format!(
        "{audio} ! audioconvert ! audioresample ! tee name=audio \
         audio. ! queue ! voxtralrttranscriber model-path=\"{model}\" threads={threads}{overload} ! \
           closedcaption/x-cea-708,format=cc_data,framerate={FRAMERATE} ! queue ! cc.caption \
         {video} name=video ! video/x-raw,width=640,height=360,framerate={FRAMERATE} ! queue ! \
           cccombiner name=cc ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! \
           h264parse ! rtph264pay name=pay0 pt=96 config-interval=-1 \
         audio. ! queue ! audioconvert ! audioresample ! opusenc ! rtpopuspay name=pay1 pt=97",
        model = options.model.display(),
        threads = options.threads,
        overload = common::overload_property(options.overload),
    )
}

/// Says the shared live stream cannot seek. Players ask for `Range:
/// npt=0-` in PLAY; on a seekable media gst-rtsp-server answers that with a
/// flushing seek of the one pipeline every client shares: the clients
/// already watching lose a second or two of stream, the transcriber starts
/// over, and a PLAY that meets the stream still re-prerolling fails.
/// Not seekable, the server plays on from where the stream is.
fn refuse_seeks(media_pipeline: &gst::Element) {
    let bin = media_pipeline
        .downcast_ref::<gst::Bin>()
        .expect("a media pipeline is a bin");
    for payloader in ["pay0", "pay1"] {
        let pad = bin
            .by_name(payloader)
            .and_then(|p| p.static_pad("src"))
            .expect("the launch line names its payloaders pay0 and pay1");
        pad.add_probe(gst::PadProbeType::QUERY_UPSTREAM, |_, info| {
            let Some(gst::QueryViewMut::Seeking(seeking)) = info.query_mut().map(|q| q.view_mut())
            else {
                return gst::PadProbeReturn::Ok;
            };
            seeking.set(false, gst::ClockTime::ZERO, gst::ClockTime::NONE);
            gst::PadProbeReturn::Handled
        });
    }
}
