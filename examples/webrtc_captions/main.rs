// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Live captions over WebRTC: one transcription, captions twice. Native
//! receivers get CEA-608/708 in the H.264 video (A/53 SEI); browsers, which
//! ignore those, get each cue on a data channel and the page draws it over
//! the video. One port serves the page, the signalling WebSocket, and from
//! there a webrtcbin per viewer.
//!
//! media.rs: the shared pipeline (capture, transcriber, encoders, tees);
//! viewer.rs: a viewer's webrtcbin and its media timeline;
//! signalling.rs: the WebSocket protocol; page.html: the page.

#[path = "../common/mod.rs"]
mod common;
mod media;
mod signalling;
mod viewer;

use std::sync::Arc;

use gst::prelude::*;

use media::{AudioSource, Config, Media};

const USAGE: &str = "\
Live captions over WebRTC with Voxtral Realtime: H.264 with caption SEI (or
VP8), Opus audio and a `captions` data channel, per viewer.

usage: cargo run --example webrtc_captions -- [options]

  --model MODEL      Voxtral Mini 4B Realtime GGUF: a path, a preset (q4_k_m,
                     q8_0, ...) or hf://OWNER/REPO/FILE (default:
                     $VOXTRAL_MODEL, else the synthetic test model)
  --audio FILE       speech from a file, played once from when the first
                     viewer arrives, then silence
  --source NAME      test (a live test tone, the default) or mic
  --port N           HTTP and signalling port (default 8080; 0 picks one)
  --bind ADDR        address to listen on (default 127.0.0.1)
  --stun URI         a STUN server, stun://HOST:PORT (default: none, host
                     candidates only)
  --turn URI         a TURN server, turn://USER:PASSWORD@HOST:PORT
  --threads N        CPU threads for the model (default 0 = all)
  --speaker NAME     who speaks: the captions mark them (>> in CEA-608/708)
                     and the page names them
  --overload MODE    skip (the default) or queue: when the model falls more
                     than its latency behind the live audio, skip the oldest
                     audio to stay live, or keep it all (every word, late)
  --latency MS       how late a word may come and still be captioned in the
                     video, which waits as long (the transcriber's latency;
                     default 1500)

Prints `open http://ADDR:PORT/` when ready; open it in a browser.";

const PAGE: &str = include_str!("page.html");

fn main() {
    let args = common::Args::parse(USAGE, &[]);
    let config = config_from(&args);
    let port: u16 = args.number("port", 8080, USAGE);
    let bind = args.value("bind").unwrap_or_else(|| "127.0.0.1".into());
    common::init();

    let media = Media::new(config).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    });
    let server = tiny_http::Server::http((bind.as_str(), port)).unwrap_or_else(|e| {
        eprintln!("error: cannot listen on {bind}:{port}: {e}");
        std::process::exit(1);
    });
    let port = server
        .server_addr()
        .to_ip()
        .map_or(port, |address| address.port());

    let bus_media = media.clone();
    std::thread::spawn(move || {
        let result = bus_media.run_bus();
        let _ = bus_media.pipeline.set_state(gst::State::Null);
        if let Err(e) = result {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        std::process::exit(0);
    });

    println!("open http://{bind}:{port}/");
    serve_http(&server, &media);
}

fn config_from(args: &common::Args) -> Config {
    let overload = common::overload(args, USAGE);
    let source = match (args.value("audio"), args.value("source").as_deref()) {
        (Some(_), Some(_)) => common::fail(USAGE, "--audio and --source exclude each other"),
        (Some(file), None) => {
            let path = std::path::PathBuf::from(file);
            if !path.is_file() {
                common::fail(USAGE, &format!("{} is not a file", path.display()));
            }
            // decodebin's filesrc wants a path that does not depend on
            // the working directory of whoever reads the log.
            AudioSource::File(path.canonicalize().unwrap_or(path))
        }
        (None, None | Some("test")) => AudioSource::Test,
        (None, Some("mic")) => AudioSource::Mic,
        (None, Some(other)) => common::fail(USAGE, &format!("unknown source {other}")),
    };
    let check_scheme = |name: &str, schemes: &[&str]| {
        let value = args.value(name);
        if let Some(v) = &value {
            if !schemes.iter().any(|s| v.starts_with(s)) {
                common::fail(USAGE, &format!("--{name} takes {}", schemes.join(" or ")));
            }
        }
        value
    };
    Config {
        model: common::model_path(args.value("model")),
        source,
        threads: args.number("threads", 0, USAGE),
        stun: check_scheme("stun", &["stun://"]),
        turn: check_scheme("turn", &["turn://", "turns://"]),
        speaker: args.value("speaker"),
        overload,
        latency: args
            .value("latency")
            .map(|_| args.number("latency", 0u32, USAGE)),
    }
}

/// Serves the page and hands WebSocket upgrades to a thread each.
fn serve_http(server: &tiny_http::Server, media: &Arc<Media>) {
    for request in server.incoming_requests() {
        let path = request.url().split('?').next().unwrap_or("").to_owned();
        match (request.method(), path.as_str()) {
            (tiny_http::Method::Get, "/ws") if signalling::is_upgrade(&request) => {
                let media = media.clone();
                std::thread::spawn(move || signalling::serve(request, media));
            }
            (tiny_http::Method::Get, "/" | "/index.html") => {
                let response = tiny_http::Response::from_string(PAGE).with_header(
                    tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8")
                        .expect("a valid header"),
                );
                let _ = request.respond(response);
            }
            _ => {
                let _ = request.respond(tiny_http::Response::empty(404));
            }
        }
    }
}
