// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The README's RTMP lines (live streaming platforms): the transcriber's
//! captions in H.264 SEI, in FLV, published by `rtmp2sink` to a real RTMP
//! server on 127.0.0.1 (nginx with Debian's libnginx-mod-rtmp, its config
//! written here), and read back by ffmpeg playing `rtmp://127.0.0.1/...`:
//! CEA-608 CC1 with ffmpeg's subcc, CEA-708 service 1 with ccextractor and
//! cea708-types.
//!
//! The lines run as the README gives them, with the timing fixture (one
//! word "x" per 80 ms frame of 1 kHz tone, tests/fixtures/README-tone.md)
//! for the sample and the test server's port.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::cc708::services_in_ts;
use common::nginx::{free_port, Nginx};
use common::readback::{self, assert_shown_in_time, Recording, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_frames, tone_model};

/// The longest one step may take on a loaded machine.
const STEP: Duration = Duration::from_secs(120);
const README_URL: &str = "rtmp://127.0.0.1/live/KEY";

fn readme_rtmp_lines() -> Vec<String> {
    let lines: Vec<String> = include_str!("../README.md")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gst-launch-1.0 ") && l.contains("rtmp2sink"))
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 2, "the README's RTMP lines: from a file, live");
    lines
}

/// nginx's RTMP module serving application `live` on `port`.
fn rtmp_server(port: u16) -> Nginx {
    let module = "/usr/lib/nginx/modules/ngx_rtmp_module.so";
    assert!(
        std::path::Path::new(module).exists(),
        "{module} is missing (Debian package libnginx-mod-rtmp; scripts/setup installs it)"
    );
    let main = format!(
        "load_module {module};\n\
         rtmp {{ server {{ listen 127.0.0.1:{port}; chunk_size 4096; \
           application live {{ live on; record off; }} }} }}"
    );
    Nginx::start("rtmp", &main, "", port)
}

/// ffmpeg playing the stream, recording it into `ts` until it ends. The
/// server keeps a player waiting for the next publisher (so that it can
/// join before the first one), so the player takes 15 s without data as the
/// end (longer than the publisher takes to start on a loaded machine).
fn player(url: &str, ts: &std::path::Path) -> Recording {
    Recording::start(&["-rw_timeout", "15000000", "-i", url], ts)
}

/// Runs a README line (a publisher) to its end.
fn publish(line: &str, dir: &std::path::Path) -> Output {
    Command::new("timeout")
        .arg(STEP.as_secs().to_string())
        .args(["sh", "-c", line])
        .current_dir(dir)
        .env("MODEL", tone_model())
        .env("GST_PLUGIN_PATH", common::plugin_dir())
        .output()
        .unwrap()
}

#[test]
fn the_readme_rtmp_line_delivers_every_word_as_cc1_and_708_service_1_through_nginx_rtmp() {
    let dir = common::scratch_dir("rtmp");
    let wav = dir.join("tone.wav");
    common::write_wav(&wav, &tone_audio(66, &tone_frames()));
    let port = free_port();
    let _server = rtmp_server(port);
    let url = format!("rtmp://127.0.0.1:{port}/live/test");
    let line = &readme_rtmp_lines()[0];
    for part in [
        "examples/data/sample.wav",
        README_URL,
        "$MODEL",
        "key-int-max",
    ] {
        assert!(line.contains(part), "{part} is not in {line}");
    }
    let line = line
        .replace("examples/data/sample.wav", &wav.display().to_string())
        .replace(README_URL, &url);

    // nginx-rtmp lets a player wait for a stream not yet published.
    let ts = dir.join("received.ts");
    let recording = player(&url, &ts);
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let sent = publish(&line, &dir);
    let log = common::output_text(&sent);
    assert!(sent.status.success(), "{line}\n{log}");
    assert!(!log.contains("ERROR"), "{line}\n{log}");
    let sent_in = started.elapsed();
    // The player ends when the publisher's stream ends.
    recording.assert_ends_well(STEP, "ffmpeg still playing after the publisher ended", "");

    let shown = readback::x_times(&ts);
    gst::init().unwrap();
    let worst = assert_shown_in_time("ffmpeg over RTMP", &shown, ROLL_UP_BOUND_MS);
    let services = services_in_ts(&ts);
    // A new row is no space in the decoded text: count the words' letters.
    let words = |n: u8| services.get(&n).map_or(0, |t| t.matches('x').count());
    assert_eq!(words(1), tone_frames().len(), "708: {services:?}");
    eprintln!(
        "RTMP: CC1 worst {worst} ms after its place; 708 service 1 all {} words; published in {:.1} s",
        words(1),
        sent_in.as_secs_f64()
    );
}

#[test]
fn the_live_rtmp_line_publishes_and_a_server_going_away_is_an_error_from_rtmp2sink() {
    let dir = common::scratch_dir("rtmp-live");
    let port = free_port();
    let url = format!("rtmp://127.0.0.1:{port}/live/test");
    let line = readme_rtmp_lines()[1].replace(README_URL, &url);
    assert!(line.contains("is-live=true"), "{line}");

    // Published to its end: the player gets video with caption data.
    let server = rtmp_server(port);
    let ts = dir.join("live.ts");
    let recording = player(&url, &ts);
    std::thread::sleep(Duration::from_millis(500));
    let sent = publish(&line, &dir);
    let log = common::output_text(&sent);
    assert!(sent.status.success(), "{line}\n{log}");
    recording.assert_ends_well(STEP, "ffmpeg still playing after the publisher ended", "");
    assert!(std::fs::metadata(&ts).unwrap().len() > 100_000);

    // The server goes away 3 s into the stream: an ERROR from rtmp2sink
    // (GStreamer 1.22 does not put the URL in its text: an application
    // finds it as the message source's `location`).
    let publisher = std::thread::spawn({
        let (line, dir) = (
            line.replace("num-buffers=300", "num-buffers=3000"),
            dir.clone(),
        );
        move || publish(&line, &dir)
    });
    std::thread::sleep(Duration::from_secs(3));
    drop(server);
    let sent = publisher.join().unwrap();
    let log = common::output_text(&sent);
    assert!(!sent.status.success(), "{log}");
    let error = log
        .lines()
        .find(|l| l.contains("ERROR"))
        .unwrap_or_else(|| panic!("no ERROR: {log}"));
    assert!(
        error.contains("GstRtmp2Sink:rtmp2sink0") && error.contains("connection closed"),
        "{error}"
    );
    eprintln!("RTMP server gone: {error}");
}
