// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The RTMP lines of docs/streaming.md ("RTMP ingest"): the transcriber's
//! captions in H.264 SEI, in FLV, published by `rtmp2sink` to a real RTMP
//! server on 127.0.0.1 (nginx with Debian's libnginx-mod-rtmp, its config
//! written here), and read back by ffmpeg playing `rtmp://127.0.0.1/...`:
//! CEA-608 CC1 with ffmpeg's subcc, CEA-708 service 1 with ccextractor and
//! cea708-types.
//!
//! The lines run as the guide gives them, with the timing fixture (one
//! word "x" per 80 ms frame of 1 kHz tone, tests/fixtures/README-tone.md)
//! for the sample and the test server's port.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::cc708::services_in_ts;
use common::nginx::Nginx;
use common::process::{self, Guarded};
use common::readback::{self, assert_shown_in_time, Recording, INTERVAL_MS, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_frames, tone_model, truth};

/// The longest one step may take on a loaded machine.
const STEP: Duration = Duration::from_secs(120);
const README_URL: &str = "rtmp://127.0.0.1/live/KEY";

fn readme_rtmp_lines() -> Vec<common::DocLine> {
    let lines = common::doc_launch_lines("rtmp2sink");
    assert_eq!(
        lines.len(),
        2,
        "the RTMP lines of docs/streaming.md: from a file, live: {lines:?}"
    );
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
/// end (longer than the publisher takes to start on a loaded machine). The
/// plugin is built first: inside the publisher's start, `cargo build`
/// (which builds the cdylib anew after any change to src/: 19 s) made the
/// player give up beside two busy loops in 5 runs of 5 (nginx's log: play
/// at :13, publish at :28).
fn player(url: &str, ts: &std::path::Path) -> Recording {
    common::plugin_dir();
    Recording::start(&["-rw_timeout", "15000000", "-i", url], ts)
}

/// Runs one of those lines (a publisher) to its end.
fn publish(line: &str, dir: &std::path::Path) -> Output {
    common::readme_line_output(line, dir, tone_model())
}

#[test]
fn the_readme_rtmp_line_delivers_every_word_as_cc1_and_708_service_1_through_nginx_rtmp() {
    let dir = common::scratch_dir("rtmp");
    let wav = dir.join("tone.wav");
    common::write_wav(&wav, &tone_audio(66, &tone_frames()));
    let port = process::unused_tcp_port();
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
    let port = process::unused_tcp_port();
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

/// One tone word a second for 24 s: words before, during and after an
/// outage of the RTMP server.
fn a_word_a_second() -> Vec<usize> {
    (16..300).step_by(12).collect()
}

/// `[SECONDS] WORD`, the example's stdout, as seconds.
fn word_time(line: &str) -> Option<f64> {
    line.strip_prefix('[')?.split(']').next()?.parse().ok()
}

#[test]
fn the_rtmp_example_keeps_transcribing_while_the_server_is_away_and_publishes_again() {
    let dir = common::scratch_dir("rtmp-restart");
    let frames = a_word_a_second();
    let wav = dir.join("words.wav");
    common::write_wav(&wav, &tone_audio(320, &frames));
    let port = process::unused_tcp_port();
    let url = format!("rtmp://127.0.0.1:{port}/live/test");
    let server = rtmp_server(port);
    let log_path = dir.join("example.log");
    let mut example = Guarded::spawn(
        Command::new(process::examples_dir().join("rtmp_captions"))
            .args(["--url", &url, "--threads", "1", "--model"])
            .arg(tone_model())
            .arg("--audio")
            .arg(&wav)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log_path).unwrap()),
        "examples/rtmp_captions",
    );
    let lines = process::stdout_lines(&mut example);
    let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
    let mut words = Vec::new();

    // The server goes away 5 s into the stream, and is back 2 s after the
    // example noticed; a player waits for the stream from then on.
    while words.last().is_none_or(|&t: &f64| t < 5.0) {
        let line = lines
            .recv_timeout(STEP)
            .unwrap_or_else(|_| panic!("no word for {STEP:?}:\n{}", log()));
        words.extend(word_time(&line));
    }
    drop(server);
    let transcribed_before = words.len();
    assert!(
        process::wait_until(STEP, || log().contains(" failed: ")),
        "no failure reported:\n{}",
        log()
    );
    std::thread::sleep(Duration::from_secs(2));
    let _server = rtmp_server(port);
    let ts = dir.join("after.ts");
    let recording = player(&url, &ts);

    let status = example
        .wait_for(STEP)
        .unwrap_or_else(|| panic!("the example still runs after {STEP:?}:\n{}", log()));
    words.extend(lines.try_iter().filter_map(|l| word_time(&l)));
    let log = log();
    assert!(status.success(), "{status}\n{log}");
    recording.assert_ends_well(STEP, "ffmpeg still playing after the example ended", &log);

    // The transcriber never stopped: every word, at its place.
    assert_eq!(words.len(), frames.len(), "{words:?}\n{log}");
    for (&t, &f) in words.iter().zip(&frames) {
        let place = truth(f) as f64 / 1e9;
        assert!(
            (t - place).abs() <= 0.08,
            "word of frame {f} at {t} s, not {place} s"
        );
    }
    // The error names the server, and the output was connected again.
    let failure = log.lines().find(|l| l.contains(" failed: ")).unwrap();
    assert!(
        failure.contains(&url) && failure.contains("connecting again in 1 s"),
        "{failure}"
    );
    assert!(log.matches("rtmp: connecting to ").count() >= 2, "{log}");

    // The new connection carries the captions of its time: the last words,
    // spaced as in the audio. Those of the outage are lost to the stream:
    // none transcribed before the server went comes again (one may still
    // have been on its way through the muxer), and the player, waiting from
    // the restart 2 s after, gets the stream after at most 1 + 2 + 4 s of
    // backoff and 2 s to a keyframe.
    let shown = readback::x_times(&ts);
    let from = |seconds: u64| {
        frames
            .iter()
            .filter(|&&f| truth(f) >= seconds * 1_000_000_000)
            .count()
    };
    assert!(
        (from(18)..=frames.len() - transcribed_before + 1).contains(&shown.len()),
        "{} words shown after the outage ({transcribed_before} transcribed before it): \
         {shown:?}\n{log}",
        shown.len()
    );
    let last = &frames[frames.len() - shown.len()..];
    for (i, (&t, &f)) in shown.iter().zip(last).enumerate() {
        let expected = (truth(f) - truth(last[0])) as i64;
        let got = (t - shown[0]) as i64;
        assert!(
            (got - expected).abs() <= ((INTERVAL_MS + ROLL_UP_BOUND_MS) * 1_000_000) as i64,
            "word {i} after the outage at {got} ns from the first, not {expected}: {shown:?}"
        );
    }
    eprintln!(
        "RTMP outage: every word transcribed ({}); {} shown after the server came back; {failure}",
        words.len(),
        shown.len()
    );
}
