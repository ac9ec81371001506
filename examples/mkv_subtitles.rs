// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Writes a Matroska file with the audio of an input file and a subtitle
//! track transcribed from it.

mod common;

const USAGE: &str = "\
Mux audio and a transcribed subtitle track into Matroska.

usage: cargo run --example mkv_subtitles -- INPUT OUTPUT.mkv [options]

  INPUT              any file GStreamer can decode with an audio stream
  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE, fetched once into the
                     Hugging Face cache (default: $VOXTRAL_MODEL, else the
                     synthetic test model)
  --threads N        CPU threads (default 0 = all)";

fn main() {
    let args = common::Args::parse(USAGE, &[]);
    let [input, output] = args.positional.as_slice() else {
        common::fail(USAGE, "INPUT and OUTPUT are needed");
    };
    let model = common::model_path(args.value("model"));
    if !std::path::Path::new(input).is_file() {
        common::fail(USAGE, &format!("{input} is not a file"));
    }
    common::init();
    let line = format!(
        "filesrc location=\"{input}\" ! decodebin ! audioconvert ! audioresample ! \
         audio/x-raw,rate=16000,channels=1 ! tee name=t \
         t. ! queue ! voxtralrttranscriber model-path=\"{}\" threads={} output=lines ! queue ! mux.subtitle_%u \
         t. ! queue ! opusenc ! mux.audio_%u \
         matroskamux name=mux ! filesink location=\"{output}\"",
        model.display(),
        args.number("threads", 0u32, USAGE)
    );
    let pipeline = common::launch(USAGE, &line);
    match common::run(&pipeline, |_| {}) {
        Ok(()) => eprintln!("wrote {output}"),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
