// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! examples/webrtc_captions end to end, on 127.0.0.1 only: a native
//! webrtcbin receiver reads the caption SEI and the `captions` data
//! channel, headless Chromium plays the page, several viewers come and go,
//! and garbage on the signalling socket changes nothing.
//!
//! Timing uses the tone fixture (tests/fixtures/README-tone.md): one word
//! "x" per 80 ms frame of 1 kHz tone, each belonging at a known place in
//! the audio. The example plays the file from running time 0 (when the
//! first viewer arrives) and prints each viewer's origin, the running time
//! of its media time 0; so a word of tone frame f belongs at media time
//! LEAD + truth(f) - origin on that viewer.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use common::cc608::cc1_chars;
use common::chromium::{collect_lines, Chromium, DevTools, Socket};
use common::process::{examples_dir, Guarded};
use common::{tone_audio, tone_frames, truth};

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;
use serde_json::{json, Value};
use tungstenite::Message;

const MS: i64 = 1_000_000;
/// Silence before the tone fixture in the test audio, so that its words
/// come after the first viewer's origin even on a slow machine (the origin
/// is measured, not assumed); a whole number of 80 ms frames, so the tone
/// bursts stay frame-aligned. It also covers the file's own start: the
/// example mixes the file onto live silence, and audio the file's branch
/// brings later than its place is dropped by the mixer. 8 s: beside two
/// busy loops on 2 cores, with other test runs on the machine too, the
/// native receiver's origin came at 3.7 s and at 6.4 s (2 runs of 10), and
/// once the file's first word, at 5.6 s, was lost (its next one shortened):
/// the file's audio apparently began about 5.7 s late.
const LEAD_MS: u64 = 8000;
/// How far a data-channel cue's start may be from its word's place in the
/// audio: the transcriber's grain is one decode interval (160 ms) either
/// way; measured: see the eprintln lines.
const CUE_BOUND_MS: i64 = 160;
/// How late a word may show in the received SEI captions (as
/// tests/captions.rs: a decode interval, the 608 codes before it, a frame);
/// the receiver's jitter buffer adds nothing to PTS differences.
const SEI_BOUND_MS: i64 = 160 + 250;
/// How far from its place the page may show a word against
/// video.currentTime: the cue's own error, the page's 20 ms render tick,
/// and Chromium's frame timing (render times smoothed from RTP).
const PAGE_BOUND_MS: i64 = 160 + 240;
/// Hard limit for anything the tests wait for.
const WAIT: Duration = Duration::from_secs(90);

/// The tone fixture after LEAD_MS of silence, then 3 s of silence, as a
/// WAV file.
fn tone_wav(dir: &Path) -> PathBuf {
    let lead = vec![0.0f32; (LEAD_MS as usize) * 16];
    let mut audio = lead;
    audio.extend(tone_audio(66, &tone_frames()));
    audio.extend(vec![0.0f32; 3 * 16_000]);
    let path = dir.join("tone.wav");
    common::write_wav(&path, &audio);
    path
}

/// Where tone frame f's word belongs on a viewer whose origin is
/// `origin` (ns of running time), in ns of media time.
fn expected(f: usize, origin: u64) -> i64 {
    (LEAD_MS * 1_000_000 + truth(f)) as i64 - origin as i64
}

/// The example as a child process, killed when dropped.
struct Example {
    child: Guarded,
    lines: Arc<Mutex<Vec<String>>>,
    port: u16,
}

impl Example {
    /// Starts the example with `--overload queue`: every test here is about
    /// delivery (to the receivers, the page, several viewers), none about
    /// overload (tests/overload.rs is). With the default, skip, a machine
    /// busy enough to hold the model back by more than the latency for a
    /// moment makes the element skip audio and start its model stream over,
    /// and the words are then not the fixture's (21 for 18 once, on a fresh
    /// machine that was also building): skip's promise, not a delivery
    /// fault.
    fn start(args: &[&str]) -> Example {
        let mut child = Guarded::spawn(
            Command::new(examples_dir().join("webrtc_captions"))
                .args(["--port", "0", "--threads", "1", "--overload", "queue"])
                .args(args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .env_remove("VOXTRAL_MODEL")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
            "the example",
        );
        let lines = Arc::new(Mutex::new(Vec::new()));
        let process = child.child();
        collect_lines(process.stdout.take().unwrap(), lines.clone(), "");
        collect_lines(process.stderr.take().unwrap(), lines.clone(), "stderr: ");
        let mut example = Example {
            child,
            lines,
            port: 0,
        };
        let url = example.wait_for_line(|l| l.starts_with("open http://127.0.0.1:"));
        example.port = url
            .trim_start_matches("open http://127.0.0.1:")
            .trim_end_matches('/')
            .parse()
            .expect("a port in the URL");
        example
    }

    fn log(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// The first output line that `matches`, waiting for it.
    fn wait_for_line(&mut self, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(line) = self.lines.lock().unwrap().iter().find(|l| matches(l)) {
                return line.clone();
            }
            if let Ok(Some(status)) = self.child.child().try_wait() {
                panic!("the example ended ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "waited too long; output:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Viewer `id`'s origin (ns of running time), from its "connected" line.
    fn origin(&mut self, id: u64) -> u64 {
        let prefix = format!("viewer {id}: connected");
        let line = self.wait_for_line(|l| l.starts_with(&prefix));
        let seconds: f64 = line
            .rsplit("running time ")
            .next()
            .and_then(|s| s.trim_end_matches(" s").parse().ok())
            .unwrap_or_else(|| panic!("no origin in {line:?}"));
        (seconds * 1e9).round() as u64
    }

    fn is_running(&mut self) -> bool {
        matches!(self.child.child().try_wait(), Ok(None))
    }
}
impl Drop for Example {
    fn drop(&mut self) {
        // The process itself is killed by its guard.
        if std::thread::panicking() {
            eprintln!("the example's output:\n{}", self.log());
        }
    }
}

/// What a native receiver got.
#[derive(Default)]
struct Received {
    /// Data-channel messages, as they came.
    cues: Vec<Value>,
    /// CC1 byte pairs from the SEI, with their frame's media time (ns).
    pairs: Vec<(u64, [u8; 2])>,
    /// PTS of the first received video frame: media time 0.
    first_frame: Option<u64>,
    frames: usize,
    audio_buffers: usize,
}

/// A native viewer: webrtcbin answering the example's offer, with
/// `rtph264depay ! h264parse ! ccextractor` on the video and the data
/// channel read as text.
struct NativeViewer {
    pipeline: gst::Pipeline,
    webrtcbin: gst::Element,
    socket: Socket,
    session: u64,
    to_send: Receiver<Value>,
    received: Arc<Mutex<Received>>,
}

impl NativeViewer {
    fn connect(port: u16) -> NativeViewer {
        common::init_plugin();
        let mut socket = Socket::connect(&format!("ws://127.0.0.1:{port}/ws"));
        let offer = socket.wait_for("offer");
        let session = offer["session"].as_u64().expect("a session number");
        let pipeline = gst::Pipeline::new();
        let webrtcbin = gst::ElementFactory::make("webrtcbin")
            .property_from_str("bundle-policy", "max-bundle")
            .build()
            .unwrap();
        pipeline.add(&webrtcbin).unwrap();
        // Media time from RTP timestamps alone, as a browser's
        // currentTime: the default (slave) mode times frames by their
        // arrival, which follows the network, not the media.
        webrtcbin
            .downcast_ref::<gst::Bin>()
            .unwrap()
            .by_name("rtpbin")
            .expect("webrtcbin's rtpbin")
            .set_property_from_str("buffer-mode", "none");
        let received = Arc::new(Mutex::new(Received::default()));
        let (tx, to_send) = channel();
        connect_receiver(&pipeline, &webrtcbin, &received, tx, session);
        pipeline.set_state(gst::State::Playing).unwrap();
        let mut viewer = NativeViewer {
            pipeline,
            webrtcbin,
            socket,
            session,
            to_send,
            received,
        };
        viewer.answer(offer["sdp"].as_str().expect("an SDP in the offer"));
        viewer
    }

    fn answer(&mut self, sdp: &str) {
        let offer = gst_webrtc::WebRTCSessionDescription::new(
            gst_webrtc::WebRTCSDPType::Offer,
            gst_sdp::SDPMessage::parse_buffer(sdp.as_bytes()).expect("the offer parses"),
        );
        let promise = gst::Promise::new();
        self.webrtcbin
            .emit_by_name::<()>("set-remote-description", &[&offer, &promise]);
        promise.wait();
        let promise = gst::Promise::new();
        self.webrtcbin
            .emit_by_name::<()>("create-answer", &[&None::<gst::Structure>, &promise]);
        promise.wait();
        let answer = promise
            .get_reply()
            .and_then(|r| r.get::<gst_webrtc::WebRTCSessionDescription>("answer").ok())
            .expect("webrtcbin answers the offer");
        self.webrtcbin
            .emit_by_name::<()>("set-local-description", &[&answer, &None::<gst::Promise>]);
        let sdp = answer.sdp().as_text().unwrap();
        self.socket
            .send(&json!({"type": "answer", "session": self.session, "sdp": sdp}));
    }

    /// Passes candidates both ways for `duration`.
    fn pump(&mut self, duration: Duration) {
        let deadline = Instant::now() + duration;
        while Instant::now() < deadline {
            while let Ok(message) = self.to_send.try_recv() {
                self.socket.send(&message);
            }
            if let Some(message) = self.socket.poll() {
                if message["type"] == "ice" {
                    let mline = message["sdpMLineIndex"].as_u64().unwrap() as u32;
                    let candidate = message["candidate"].as_str().unwrap();
                    self.webrtcbin
                        .emit_by_name::<()>("add-ice-candidate", &[&mline, &candidate]);
                }
            }
        }
    }

    /// Pumps until `done` holds for what was received, within WAIT.
    fn wait_until(&mut self, what: &str, done: impl Fn(&Received) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !done(&self.received.lock().unwrap()) {
            if Instant::now() > deadline {
                // Not with the lock held: a poisoned lock makes the
                // receiver's callbacks abort the process, message and all.
                let got = {
                    let r = self.received.lock().unwrap();
                    let xs = cc1_chars(&r.pairs)
                        .iter()
                        .filter(|(_, c)| *c == 'x')
                        .count();
                    format!(
                        "{} cues, {} caption pairs ({xs} x), {} frames, {} audio buffers",
                        r.cues.len(),
                        r.pairs.len(),
                        r.frames,
                        r.audio_buffers
                    )
                };
                panic!("{what}: not within {WAIT:?}; got {got}");
            }
            self.pump(Duration::from_millis(200));
        }
    }

    /// The data-channel cues as (text, start, end) in ns of media time.
    fn cues(&self) -> Vec<(String, i64, i64)> {
        let received = self.received.lock().unwrap();
        received
            .cues
            .iter()
            .map(|c| {
                let ns = |v: &Value| (v.as_f64().expect("a time in seconds") * 1e9).round() as i64;
                (
                    c["text"].as_str().expect("a text").to_owned(),
                    ns(&c["start"]),
                    ns(&c["end"]),
                )
            })
            .collect()
    }

    /// When each "x" showed in the SEI captions, ns of media time.
    fn caption_x_times(&self) -> Vec<u64> {
        cc1_chars(&self.received.lock().unwrap().pairs)
            .into_iter()
            .filter(|(_, c)| *c == 'x')
            .map(|(t, _)| t)
            .collect()
    }
}

impl Drop for NativeViewer {
    fn drop(&mut self) {
        let _ = self.pipeline.set_state(gst::State::Null);
    }
}

/// Hooks the receiver's outputs: ICE candidates to `tx`, decoded media and
/// data-channel text into `received`.
fn connect_receiver(
    pipeline: &gst::Pipeline,
    webrtcbin: &gst::Element,
    received: &Arc<Mutex<Received>>,
    tx: Sender<Value>,
    session: u64,
) {
    let tx = Mutex::new(tx);
    webrtcbin.connect("on-ice-candidate", false, move |args| {
        let mline = args[1].get::<u32>().unwrap();
        let candidate = args[2].get::<String>().unwrap();
        let _ = tx.lock().unwrap().send(json!({
            "type": "ice", "session": session, "candidate": candidate, "sdpMLineIndex": mline
        }));
        None
    });
    let store = received.clone();
    webrtcbin.connect("on-data-channel", false, move |args| {
        let channel = args[1].get::<gst_webrtc::WebRTCDataChannel>().unwrap();
        let store = store.clone();
        channel.connect_on_message_string(move |_, text| {
            if let Some(cue) = text.and_then(|t| serde_json::from_str(t).ok()) {
                store.lock().unwrap().cues.push(cue);
            }
        });
        None
    });
    let pipeline = pipeline.downgrade();
    let store = received.clone();
    webrtcbin.connect_pad_added(move |_, pad| {
        let Some(pipeline) = pipeline.upgrade() else {
            return;
        };
        let caps = pad.current_caps().or_else(|| Some(pad.query_caps(None)));
        let media = caps
            .as_ref()
            .and_then(|c| c.structure(0))
            .and_then(|s| s.get::<String>("media").ok());
        let bin = match media.as_deref() {
            Some("video") => video_reader(&store),
            Some("audio") => audio_reader(&store),
            _ => return,
        };
        pipeline.add(&bin).unwrap();
        bin.sync_state_with_parent().unwrap();
        // No panic here: this runs on a GStreamer thread, where a panic
        // aborts the whole test binary. A failed link shows as missing
        // media in the assertions.
        if let Err(e) = pad.link(&bin.static_pad("sink").unwrap()) {
            eprintln!("could not link {caps:?}: {e:?}");
        }
    });
}

/// `rtph264depay ! h264parse ! ccextractor`, keeping the first frame's PTS
/// and every CC1 pair with its frame's media time.
fn video_reader(store: &Arc<Mutex<Received>>) -> gst::Element {
    let bin = gst::parse::bin_from_description(
        "rtph264depay name=depay ! h264parse ! ccextractor name=x ! \
           fakesink name=frames signal-handoffs=true sync=false async=false \
         x.caption ! ccconverter ! closedcaption/x-cea-608,format=raw ! \
           fakesink name=cc signal-handoffs=true sync=false async=false",
        false,
    )
    .unwrap();
    // Ghosted by hand: ccconverter's sink is unlinked too until the
    // caption pad appears.
    let depay = bin.by_name("depay").unwrap().static_pad("sink").unwrap();
    bin.add_pad(
        &gst::GhostPad::builder_with_target(&depay)
            .unwrap()
            .name("sink")
            .build(),
    )
    .unwrap();
    let frames = store.clone();
    bin.by_name("frames")
        .unwrap()
        .connect("handoff", false, move |args| {
            let buffer = args[1].get::<gst::Buffer>().unwrap();
            let mut received = frames.lock().unwrap();
            received.frames += 1;
            if received.first_frame.is_none() {
                received.first_frame = buffer.pts().map(gst::ClockTime::nseconds);
            }
            None
        });
    let captions = store.clone();
    bin.by_name("cc")
        .unwrap()
        .connect("handoff", false, move |args| {
            let buffer = args[1].get::<gst::Buffer>().unwrap();
            let mut received = captions.lock().unwrap();
            let (Some(first), Some(pts)) = (received.first_frame, buffer.pts()) else {
                return None;
            };
            let at = pts.nseconds().saturating_sub(first);
            let data = buffer.map_readable().unwrap();
            for pair in data.chunks_exact(2) {
                received.pairs.push((at, [pair[0], pair[1]]));
            }
            None
        });
    bin.upcast()
}

/// `rtpopusdepay ! opusdec`, counting decoded buffers.
fn audio_reader(store: &Arc<Mutex<Received>>) -> gst::Element {
    let bin = gst::parse::bin_from_description(
        "rtpopusdepay ! opusdec ! fakesink name=audio signal-handoffs=true sync=false async=false",
        true,
    )
    .unwrap();
    let store = store.clone();
    bin.by_name("audio")
        .unwrap()
        .connect("handoff", false, move |_| {
            store.lock().unwrap().audio_buffers += 1;
            None
        });
    bin.upcast()
}

/// Checks one time per tone frame, in order, each within `bound` of its
/// place (ns of media time on a viewer with `origin`); returns the worst
/// offsets (earliest, latest) in ms.
fn assert_on_time(what: &str, times: &[i64], origin: u64, early: i64, late: i64) -> (i64, i64) {
    let frames = tone_frames();
    assert_eq!(times.len(), frames.len(), "{what}: {times:?}");
    let (mut min, mut max) = (i64::MAX, i64::MIN);
    let offsets: Vec<i64> = times
        .iter()
        .zip(&frames)
        .map(|(&t, &f)| (t - expected(f, origin)) / MS)
        .collect();
    eprintln!("{what}: offsets (ms) {offsets:?}");
    for (&t, &f) in times.iter().zip(&frames) {
        let off = (t - expected(f, origin)) / MS;
        assert!(
            (-early..=late).contains(&off),
            "{what}: word of tone frame {f} at {} ms of media time, {off} ms from its place",
            t / MS
        );
        min = min.min(off);
        max = max.max(off);
    }
    for pair in times.windows(2) {
        assert!(pair[0] <= pair[1], "{what}: out of order: {times:?}");
    }
    (min, max)
}

/// The example on the tone fixture's audio, with `more` options.
fn tone_example(name: &str, more: &[&str]) -> (Example, PathBuf) {
    let dir = common::scratch_dir(name);
    let wav = tone_wav(&dir);
    let mut args = vec![
        "--model".to_owned(),
        common::tone_model(),
        "--audio".to_owned(),
        wav.to_str().unwrap().to_owned(),
    ];
    args.extend(more.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let example = Example::start(&args);
    (example, dir)
}

/// All the fixture's words have been sent once the data channel has 18
/// cues and the captions show 18 x's.
fn all_words(received: &Received) -> bool {
    let xs = cc1_chars(&received.pairs)
        .iter()
        .filter(|(_, c)| *c == 'x')
        .count();
    received.cues.len() >= tone_frames().len() && xs >= tone_frames().len()
}

#[test]
fn a_native_receiver_gets_the_words_in_the_sei_captions_and_on_the_data_channel() {
    let started = Instant::now();
    // A word later than the latency misses its video frame in cccombiner,
    // and so the SEI captions (overload=queue keeps it for the data
    // channel): beside two busy loops on 2 cores, with the default 1.5 s,
    // the model fell 2.1 s behind in 1 run of 5 (its lag WARNING) and
    // another run waited 90 s in vain for all 18 words. 4 s covers that
    // lag (two later runs, with more load beside, lagged 4.3 and 4.7 s; the
    // SEI still had every word the data channel had); the cues' places do
    // not depend on it.
    let (mut example, _dir) =
        tone_example("webrtc-native", &["--speaker", "Host", "--latency", "4000"]);
    let mut viewer = NativeViewer::connect(example.port);
    viewer.pump(Duration::from_millis(500));
    let origin = example.origin(1);
    // The first word may show a decode interval before its place: the
    // viewer's media must start before that.
    let first = expected(tone_frames()[0], origin);
    assert!(
        first >= CUE_BOUND_MS * MS,
        "the viewer started too late to see the first words: origin {origin} ns, the first \
         word {} ms into its media",
        first / MS
    );
    viewer.wait_until("all 18 words", all_words);

    let cues = viewer.cues();
    assert!(cues.iter().all(|(text, ..)| text == "x"), "{cues:?}");
    let speakers: Vec<Value> = viewer
        .received
        .lock()
        .unwrap()
        .cues
        .iter()
        .map(|c| c["speaker"].clone())
        .collect();
    assert!(
        speakers.iter().all(|s| s == "Host"),
        "the speaker on every cue: {speakers:?}"
    );
    assert!(cues.iter().all(|(_, start, end)| end > start), "{cues:?}");
    let starts: Vec<i64> = cues.iter().map(|c| c.1).collect();
    let (cue_early, cue_late) =
        assert_on_time("data channel", &starts, origin, CUE_BOUND_MS, CUE_BOUND_MS);

    let shown: Vec<i64> = viewer
        .caption_x_times()
        .into_iter()
        .map(|t| t as i64)
        .collect();
    let (sei_early, sei_late) = assert_on_time("SEI captions", &shown, origin, 160, SEI_BOUND_MS);

    // Copied out: a panic with the lock held would abort (see wait_until).
    let (frames, audio_buffers) = {
        let received = viewer.received.lock().unwrap();
        (received.frames, received.audio_buffers)
    };
    assert!(audio_buffers > 0, "no audio decoded");
    eprintln!(
        "native receiver: data-channel cue starts {cue_early}..{cue_late} ms, SEI captions \
         {sei_early}..{sei_late} ms from each word's place; origin {:.3} s; {frames} frames, \
         {audio_buffers} audio buffers; {:.1} s in all",
        origin as f64 / 1e9,
        started.elapsed().as_secs_f64()
    );
}

/// What the page shows, as its script sees it.
const PAGE_STATE: &str = "JSON.stringify({\
    width: document.getElementById('video').videoWidth, \
    time: document.getElementById('video').currentTime, \
    shown: window.captionLog, \
    caption: document.querySelector('#caption span').textContent, \
    transcript: document.getElementById('transcript').textContent})";

#[test]
fn chromium_plays_the_stream_and_shows_each_word_at_its_place_in_the_media() {
    let started = Instant::now();
    let (mut example, dir) = tone_example("webrtc-browser", &["--speaker", "Host"]);
    let mut chromium = Chromium::start(&dir.join("profile"));
    let browser_url = chromium.devtools_url();
    let page = format!("http://127.0.0.1:{}/", example.port);
    let mut tools = DevTools::open(&browser_url, &page);

    let deadline = Instant::now() + WAIT;
    let mut times = Vec::new();
    let mut captions_seen = Vec::new();
    let mut screenshot_taken = false;
    let state = loop {
        // Nothing to read while the page is still loading.
        let state: Value = match tools.evaluate(PAGE_STATE).as_str() {
            Some(text) => serde_json::from_str(text).unwrap(),
            None => json!({}),
        };
        times.push(state["time"].as_f64().unwrap_or(0.0));
        let caption = state["caption"].as_str().unwrap_or("").to_owned();
        if !caption.is_empty() {
            captions_seen.push(caption.clone());
            if caption.len() > 12 && !screenshot_taken {
                tools.screenshot(&dir.join("webrtc-captions.png"));
                screenshot_taken = true;
            }
        }
        let shown = state["shown"].as_array().map_or(0, Vec::len);
        if shown >= tone_frames().len() && screenshot_taken {
            break state;
        }
        assert!(
            Instant::now() < deadline,
            "the page showed {shown} words in {WAIT:?}: {state}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    let origin = example.origin(1);

    assert_eq!(state["width"], 640, "{state}");
    let advancing = times.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(
        advancing >= times.len() / 2 && times.last() > times.first(),
        "currentTime did not advance: {times:?}"
    );
    let shown = state["shown"].as_array().unwrap();
    assert!(shown.iter().all(|s| s["text"] == "x"), "{shown:?}");
    // The data channel carries the speaker, and the page names them.
    assert!(shown.iter().all(|s| s["speaker"] == "Host"), "{shown:?}");
    let shown_at: Vec<i64> = shown
        .iter()
        .map(|s| (s["shownAt"].as_f64().unwrap() * 1e9) as i64)
        .collect();
    let (early, late) = assert_on_time(
        "page (currentTime when shown)",
        &shown_at,
        origin,
        PAGE_BOUND_MS,
        PAGE_BOUND_MS,
    );
    let transcript = state["transcript"].as_str().unwrap();
    assert!(transcript.contains("Host: "), "{transcript:?}");
    assert_eq!(
        transcript.matches('x').count(),
        tone_frames().len(),
        "{transcript:?}"
    );
    assert!(
        captions_seen.iter().any(|c| c.starts_with("Host: x x")),
        "no caption line over the video, with the speaker: {captions_seen:?}"
    );
    eprintln!(
        "chromium: words shown at currentTime {early}..{late} ms from their place; origin \
         {:.3} s; screenshot {}; {:.1} s in all",
        origin as f64 / 1e9,
        dir.join("webrtc-captions.png").display(),
        started.elapsed().as_secs_f64()
    );
}

/// The example on a live test tone with the tiny model, which says words
/// all the time ("hello from the tiny voxtral test model ...").
fn talking_example() -> Example {
    Example::start(&["--source", "test"])
}

/// Cues and caption characters a viewer has received so far.
fn counts(viewer: &NativeViewer) -> (usize, usize) {
    let received = viewer.received.lock().unwrap();
    let letters = cc1_chars(&received.pairs)
        .iter()
        .filter(|(_, c)| c.is_alphabetic())
        .count();
    (received.cues.len(), letters)
}

/// Waits until `viewer` has received `more` cues and caption letters
/// beyond `since`.
fn keeps_receiving(viewer: &mut NativeViewer, since: (usize, usize), more: usize, what: &str) {
    viewer.wait_until(what, |r| {
        let letters = cc1_chars(&r.pairs)
            .iter()
            .filter(|(_, c)| c.is_alphabetic())
            .count();
        r.cues.len() >= since.0 + more && letters >= since.1 + more
    });
}

#[test]
fn two_viewers_at_once_and_one_leaving_leaves_the_other_receiving() {
    let started = Instant::now();
    let mut example = talking_example();
    let mut first = NativeViewer::connect(example.port);
    first.pump(Duration::from_millis(300));
    let mut second = NativeViewer::connect(example.port);
    assert_ne!(first.session, second.session);
    keeps_receiving(&mut first, (0, 0), 10, "the first viewer");
    keeps_receiving(&mut second, (0, 0), 10, "the second viewer");
    example.origin(1);
    example.origin(2);

    drop(second);
    example.wait_for_line(|l| l.starts_with("viewer 2: left"));
    let before = counts(&first);
    keeps_receiving(
        &mut first,
        before,
        20,
        "the first viewer after the second left",
    );

    // A viewer coming back gets a session of its own and the stream.
    let mut third = NativeViewer::connect(example.port);
    keeps_receiving(&mut third, (0, 0), 10, "a viewer reconnecting");
    let before = counts(&first);
    keeps_receiving(&mut first, before, 10, "the first viewer meanwhile");
    assert!(example.is_running());
    let texts: Vec<String> = first.cues().into_iter().map(|c| c.0).collect();
    assert!(
        texts.windows(2).all(|w| next_word(&w[0]) == w[1]),
        "the first viewer's words are not the model's in order: {texts:?}"
    );
    eprintln!(
        "two viewers, one left, one came back: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The word the tiny model says after `word`.
fn next_word(word: &str) -> &'static str {
    const CYCLE: [&str; 7] = ["hello", "from", "the", "tiny", "voxtral", "test", "model"];
    let i = CYCLE
        .iter()
        .position(|w| *w == word)
        .unwrap_or_else(|| panic!("{word:?}"));
    CYCLE[(i + 1) % CYCLE.len()]
}

#[test]
fn garbage_on_the_signalling_socket_is_ignored() {
    let mut example = talking_example();
    let mut viewer = NativeViewer::connect(example.port);
    keeps_receiving(&mut viewer, (0, 0), 10, "the viewer");

    // A second connection that talks nonsense, including the first
    // viewer's session number and an SDP that is not its own.
    let mut stranger = Socket::connect(&format!("ws://127.0.0.1:{}/ws", example.port));
    let offer = stranger.wait_for("offer");
    let own = offer["session"].as_u64().unwrap();
    let sdp = offer["sdp"].as_str().unwrap();
    stranger.send_text("this is not JSON {");
    stranger.send(&json!({"type": "dance", "session": own}));
    stranger.send(&json!([1, 2, 3]));
    stranger.send(&json!({"type": "answer", "session": viewer.session, "sdp": sdp}));
    stranger.send(&json!({"type": "answer", "session": own, "sdp": "v=0 not an SDP"}));
    stranger.send(&json!({"type": "ice", "session": own, "candidate": "x", "sdpMLineIndex": 99}));
    stranger.send(&json!({"type": "answer", "session": own}));
    stranger.0.send(Message::binary(vec![0u8, 1, 2])).unwrap();
    // And nonsense on the viewer's own, negotiated connection.
    viewer.socket.send_text("{\"type\":");
    viewer
        .socket
        .send(&json!({"type": "answer", "session": viewer.session, "sdp": sdp}));
    viewer
        .socket
        .send(&json!({"type": "answer", "session": own + 100, "sdp": sdp}));
    viewer.socket.send(&json!({"type": "hello"}));

    let before = counts(&viewer);
    keeps_receiving(&mut viewer, before, 20, "the viewer after the garbage");
    assert!(example.is_running(), "{}", example.log());
    let ignored = example
        .log()
        .lines()
        .filter(|l| l.contains("ignored a"))
        .count();
    assert!(
        ignored >= 11,
        "{ignored} messages logged as ignored:\n{}",
        example.log()
    );
    // The server still negotiates new viewers.
    let mut late = NativeViewer::connect(example.port);
    keeps_receiving(&mut late, (0, 0), 5, "a viewer after the garbage");
    drop(stranger);
}
