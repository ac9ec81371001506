// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Live captions: speech from a live audio source, burnt into video as it is
//! recognised.

mod common;

use gst::prelude::*;

const USAGE: &str = "\
Live captions over video with Voxtral Realtime.

usage: cargo run --example live_captions -- [options]

  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE, fetched once into the
                     Hugging Face cache (default: $VOXTRAL_MODEL, else the
                     synthetic test model)
  --source NAME      mic (autoaudiosrc, the default) or test (a live test tone,
                     for machines without a microphone)
  --seconds N        stop after N seconds (default: run until interrupted)
  --headless         render the video into a fakesink instead of a window
  --threads N        CPU threads (default 0 = all)
  --overload MODE    skip (the default) or queue: when the model falls more
                     than its latency behind the live audio, skip the oldest
                     audio to stay live, or keep it all (every word, late)";

fn main() {
    let args = common::Args::parse(USAGE, &["headless"]);
    let overload = common::overload_property(common::overload(&args, USAGE));
    let model = common::model_path(args.value("model"));
    let seconds: u64 = args.number("seconds", 0, USAGE);
    let source = match args.value("source").as_deref() {
        None | Some("mic") => "autoaudiosrc".to_owned(),
        Some("test") => "audiotestsrc is-live=true wave=sine".to_owned(),
        Some(other) => common::fail(USAGE, &format!("unknown source {other}")),
    };
    let video_sink = if args.flag("headless") {
        "fakesink sync=true"
    } else {
        "autovideosink"
    };
    common::init();
    let line = format!(
        "{source} ! audioconvert ! audioresample ! \
         voxtralrttranscriber model-path=\"{}\" threads={}{overload} output=lines ! queue ! ov.text_sink \
         videotestsrc is-live=true pattern=smpte ! video/x-raw,width=640,height=360,framerate=25/1 ! \
         textoverlay name=ov valignment=bottom font-desc=\"Sans 20\" ! videoconvert ! {video_sink}",
        model.display(),
        args.number("threads", 0u32, USAGE)
    );
    let pipeline = common::launch(USAGE, &line);
    let started = std::time::Instant::now();
    let result = common::run(&pipeline, |p| {
        if seconds > 0 && started.elapsed().as_secs() >= seconds {
            p.send_event(gst::event::Eos::new());
        }
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
