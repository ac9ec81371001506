// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! examples/rtsp_captions serves H.264 whose SEI carries the transcript as
//! CEA-608/708 captions, plus the audio as Opus, over RTSP on 127.0.0.1.
//! Two clients read it at once: rtspsrc here (rtph264depay ! h264parse !
//! ccextractor, CC1 decoded with cea608-types) and ffmpeg recording the
//! stream to MPEG-TS, from which ffmpeg's subcc gives the captions.
//!
//! The tone fixture writes one word "x" per 80 ms frame of 1 kHz tone
//! (tests/fixtures/README-tone.md): the words and their places in the audio
//! are known.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use common::cc608::cc1_chars;
use common::process::{self, Guarded};
use common::readback::{self, assert_shown_in_time, Recording, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_frames, tone_model};
use gst::prelude::*;

/// The longest one step (a server start, a session, an ffmpeg run) may
/// take on a loaded machine before the test fails instead of waiting on.
const STEP: Duration = Duration::from_secs(120);
const MS: u64 = 1_000_000;
/// The tone audio: 66 frames of 80 ms.
const AUDIO_NS: u64 = 66 * 80 * MS;

/// The example, serving until dropped.
struct Server {
    url: String,
    log: std::path::PathBuf,
    // Keeps the stdout reader (and so the pipe) alive.
    _lines: Receiver<String>,
    _process: Guarded,
}

/// Starts the example on a port the OS picks, and waits until it says
/// where it serves.
fn start_server(dir: &Path, args: &[&str]) -> Server {
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut server = Guarded::spawn(
        Command::new(process::examples_dir().join("rtsp_captions"))
            .args(args)
            .args(["--port", "0", "--threads", "1"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("VOXTRAL_MODEL")
            .stdout(Stdio::piped())
            .stderr(log),
        "examples/rtsp_captions",
    );
    let lines = process::stdout_lines(&mut server);
    let Some(line) = process::line_starting_with(&lines, "serving ", STEP) else {
        panic!(
            "the server never said it serves:\n{}",
            std::fs::read_to_string(&log_path).unwrap_or_default()
        );
    };
    let url = line.strip_prefix("serving ").unwrap().to_owned();
    let port = url
        .strip_prefix("rtsp://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/captions"))
        .and_then(|port| port.parse::<u16>().ok());
    assert!(port.is_some_and(|p| p > 0), "{line:?}");
    Server {
        url,
        log: log_path,
        _lines: lines,
        _process: server,
    }
}

impl Server {
    /// What the server wrote to stderr so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn tone_wav(dir: &Path) -> String {
    let path = dir.join("tone.wav");
    common::write_wav(&path, &tone_audio(66, &tone_frames()));
    path.display().to_string()
}

/// What an rtspsrc client received in one session.
struct Received {
    /// The video frames' PTS.
    video: Vec<u64>,
    /// CC1 byte pairs from the video's caption meta, with their PTS.
    cc: Vec<(u64, [u8; 2])>,
    /// Decoded audio, ns.
    audio_ns: u64,
}

/// An RTSP client in this process: video through ccextractor, audio
/// through the Opus decoder.
struct RtspsrcClient {
    pipeline: gst::Pipeline,
    video: std::sync::Arc<std::sync::Mutex<Vec<gst::Buffer>>>,
    cc: std::sync::Arc<std::sync::Mutex<Vec<gst::Buffer>>>,
    audio: std::sync::Arc<std::sync::Mutex<Vec<gst::Buffer>>>,
}

impl RtspsrcClient {
    fn start(url: &str) -> RtspsrcClient {
        Self::start_with(url, "")
    }

    /// Starts with more rtspsrc properties (`name=value ...`).
    fn start_with(url: &str, properties: &str) -> RtspsrcClient {
        gst::init().unwrap();
        let pipeline = gst::parse::launch(&format!(
            "rtspsrc location={url} protocols=tcp {properties} name=src \
             src. ! rtph264depay ! h264parse ! ccextractor name=x \
             x. ! fakesink name=video signal-handoffs=true sync=false \
             x.caption ! queue ! ccconverter ! closedcaption/x-cea-608,format=raw ! \
               fakesink name=cc signal-handoffs=true sync=false async=false \
             src. ! rtpopusdepay ! opusdec ! fakesink name=audio signal-handoffs=true sync=false"
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        let client = RtspsrcClient {
            video: common::handoffs(&pipeline, "video"),
            cc: common::handoffs(&pipeline, "cc"),
            audio: common::handoffs(&pipeline, "audio"),
            pipeline,
        };
        client.pipeline.set_state(gst::State::Playing).unwrap();
        client
    }

    /// Waits until `frames` video frames came; panics on an ERROR.
    fn wait_for_video(&self, frames: usize) {
        let bus = self.pipeline.bus().unwrap();
        let came = process::wait_until(STEP, || {
            if let Some(msg) = bus.pop_filtered(&[gst::MessageType::Error]) {
                self.fail(&msg);
            }
            self.video.lock().unwrap().len() >= frames
        });
        assert!(came, "no {frames} video frames within {STEP:?}");
    }

    /// Waits for the end of the session and returns what came. The end is
    /// EOS, or the whole audio and then no new video for 3 s: rtspsrc 1.22
    /// once posted no EOS within 120 s on a starved machine while ffmpeg,
    /// reading the same server, ended on time; what is asserted is what
    /// arrived, not how rtspsrc noticed the end.
    fn finish(self) -> Received {
        let bus = self.pipeline.bus().unwrap();
        let mut frames = 0;
        let mut last_frame = std::time::Instant::now();
        let ended = process::wait_until(STEP, || {
            if let Some(msg) = bus.pop_filtered(&[gst::MessageType::Eos, gst::MessageType::Error]) {
                if msg.type_() == gst::MessageType::Error {
                    self.fail(&msg);
                }
                return true;
            }
            let now = self.video.lock().unwrap().len();
            if now != frames {
                (frames, last_frame) = (now, std::time::Instant::now());
            }
            self.audio_ns() + 100 * MS >= AUDIO_NS && last_frame.elapsed() > Duration::from_secs(3)
        });
        let received = self.received();
        shut_down(self.pipeline);
        assert!(ended, "the RTSP session did not end within {STEP:?}");
        received
    }

    fn audio_ns(&self) -> u64 {
        self.audio
            .lock()
            .unwrap()
            .iter()
            .map(|b| {
                b.duration()
                    .expect("decoded audio has durations")
                    .nseconds()
            })
            .sum()
    }

    /// Where the decoded audio did not go on from the buffer before: a
    /// DISCONT flag after the first buffer, or more than 200 ms missing or
    /// repeated.
    fn audio_breaks(&self) -> Vec<String> {
        let audio = self.audio.lock().unwrap();
        audio
            .windows(2)
            .filter_map(|pair| {
                let end = pair[0].pts()? + pair[0].duration()?;
                let next = pair[1].pts()?;
                let flagged = pair[1].flags().contains(gst::BufferFlags::DISCONT);
                let off = next.nseconds().abs_diff(end.nseconds());
                (flagged || off > 200 * MS)
                    .then(|| format!("after {end}: next at {next} (discont: {flagged})"))
            })
            .collect()
    }

    fn received(&self) -> Received {
        let pts = |b: &gst::Buffer| b.pts().expect("timestamped").nseconds();
        let video = self.video.lock().unwrap().iter().map(pts).collect();
        let cc = self
            .cc
            .lock()
            .unwrap()
            .iter()
            .map(|b| {
                let data = b.map_readable().unwrap();
                (pts(b), [data[0], data[1]])
            })
            .collect();
        Received {
            video,
            cc,
            audio_ns: self.audio_ns(),
        }
    }

    fn fail(&self, msg: &gst::Message) -> ! {
        shut_down(self.pipeline.clone());
        match msg.view() {
            gst::MessageView::Error(e) => {
                panic!("rtspsrc client: {} ({:?})", e.error(), e.debug())
            }
            _ => panic!("rtspsrc client: {msg:?}"),
        }
    }
}

/// Stops the client on a thread of its own: rtspsrc 1.22's teardown can
/// deadlock (its rtpjitterbuffer's task holds the stream lock its
/// deactivation waits for; seen once, on a starved machine). A stop that
/// hangs is left behind, so the test reports its own outcome instead of
/// hanging.
fn shut_down(pipeline: gst::Pipeline) {
    let (done, stopped) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = pipeline.set_state(gst::State::Null);
        let _ = done.send(());
    });
    if stopped.recv_timeout(Duration::from_secs(30)).is_err() {
        eprintln!("note: the rtspsrc client did not stop within 30 s; left behind");
    }
}

/// ffmpeg as an RTSP client over TCP, recording the stream into `ts`.
fn start_ffmpeg_recording(url: &str, ts: &Path, extra: &[&str]) -> Recording {
    let mut input = vec!["-rtsp_transport", "tcp", "-i", url];
    input.extend(extra);
    Recording::start(&input, ts)
}

fn ms(ns: u64) -> f64 {
    ns as f64 / MS as f64
}

#[test]
fn two_clients_each_get_the_whole_file_with_its_captions_over_rtsp() {
    let dir = common::scratch_dir("rtsp-file");
    let wav = tone_wav(&dir);
    process::examples_dir();
    let started = std::time::Instant::now();
    let server = start_server(&dir, &["--model", &tone_model(), "--audio", &wav]);

    let rtspsrc = RtspsrcClient::start(&server.url);
    // ffmpeg joins 2 s into the first session: only a session of its own,
    // from the file's start, gives it the first words (at 0.8 s).
    rtspsrc.wait_for_video(60);
    let ts = dir.join("ffmpeg.ts");
    let ffmpeg = start_ffmpeg_recording(&server.url, &ts, &[]);
    let received = rtspsrc.finish();
    // The session ends by itself at the end of the file (RTCP BYE on both
    // streams), so ffmpeg stops on its own.
    ffmpeg.assert_ends_well(STEP, "ffmpeg did not stop at the end", "");

    // rtspsrc: every word in CC1, in order.
    let chars = cc1_chars(&received.cc);
    let text: String = chars.iter().map(|(_, c)| c).collect();
    let words: Vec<&str> = text.split_whitespace().collect();
    assert_eq!(words, vec!["x"; tone_frames().len()], "{text:?}");
    let origin = received.video[0];
    let shown: Vec<u64> = chars
        .iter()
        .filter(|(_, c)| *c == 'x')
        .map(|(t, _)| t - origin)
        .collect();
    for pair in shown.windows(2) {
        assert!(pair[0] <= pair[1], "out of order: {shown:?}");
    }
    // The whole audio as Opus, and video up to its end, not beyond it by
    // more than the frames already on their way when the audio ended.
    let video_span = received.video.last().unwrap() - origin;
    assert!(
        received.audio_ns + 100 * MS >= AUDIO_NS,
        "{} ms of audio",
        ms(received.audio_ns)
    );
    assert!(
        (AUDIO_NS - 500 * MS..AUDIO_NS + 1_500 * MS).contains(&video_span),
        "video over {} ms",
        ms(video_span)
    );

    // ffmpeg: the same words, timed by the stream's own timestamps.
    let ffmpeg_shown = readback::x_times(&ts);
    let worst = assert_shown_in_time("ffmpeg over RTSP", &ffmpeg_shown, ROLL_UP_BOUND_MS);

    let late: Vec<i64> = shown
        .iter()
        .zip(tone_frames())
        .map(|(&t, f)| (t as i64 - common::truth(f) as i64) / MS as i64)
        .collect();
    eprintln!(
        "RTSP: rtspsrc words at {late:?} ms from their place (from its first frame); \
         ffmpeg worst {worst} ms; audio {} ms, video over {} ms; {:.1} s from the server's start",
        ms(received.audio_ns),
        ms(video_span),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn a_second_client_joins_a_live_stream_without_interrupting_the_first() {
    // The tiny model says "hello from the tiny voxtral test model ..." for
    // any sound, so the live test tone gets words.
    // The subject is delivery to both clients, not overload: with the
    // default (skip), a model held back by a busy machine for more than the
    // latency skips audio, and the words of the recorded 6 s may be lost.
    let dir = common::scratch_dir("rtsp-live");
    let server = start_server(
        &dir,
        &[
            "--model",
            &common::tiny_model().display().to_string(),
            "--source",
            "test",
            "--overload",
            "queue",
        ],
    );
    // Timestamps from the RTP timestamps alone (buffer-mode=none), so that
    // a hole or a restart in the server's stream shows, and a burst of
    // late packets on a loaded machine does not.
    let first = RtspsrcClient::start_with(&server.url, "buffer-mode=none");
    first.wait_for_video(30);
    // ffmpeg asks for `Range: npt=0-` in PLAY, which once made the server
    // seek the pipeline both clients share.
    let ts = dir.join("live.ts");
    start_ffmpeg_recording(&server.url, &ts, &["-t", "6"]).assert_ends_well(
        STEP,
        "ffmpeg -t 6 did not stop",
        &format!("\nserver:\n{}", server.log()),
    );
    let breaks = first.audio_breaks();
    let received = first.received();
    shut_down(first.pipeline);

    let cues = readback::subcc_cues(&ts);
    assert!(
        cues.iter()
            .any(|(_, text)| text.contains("hello from the tiny")),
        "ffmpeg's recording: {cues:?}"
    );
    // The first client heard the stream on, without a hole, while the
    // second joined and recorded its 6 s.
    assert!(breaks.is_empty(), "the first client's audio: {breaks:?}");
    assert!(
        received.audio_ns >= 6_000 * MS,
        "the first client got {} ms of audio",
        ms(received.audio_ns)
    );
    let first_words: String = cc1_chars(&received.cc)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert!(
        first_words.contains("hello"),
        "the first client's captions: {first_words:?}"
    );
}

/// Runs the example with `args` to its end (it must fail fast).
fn run_example_expecting_failure(args: &[&str]) -> String {
    let binary = process::examples_dir().join("rtsp_captions");
    let output = Command::new("timeout")
        .arg(STEP.as_secs().to_string())
        .arg(binary)
        .args(args)
        .args(["--port", "0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("VOXTRAL_MODEL")
        .output()
        .unwrap();
    let text = common::output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
    assert!(!text.contains("serving"), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    text
}

#[test]
fn a_missing_model_or_an_audio_file_that_does_not_decode_is_an_error_before_serving() {
    let dir = common::scratch_dir("rtsp-errors");
    let wav = tone_wav(&dir);
    let text = run_example_expecting_failure(&["--model", "/nonexistent.gguf", "--audio", &wav]);
    assert!(
        text.contains("error: model file /nonexistent.gguf does not exist"),
        "{text}"
    );

    let not_audio = dir.join("notes.txt");
    std::fs::write(&not_audio, "not audio\n".repeat(100)).unwrap();
    let not_audio = not_audio.display().to_string();
    let text = run_example_expecting_failure(&["--model", &tone_model(), "--audio", &not_audio]);
    assert!(text.contains(&format!("error: {not_audio}: ")), "{text}");

    let text =
        run_example_expecting_failure(&["--model", &tone_model(), "--audio", "/nonexistent.wav"]);
    assert!(
        text.contains("error: /nonexistent.wav: not a file"),
        "{text}"
    );
}
