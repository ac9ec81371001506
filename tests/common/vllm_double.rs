// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A vLLM realtime server double on 127.0.0.1, faithful to vLLM 0.32's
//! protocol (`entrypoints/speech_to_text/realtime/connection.py`) and backed
//! by the real engine with a fixture model, so the remote path's words and
//! times can be checked against known ones. The client build (no `local`
//! feature) has no engine: there the tone fixture's stand-in
//! (`common::tone_stand_in`) runs instead.
//!
//! Like vLLM: `session.created` on connect; `session.update {model}` checked
//! (`model_not_found`), no reply on success; `commit` starts an utterance;
//! audio arrives as base64 PCM16 in `append`s; one `transcription.delta` per
//! 80 ms model step, empty ones included, never merged; after
//! `commit {final}` the audio is padded with 17 steps of silence, then
//! `transcription.done {text}`; unknown types get `unknown_event`; a binary
//! frame closes the socket; an API key is checked on the upgrade (401).
//! Unlike vLLM, a step is sent once its frame's look-ahead is in by the
//! engine's measure (12.5 ms later than vLLM's).
//!
//! Faults, each once over the server's life, counted in deltas sent; and
//! an idle watchdog as vLLM PR 46926 proposes (`idle_timeout`).

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(not(feature = "local"))]
use super::tone_stand_in::{ModelSpec, Stream};
use base64::Engine as _;
#[cfg(feature = "local")]
use gstvoxtralrt::engine::{ModelSpec, Stream};
use gstvoxtralrt::voxtral::StreamConfig;
use serde_json::{json, Value};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

const FRAME: u64 = 1280;
/// vLLM pads the audio after a final commit with 17 steps of silence.
const RIGHT_PAD_STEPS: usize = 17;

#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// The key the upgrade must carry (`Authorization: Bearer KEY`).
    pub api_key: Option<String>,
    /// Close the connection abruptly after this many deltas.
    pub drop_after: Option<u64>,
    /// Die after this many deltas: the connection is cut and the port
    /// closed, as when the server's process is killed.
    pub die_after: Option<u64>,
    /// Send a `processing_error` (and stop that utterance) after this many.
    pub processing_error_after: Option<u64>,
    /// Send an `invalid_audio` error after this many.
    pub invalid_audio_after: Option<u64>,
    /// Stop answering (the socket stays open) after this many.
    pub stall_after: Option<u64>,
    /// A binary frame, a non-JSON text and an unknown event after every
    /// this many deltas.
    pub garbage_every: Option<u64>,
    /// An utterance ends on its own (`done`) after this many deltas, as at
    /// vLLM's max_model_len.
    pub max_deltas_per_utterance: Option<u64>,
    /// Each step takes this long (a server slower than real time).
    pub step_time: Option<Duration>,
    /// The delay it serves (ms), if not 480: a server whose tekken.json
    /// says another.
    pub delay_ms: Option<u32>,
    /// Every utterance writes only blanks from this many steps on (a
    /// session that goes blank over speech, vLLM issue 47614).
    pub blank_after_steps: Option<u64>,
    /// The served model's name, if not [`SERVED_MODEL`].
    pub served_model: Option<String>,
    /// Serve wss:// with this certificate chain and key (PEM files).
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// A session that appends no audio (and starts no utterance) for this
    /// long gets an `idle_timeout` error and is closed, as with vLLM's
    /// proposed `VLLM_REALTIME_IDLE_TIMEOUT_S`. Not counted in deltas:
    /// every time it happens.
    pub idle_timeout: Option<Duration>,
}

/// A client connection, plain or TLS.
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
}

impl Conn {
    fn tcp(&self) -> &TcpStream {
        match self {
            Conn::Plain(tcp) => tcp,
            Conn::Tls(tls) => &tls.sock,
        }
    }

    /// Cuts the connection, as a crash would.
    fn cut(&mut self) {
        let tcp = match self {
            Conn::Plain(tcp) => tcp,
            Conn::Tls(tls) => &mut tls.sock,
        };
        let _ = tcp.shutdown(std::net::Shutdown::Both);
    }
}

impl std::io::Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(s) => s.read(buf),
            Conn::Tls(s) => s.read(buf),
        }
    }
}

impl std::io::Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Plain(s) => s.write(buf),
            Conn::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Conn::Plain(s) => s.flush(),
            Conn::Tls(s) => s.flush(),
        }
    }
}

/// The server side of TLS for `faults.tls`.
fn tls_config(cert: &std::path::Path, key: &std::path::Path) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    Arc::new(
        rustls::ServerConfig::builder()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
    )
}

/// What the double saw, for assertions.
#[derive(Debug, Default)]
pub struct Seen {
    pub connections: u64,
    pub utterances: u64,
    pub samples: u64,
    pub deltas: u64,
    /// Every `Authorization` header value received.
    pub authorizations: Vec<String>,
    /// Utterances running now (committed, not done): a generation the
    /// server keeps its KV cache for.
    pub generations_open: u64,
    /// Sessions closed by the idle watchdog.
    pub idle_closes: u64,
}

pub struct Double {
    pub port: u16,
    pub seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
}

pub const SERVED_MODEL: &str = "tone-double";

struct Shared {
    model: std::path::PathBuf,
    faults: Faults,
    seen: Arc<Mutex<Seen>>,
    deltas: AtomicU64,
    fired: Mutex<Vec<&'static str>>,
    stop: Arc<AtomicBool>,
}

impl Shared {
    /// Whether the fault `name` at `after` deltas fires now (once).
    fn fires(&self, name: &'static str, after: Option<u64>) -> bool {
        let Some(after) = after else { return false };
        if self.deltas.load(Ordering::SeqCst) < after {
            return false;
        }
        let mut fired = self.fired.lock().unwrap();
        if fired.contains(&name) {
            return false;
        }
        fired.push(name);
        true
    }
}

impl Double {
    /// Serves `model` (a fixture GGUF) on a free port.
    pub fn start(model: std::path::PathBuf, faults: Faults) -> Double {
        let (listener, port) = super::process::unused_tcp_listener();
        listener.set_nonblocking(true).unwrap();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            model,
            faults,
            seen: seen.clone(),
            deltas: AtomicU64::new(0),
            fired: Mutex::new(Vec::new()),
            stop: stop.clone(),
        });
        std::thread::spawn(move || {
            while !shared.stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((tcp, _)) => {
                        let shared = shared.clone();
                        std::thread::spawn(move || serve(tcp, &shared));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Double { port, seen, stop }
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/v1/realtime", self.port)
    }

    /// A URL on 127.0.0.1 where nothing listens (connections are refused).
    pub fn refusing_url() -> String {
        let port = super::process::unused_tcp_port();
        format!("ws://127.0.0.1:{port}/v1/realtime")
    }

    /// Samples `Seen::generations_open` every 20 ms for `span`, on a
    /// thread: (time since the call, generations open).
    pub fn watch_generations(
        &self,
        span: Duration,
    ) -> std::thread::JoinHandle<Vec<(Duration, u64)>> {
        let seen = self.seen.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut samples = Vec::new();
            while started.elapsed() < span {
                samples.push((started.elapsed(), seen.lock().unwrap().generations_open));
                std::thread::sleep(Duration::from_millis(20));
            }
            samples
        })
    }

    /// The wss:// URL, for a double serving TLS with a certificate for
    /// 127.0.0.1 (an address: a fresh root may not resolve localhost).
    pub fn tls_url(&self) -> String {
        format!("wss://127.0.0.1:{}/v1/realtime", self.port)
    }
}

impl Drop for Double {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn send(ws: &mut WebSocket<Conn>, value: Value) -> bool {
    ws.send(Message::text(value.to_string())).is_ok()
}

fn error(ws: &mut WebSocket<Conn>, message: &str, code: &str) -> bool {
    send(ws, json!({"type": "error", "error": message, "code": code}))
}

// tungstenite's callback type fixes the large error variant.
#[allow(clippy::result_large_err)]
fn serve(tcp: TcpStream, shared: &Shared) {
    tcp.set_nonblocking(false).unwrap();
    let conn = match &shared.faults.tls {
        None => Conn::Plain(tcp),
        Some((cert, key)) => {
            let Ok(server) = rustls::ServerConnection::new(tls_config(cert, key)) else {
                return;
            };
            Conn::Tls(Box::new(rustls::StreamOwned::new(server, tcp)))
        }
    };
    let key = shared.faults.api_key.clone();
    let seen = shared.seen.clone();
    let check = move |request: &Request, response: Response| -> Result<Response, ErrorResponse> {
        let auth = request
            .headers()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        seen.lock().unwrap().authorizations.extend(auth.clone());
        match &key {
            Some(key) if auth.as_deref() != Some(&format!("Bearer {key}")) => {
                let mut refused = ErrorResponse::new(Some("Unauthorized".into()));
                *refused.status_mut() = tungstenite::http::StatusCode::UNAUTHORIZED;
                Err(refused)
            }
            _ => Ok(response),
        }
    };
    let Ok(mut ws) = tungstenite::accept_hdr(conn, check) else {
        return;
    };
    shared.seen.lock().unwrap().connections += 1;
    send(
        &mut ws,
        json!({"type": "session.created", "id": "sess-double", "created": 0}),
    );
    let mut session = Session::default();
    let mut generation = Generation::new(shared);
    if shared.faults.idle_timeout.is_some() {
        // Reads wake up to look at the idle time.
        let _ = ws
            .get_ref()
            .tcp()
            .set_read_timeout(Some(Duration::from_millis(20)));
    }
    let mut active = Instant::now();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        generation.set(session.stream.is_some());
        let message = match ws.read() {
            Ok(Message::Text(t)) => t.to_string(),
            Ok(Message::Binary(_)) => return, // as vLLM 0.32: the socket closes
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if shared
                    .faults
                    .idle_timeout
                    .is_some_and(|t| active.elapsed() >= t)
                {
                    close_idle(&mut ws, shared);
                    return;
                }
                continue;
            }
            Ok(Message::Close(_)) | Err(_) => return,
            Ok(_) => continue,
        };
        let Ok(event) = serde_json::from_str::<Value>(&message) else {
            if !error(&mut ws, "Invalid JSON", "invalid_json") {
                return;
            }
            continue;
        };
        if starts_activity(&session, &event) {
            active = Instant::now();
        }
        if !session.handle(&mut ws, shared, &event) {
            return;
        }
    }
}

/// What resets the idle watchdog (PR 46926): an append, or a commit that
/// starts a generation.
fn starts_activity(session: &Session, event: &Value) -> bool {
    match event.get("type").and_then(Value::as_str) {
        Some("input_audio_buffer.append") => true,
        Some("input_audio_buffer.commit") => {
            event.get("final").and_then(Value::as_bool) != Some(true) && session.stream.is_none()
        }
        _ => false,
    }
}

/// The idle watchdog fired: an `idle_timeout` error, then the close.
fn close_idle(ws: &mut WebSocket<Conn>, shared: &Shared) {
    shared.seen.lock().unwrap().idle_closes += 1;
    let _ = error(
        ws,
        "Session closed after no audio was received",
        "idle_timeout",
    );
    let _ = ws.close(None);
    let _ = ws.flush();
}

/// Keeps `Seen::generations_open` for one connection: whether its session
/// has a generation running, given back when the connection ends.
struct Generation<'a> {
    seen: &'a Mutex<Seen>,
    open: bool,
}

impl<'a> Generation<'a> {
    fn new(shared: &'a Shared) -> Self {
        Generation {
            seen: &shared.seen,
            open: false,
        }
    }

    fn set(&mut self, open: bool) {
        if open != std::mem::replace(&mut self.open, open) {
            let mut seen = self.seen.lock().unwrap();
            match open {
                true => seen.generations_open += 1,
                false => seen.generations_open -= 1,
            }
        }
    }
}

impl Drop for Generation<'_> {
    fn drop(&mut self) {
        self.set(false);
    }
}

#[derive(Default)]
struct Session {
    validated: bool,
    stream: Option<Stream>,
    /// Deltas of this utterance sent, and their text.
    steps: u64,
    text: String,
    stalled: bool,
}

impl Session {
    /// Handles one event; false closes the connection.
    fn handle(&mut self, ws: &mut WebSocket<Conn>, shared: &Shared, event: &Value) -> bool {
        match event.get("type").and_then(Value::as_str) {
            Some("session.update") => match event.get("model").and_then(Value::as_str) {
                None => error(ws, "Missing required field: model", "invalid_event"),
                Some(m) if m == shared.faults.served_model.as_deref().unwrap_or(SERVED_MODEL) => {
                    self.validated = true;
                    true
                }
                Some(other) => error(
                    ws,
                    &format!("The model `{other}` does not exist."),
                    "model_not_found",
                ),
            },
            Some("input_audio_buffer.commit") if !self.validated => error(
                ws,
                "Model not validated. Make sure to validate the model by sending a session.update event.",
                "model_not_validated",
            ),
            Some("input_audio_buffer.commit") => {
                if event.get("final").and_then(Value::as_bool) == Some(true) {
                    self.finish(ws, shared)
                } else {
                    self.begin(shared);
                    true
                }
            }
            Some("input_audio_buffer.append") => {
                let audio = event
                    .get("audio")
                    .and_then(Value::as_str)
                    .and_then(|a| base64::engine::general_purpose::STANDARD.decode(a).ok());
                let Some(pcm) = audio.filter(|a| !a.is_empty()) else {
                    return error(ws, "Invalid audio data", "invalid_audio");
                };
                let samples: Vec<f32> = pcm
                    .chunks_exact(2)
                    .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
                    .collect();
                shared.seen.lock().unwrap().samples += samples.len() as u64;
                self.feed(ws, shared, &samples)
            }
            other => error(ws, &format!("Unknown event type: {}", other.unwrap_or("None")), "unknown_event"),
        }
    }

    fn begin(&mut self, shared: &Shared) {
        if self.stream.is_some() {
            return; // "Generation already in progress, ignoring commit"
        }
        let mut stream = Stream::open(&ModelSpec::new(&shared.model), 1).unwrap();
        stream
            .begin(StreamConfig {
                delay_ms: shared.faults.delay_ms.unwrap_or(480),
                decode_interval_ms: 80,
            })
            .unwrap();
        self.stream = Some(stream);
        self.steps = 0;
        self.text.clear();
        self.stalled = false;
        shared.seen.lock().unwrap().utterances += 1;
    }

    fn feed(&mut self, ws: &mut WebSocket<Conn>, shared: &Shared, samples: &[f32]) -> bool {
        let Some(stream) = self.stream.as_mut() else {
            return true; // queued for an utterance that never starts
        };
        let updates = stream.feed(samples).unwrap();
        for update in updates {
            let frames = update.heard_until / FRAME;
            while self.steps < frames {
                let last = self.steps + 1 == frames;
                let text = if last {
                    update.text.clone()
                } else {
                    String::new()
                };
                match self.step(ws, shared, text) {
                    Step::Sent => {}
                    Step::Ended => return true,
                    Step::Close => return false,
                }
            }
        }
        true
    }

    fn finish(&mut self, ws: &mut WebSocket<Conn>, shared: &Shared) -> bool {
        if self.stream.is_none() {
            return true;
        }
        if !self.feed(ws, shared, &vec![0.0; RIGHT_PAD_STEPS * FRAME as usize]) {
            return false;
        }
        let Some(mut stream) = self.stream.take() else {
            return true; // ended on its own meanwhile
        };
        let rest = stream.finalize().unwrap().text;
        if !rest.is_empty() {
            self.stream = Some(stream);
            match self.step(ws, shared, rest) {
                Step::Close => return false,
                Step::Ended => return true,
                Step::Sent => {}
            }
            self.stream = None;
        }
        send(
            ws,
            json!({"type": "transcription.done", "text": self.text, "usage": {}}),
        )
    }

    /// Sends one step's delta, with whatever fault is due.
    fn step(&mut self, ws: &mut WebSocket<Conn>, shared: &Shared, text: String) -> Step {
        let f = &shared.faults;
        if self.stalled || shared.fires("stall", f.stall_after) {
            self.stalled = true;
            return Step::Ended;
        }
        if shared.fires("drop", f.drop_after) {
            ws.get_mut().cut();
            return Step::Close;
        }
        if shared.fires("die", f.die_after) {
            shared.stop.store(true, Ordering::SeqCst);
            ws.get_mut().cut();
            return Step::Close;
        }
        if shared.fires("processing_error", f.processing_error_after) {
            self.stream = None;
            let _ = error(ws, "engine step failed", "processing_error");
            return Step::Ended;
        }
        if shared.fires("invalid_audio", f.invalid_audio_after) {
            let _ = error(ws, "Invalid audio data", "invalid_audio");
        }
        if let Some(t) = f.step_time {
            std::thread::sleep(t);
        }
        let text = match f.blank_after_steps.is_some_and(|b| self.steps >= b) {
            true => String::new(),
            false => text,
        };
        self.text.push_str(&text);
        if !send(ws, json!({"type": "transcription.delta", "delta": text})) {
            return Step::Close;
        }
        self.steps += 1;
        let n = shared.deltas.fetch_add(1, Ordering::SeqCst) + 1;
        shared.seen.lock().unwrap().deltas += 1;
        if f.garbage_every.is_some_and(|k| n.is_multiple_of(k)) {
            let _ = ws.send(Message::binary(vec![1u8, 2, 3]));
            let _ = ws.send(Message::text("this is not json"));
            let _ = send(ws, json!({"type": "rate_limits.updated"}));
        }
        if f.max_deltas_per_utterance.is_some_and(|m| self.steps >= m) {
            self.stream = None;
            send(
                ws,
                json!({"type": "transcription.done", "text": self.text, "usage": {}}),
            );
            return Step::Ended;
        }
        Step::Sent
    }
}

enum Step {
    Sent,
    /// The utterance ended (or went silent): no more deltas for it.
    Ended,
    Close,
}
