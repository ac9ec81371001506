// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Transcribes an audio or video file to SRT, WebVTT, plain text or JSON
//! lines, showing progress and the real-time factor as it goes.

mod common;

use gst::prelude::*;

const USAGE: &str = "\
Transcribe a media file with Voxtral Realtime.

usage: cargo run --example transcribe_file -- INPUT OUTPUT [options]

  INPUT              any file GStreamer can decode (wav, mp3, flac, mp4, mkv, ...)
  OUTPUT             the transcript: .srt, .vtt, .jsonl or anything else for text
  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE, fetched once into the
                     Hugging Face cache (default: $VOXTRAL_MODEL, else the
                     synthetic test model)
  --threads N        CPU threads (default 0 = all)
  --delay MS         transcription delay, 80..1200 in steps of 80, or 2400 (default 480)
  --output MODE      words (one cue per word) or lines (default lines)
  --backend NAME     auto, cpu, cuda or vulkan (default auto)";

fn main() {
    let args = common::Args::parse(USAGE, &[]);
    let [input, output] = args.positional.as_slice() else {
        common::fail(USAGE, "INPUT and OUTPUT are needed");
    };
    let model = common::model_path(args.value("model"));
    let input = std::path::absolute(input).unwrap_or_else(|e| common::fail(USAGE, &e.to_string()));
    if !input.is_file() {
        common::fail(USAGE, &format!("{} is not a file", input.display()));
    }
    common::init();

    let pipeline = gst::Pipeline::new();
    let src = gst::ElementFactory::make("filesrc")
        .property("location", input.to_str().expect("a UTF-8 path"))
        .build()
        .unwrap();
    let decode = gst::ElementFactory::make("decodebin").build().unwrap();
    let convert = gst::ElementFactory::make("audioconvert").build().unwrap();
    let resample = gst::ElementFactory::make("audioresample").build().unwrap();
    let sink = gst::ElementFactory::make("voxtralrtsink")
        .property("model-path", model.to_str().expect("a UTF-8 path"))
        .property("location", output.as_str())
        .property("threads", args.number("threads", 0u32, USAGE))
        .property("delay", args.number("delay", 480u32, USAGE))
        .property("post-messages", false)
        .property_from_str(
            "output",
            &args.value("output").unwrap_or_else(|| "lines".into()),
        )
        .property_from_str(
            "backend",
            &args.value("backend").unwrap_or_else(|| "auto".into()),
        )
        .build()
        .unwrap();
    pipeline
        .add_many([&src, &decode, &convert, &resample, &sink])
        .unwrap();
    src.link(&decode).unwrap();
    gst::Element::link_many([&convert, &resample, &sink]).unwrap();
    let convert_weak = convert.downgrade();
    decode.connect_pad_added(move |_, pad| {
        let Some(convert) = convert_weak.upgrade() else {
            return;
        };
        let is_audio = pad
            .current_caps()
            .and_then(|c| c.structure(0).map(|s| s.name().starts_with("audio/")))
            .unwrap_or(false);
        let sinkpad = convert.static_pad("sink").unwrap();
        if is_audio && !sinkpad.is_linked() {
            let _ = pad.link(&sinkpad);
        }
    });

    let started = std::time::Instant::now();
    let result = common::run(&pipeline, |p| show_progress(p, &sink, started));
    eprintln!();
    match result {
        Ok(()) => {
            let stats = sink.property::<gst::Structure>("stats");
            eprintln!(
                "wrote {output}: {} cues, {:.1} s of audio, real-time factor {:.3}",
                stats.get::<u64>("words").unwrap_or(0),
                stats.get::<u64>("audio-transcribed").unwrap_or(0) as f64 / 1e9,
                stats.get::<f64>("real-time-factor").unwrap_or(0.0)
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

fn show_progress(pipeline: &gst::Pipeline, sink: &gst::Element, started: std::time::Instant) {
    let stats = sink.property::<gst::Structure>("stats");
    let done = stats.get::<u64>("audio-transcribed").unwrap_or(0) as f64 / 1e9;
    let total = pipeline
        .query_duration::<gst::ClockTime>()
        .map(|d| format!("{:.1} s", d.seconds_f64()))
        .unwrap_or_else(|| "?".into());
    eprint!(
        "\r{done:.1} s / {total} transcribed, real-time factor {:.3}, {:.0} s elapsed   ",
        stats.get::<f64>("real-time-factor").unwrap_or(0.0),
        started.elapsed().as_secs_f64()
    );
}
