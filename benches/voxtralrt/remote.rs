// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 9: the remote engine (engine=vllm).
//!
//! - 9a: words' arrival through the element against a bare protocol client
//!   on the same server, paced in real time: the time from the audio that
//!   makes a step due to its text arriving (client: the delta; element: the
//!   word leaving the src pad).
//! - 9b: many element streams at once in this process against a zero-cost
//!   double in a child process: every word, this process's CPU and memory
//!   per stream.
//! - 9c (with --vllm-url): how many sessions at once the server keeps up
//!   with: bare clients paced in real time, each step's lag.
//!
//! The zero-cost double speaks vLLM's protocol on vLLM's schedule (a delta
//! per 80 ms step once the frame, the 480 ms delay and 2.5 ms are in) and
//! writes " w" for every step, so every frame is a word.

use std::io::Write as _;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use gst::prelude::*;
use tungstenite::Message;

use crate::harness::{ms, percentile, process_cpu, progress, rss_kib, Report};
use crate::options::Opts;
use crate::{CAPS, MS};

const FRAME: usize = 1280;
/// vLLM's step schedule: step k once (k + 1) frames, the delay and 40
/// samples of look-ahead are in.
const DUE_AFTER: usize = 7680 + 40;

/// The zero-cost double: serves on a free port, prints it, runs until
/// killed.
pub(crate) fn double_child() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    let _ = std::io::stdout().flush();
    for tcp in listener.incoming().flatten() {
        std::thread::spawn(move || serve_double(tcp));
    }
}

fn serve_double(tcp: TcpStream) {
    let _ = tcp.set_nodelay(true);
    let Ok(mut ws) = tungstenite::accept(tcp) else {
        return;
    };
    let send = |ws: &mut tungstenite::WebSocket<TcpStream>, v: serde_json::Value| {
        ws.send(Message::text(v.to_string())).is_ok()
    };
    send(&mut ws, serde_json::json!({"type": "session.created"}));
    let (mut samples, mut steps, mut active) = (0usize, 0usize, false);
    while let Ok(msg) = ws.read() {
        let Ok(text) = msg.to_text() else { return };
        let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        let ok = match v["type"].as_str() {
            Some("session.update") => true,
            Some("input_audio_buffer.commit") if v["final"].as_bool() == Some(true) => {
                let last = samples + 17 * FRAME;
                let mut ok = true;
                while ok && (steps + 1) * FRAME + DUE_AFTER <= last {
                    ok = send(
                        &mut ws,
                        serde_json::json!({"type": "transcription.delta", "delta": ""}),
                    );
                    steps += 1;
                }
                active = false;
                ok && send(
                    &mut ws,
                    serde_json::json!({"type": "transcription.done", "text": ""}),
                )
            }
            Some("input_audio_buffer.commit") => {
                (samples, steps, active) = (0, 0, true);
                true
            }
            Some("input_audio_buffer.append") if active => {
                let n = v["audio"].as_str().map_or(0, |a| a.len() / 4 * 3 / 2);
                samples += n;
                let mut ok = true;
                while ok && (steps + 1) * FRAME + DUE_AFTER <= samples {
                    ok = send(
                        &mut ws,
                        serde_json::json!({"type": "transcription.delta", "delta": " w"}),
                    );
                    steps += 1;
                }
                ok
            }
            Some("input_audio_buffer.append") => true,
            other => send(
                &mut ws,
                serde_json::json!({"type": "error", "code": "unknown_event",
                    "error": format!("Unknown event type: {}", other.unwrap_or("None"))}),
            ),
        };
        if !ok {
            return;
        }
    }
}

/// A running double child, killed on drop.
struct DoubleChild(std::process::Child, u16);

impl DoubleChild {
    fn start() -> DoubleChild {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .arg("--double-child")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port = line.trim().parse().unwrap();
        DoubleChild(child, port)
    }

    fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/v1/realtime", self.1)
    }
}

impl Drop for DoubleChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A tone the tiny real model writes for (see tests/vllm_server.rs), as
/// PCM16 steps.
fn audio(secs: u64) -> Vec<f32> {
    (0..secs as usize * 16_000)
        .map(|i| {
            let v = 0.3 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0).sin();
            (v * 32767.0).trunc() / 32768.0
        })
        .collect()
}

/// A bare protocol client paced in real time, 80 ms an append: for each
/// delta, the time from the append that made it due to its arrival.
fn bare_client(url: &str, model: &str, audio: &[f32]) -> Vec<f64> {
    let (mut ws, _) = tungstenite::connect(url).unwrap();
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(Duration::from_millis(2)));
    }
    let text = |v: serde_json::Value| Message::text(v.to_string());
    ws.send(text(
        serde_json::json!({"type": "session.update", "model": model}),
    ))
    .unwrap();
    ws.send(text(
        serde_json::json!({"type": "input_audio_buffer.commit"}),
    ))
    .unwrap();
    let started = Instant::now();
    let mut due_at: Vec<Instant> = Vec::new();
    let mut lags = Vec::new();
    let mut sent = 0usize;
    let read = |ws: &mut tungstenite::WebSocket<_>, lags: &mut Vec<f64>, due_at: &[Instant]| loop {
        match ws.read() {
            Ok(m) => {
                let Ok(t) = m.to_text() else { continue };
                let v: serde_json::Value = serde_json::from_str(t).unwrap_or_default();
                match v["type"].as_str() {
                    Some("transcription.delta") => {
                        if let Some(at) = due_at.get(lags.len()) {
                            lags.push(at.elapsed().as_nanos() as f64);
                        }
                    }
                    Some("transcription.done") => return true,
                    _ => {}
                }
            }
            Err(_) => return false,
        }
    };
    for (k, piece) in audio.chunks(FRAME).enumerate() {
        let due = started + Duration::from_millis(80 * k as u64);
        while Instant::now() < due {
            read(&mut ws, &mut lags, &due_at);
        }
        let pcm: Vec<u8> = piece
            .iter()
            .flat_map(|v| ((v * 32767.0).round() as i16).to_le_bytes())
            .collect();
        let b64 = base64::engine::general_purpose::STANDARD.encode(pcm);
        ws.send(text(
            serde_json::json!({"type": "input_audio_buffer.append", "audio": b64}),
        ))
        .unwrap();
        sent += piece.len();
        let now = Instant::now();
        while (due_at.len() + 1) * FRAME + DUE_AFTER <= sent {
            due_at.push(now);
        }
    }
    ws.send(text(
        serde_json::json!({"type": "input_audio_buffer.commit", "final": true}),
    ))
    .unwrap();
    let end = Instant::now() + Duration::from_secs(30);
    while Instant::now() < end && !read(&mut ws, &mut lags, &due_at) {}
    lags
}

/// One live element stream at `url`, paced 80 ms a buffer: for each word,
/// the time from the buffer that made its step due to the word leaving.
/// Also the words seen.
fn element_stream(url: &str, model: &str, audio: &[f32]) -> (Vec<f64>, usize) {
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time caps={CAPS} ! \
         voxtralrttranscriber name=t engine=vllm url={url} model={model} decode-interval=80 ! \
         fakesink sync=false"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let due_at: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let words: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::default();
    let w = words.clone();
    let t = pipeline.by_name("t").unwrap();
    t.static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            if let Some(b) = info.buffer() {
                w.lock()
                    .unwrap()
                    .push((b.pts().map_or(0, |p| p.nseconds()), Instant::now()));
            }
            gst::PadProbeReturn::Ok
        });
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let started = Instant::now();
    let mut sent = 0usize;
    for (k, piece) in audio.chunks(FRAME).enumerate() {
        let due = started + Duration::from_millis(80 * k as u64);
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        let mut b = gst::Buffer::from_mut_slice(
            piece
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        );
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(80 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(80));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
        sent += piece.len();
        let now = Instant::now();
        let mut d = due_at.lock().unwrap();
        while (d.len() + 1) * FRAME + DUE_AFTER <= sent {
            d.push(now);
        }
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let _ = pipeline.bus().unwrap().timed_pop_filtered(
        gst::ClockTime::from_seconds(60),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipeline.set_state(gst::State::Null).unwrap();
    let due_at = due_at.lock().unwrap();
    let words = words.lock().unwrap();
    // A word's frame is its PTS's 80 ms frame (the element's timeline starts
    // at the audio's 0, the delay already taken off).
    let lags = words
        .iter()
        .filter_map(|&(pts, at)| {
            let frame = (pts / (80 * MS)) as usize;
            due_at
                .get(frame)
                .map(|d| at.duration_since(*d).as_nanos() as f64)
        })
        .collect();
    (lags, words.len())
}

fn p(v: &mut [f64], q: f64) -> String {
    v.sort_by(f64::total_cmp);
    ms(percentile(v, q))
}

pub(crate) fn remote(opts: &Opts, rep: &mut Report) {
    // The element against a bare client on the same server: the zero-cost
    // double, where every step is a word (the tiny real model writes one
    // word that never ends).
    let double = DoubleChild::start();
    let secs = if opts.quick { 3 } else { 20 };
    rep.line(format!("\n## 9. Remote engine (engine=vllm)\n\n### 9a. Words' arrival, element against a bare client (the zero-cost double, {secs} s live, decode-interval 80)\n"));
    progress("remote: bare client");
    let mut bare = bare_client(&double.url(), "zero-cost", &audio(secs));
    progress("remote: element");
    let (mut element, words) = element_stream(&double.url(), "zero-cost", &audio(secs));
    rep.line("| path | steps or words | p50 ms | p95 ms |");
    rep.line("|---|---|---|---|");
    rep.line(format!(
        "| bare protocol client | {} | {} | {} |",
        bare.len(),
        p(&mut bare, 50.0),
        p(&mut bare, 95.0)
    ));
    rep.line(format!(
        "| element (word out of the src pad) | {words} | {} | {} |",
        p(&mut element, 50.0),
        p(&mut element, 95.0)
    ));
    rep.line(
        "\nFrom the append (or buffer) that makes a step due to its delta (or word). The element \
         holds a word until the next one starts (it may grow) or its latency budget runs out, so \
         its figure includes that hold; with the double every step is a word.",
    );

    let n = opts.remote_streams;
    let secs = if opts.quick { 3 } else { 10 };
    rep.line(format!(
        "\n### 9b. {n} element streams at once against the zero-cost double ({secs} s live each)\n"
    ));
    progress(&format!("remote: {n} streams"));
    let (cpu_before, rss_before) = (process_cpu(), rss_kib().0);
    let peak = Arc::new(Mutex::new(rss_before));
    let results: Vec<(Vec<f64>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|_| s.spawn(|| element_stream(&double.url(), "zero-cost", &audio(secs))))
            .collect();
        let watch = s.spawn(|| {
            for _ in 0..(secs * 10 + 50) {
                let mut p = peak.lock().unwrap();
                *p = (*p).max(rss_kib().0);
                drop(p);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let r = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let _ = watch.join();
        r
    });
    let cpu = (process_cpu() - cpu_before).as_secs_f64();
    let expected = (secs as usize * 16_000 - DUE_AFTER) / FRAME;
    let words: usize = results.iter().map(|r| r.1).sum();
    let all_words = results.iter().all(|r| r.1 >= expected);
    let mut lags: Vec<f64> = results.iter().flat_map(|r| r.0.clone()).collect();
    let peak = *peak.lock().unwrap();
    rep.line("| streams | words | every stream all its words | word p50 ms | word p95 ms | CPU s per stream per audio s | RSS MiB per stream (peak) |");
    rep.line("|---|---|---|---|---|---|---|");
    rep.line(format!(
        "| {n} | {words} | {} | {} | {} | {:.4} | {:.2} |",
        if all_words { "yes" } else { "no" },
        p(&mut lags, 50.0),
        p(&mut lags, 95.0),
        cpu / n as f64 / secs as f64,
        peak.saturating_sub(rss_before) as f64 / 1024.0 / n as f64
    ));
    rep.goal(format!(
        "remote: {n} streams against the double, every word: {all_words}"
    ));

    let Some(url) = &opts.vllm_url else {
        rep.line("\n### 9c. Sessions at once on a real server: not run (no --vllm-url)");
        return;
    };
    let secs = if opts.quick { 3 } else { 10 };
    rep.line(format!(
        "\n### 9c. Sessions at once on {url} (bare clients, {secs} s live each)\n"
    ));
    rep.line("| sessions | steps | step lag p50 ms | p95 ms | max ms | keeps up (p95 < 500 ms) |");
    rep.line("|---|---|---|---|---|---|");
    for &k in &opts.remote_sessions {
        progress(&format!("remote: {k} sessions on the server"));
        let mut lags: Vec<f64> = std::thread::scope(|s| {
            let h: Vec<_> = (0..k)
                .map(|_| s.spawn(|| bare_client(url, &opts.vllm_model, &audio(secs))))
                .collect();
            h.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        lags.sort_by(f64::total_cmp);
        let p95 = percentile(&lags, 95.0);
        rep.line(format!(
            "| {k} | {} | {} | {} | {} | {} |",
            lags.len(),
            ms(percentile(&lags, 50.0)),
            ms(p95),
            ms(lags.last().copied().unwrap_or(f64::NAN)),
            if p95 < 500.0 * MS as f64 { "yes" } else { "no" }
        ));
    }
}
