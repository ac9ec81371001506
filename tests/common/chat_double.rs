// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A double of an OpenAI-compatible chat server on 127.0.0.1: `POST
//! /v1/chat/completions` over HTTP/1.1, one thread per connection, each
//! connection closed after its answer.
//!
//! It "translates" the last user message into the language whose code is
//! in parentheses in the system message ("… into Spanish (es). …"): `[es]`
//! and the text. Streamed (`"stream": true`) as vLLM streams: chunked
//! server-sent events, a first chunk with the role, one chunk per word, a
//! last one with the `finish_reason`, then `data: [DONE]`; else one JSON
//! completion. Errors have OpenAI's shape (`{"error": {"message", ...}}`).
//! It records every request, and stops (its port closed) when dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The model it serves unless told another.
pub const SERVED_MODEL: &str = "translator";

/// What it does wrong, every time unless said otherwise.
#[derive(Debug, Clone, Default)]
pub struct ChatFaults {
    /// Waits this long before answering.
    pub delay: Option<Duration>,
    /// Answers its first this many requests with HTTP 500.
    pub fail_first: usize,
    /// Answers 401 unless the request carries `Authorization: Bearer KEY`.
    pub api_key: Option<String>,
    /// Serves this model, not [`SERVED_MODEL`]; others get a 404 as vLLM's.
    pub served_model: Option<String>,
    /// Cuts the connection after the first word of a streamed answer.
    pub cut_stream: bool,
    /// Sends `: ping` comment lines between the chunks, as llama.cpp does.
    pub pings: bool,
    /// Sends a usage chunk with empty `choices` before `[DONE]`, as vLLM
    /// does with `stream_options.include_usage`.
    pub usage_chunk: bool,
    /// Answers this text instead of the translation ("" or blanks: empty).
    pub answer: Option<String>,
    /// Ends with `finish_reason: length`.
    pub finish_length: bool,
    /// Streamed answers: the first word comes this long after the request
    /// gets its slot, the rest at `delay` (as a model streams its tokens);
    /// unset, all of it at `delay`.
    pub first_token: Option<Duration>,
    /// Answers at most this many requests at once (the `delay` each, one
    /// after the other); the others wait their turn inside it, as on
    /// llama-cpp-python's server or a `llama-server` with one slot.
    pub slots: Option<usize>,
}

/// A request as it came.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
    /// When it came.
    pub at: Instant,
}

pub struct ChatDouble {
    port: u16,
    stop: Arc<AtomicBool>,
    killed: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    accept: Option<JoinHandle<()>>,
}

/// What the connections share.
struct Shared {
    faults: ChatFaults,
    requests: Arc<Mutex<Vec<Recorded>>>,
    failed: AtomicUsize,
    /// The requests waiting for a slot (their tickets, in order) and how
    /// many are being answered.
    line: Mutex<(VecDeque<u64>, usize)>,
    turn: Condvar,
    tickets: AtomicU64,
    /// [`ChatDouble::kill`]: connections in progress are cut.
    killed: Arc<AtomicBool>,
}

impl Shared {
    /// Waits for a free slot, in turn; what to hand back when answered.
    fn wait_for_slot(&self) -> Option<SlotGuard<'_>> {
        let slots = self.faults.slots?;
        let ticket = self.tickets.fetch_add(1, Ordering::SeqCst);
        let mut line = self.line.lock().unwrap();
        line.0.push_back(ticket);
        while line.0.front() != Some(&ticket) || line.1 >= slots {
            line = self.turn.wait(line).unwrap();
        }
        line.0.pop_front();
        line.1 += 1;
        self.turn.notify_all();
        Some(SlotGuard(self))
    }

    /// Sleeps `delay`, or less if the double is killed meanwhile: whether
    /// it still lives.
    fn sleep_alive(&self, delay: Duration) -> bool {
        let until = Instant::now() + delay;
        while Instant::now() < until {
            if self.killed.load(Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5).min(until - Instant::now()));
        }
        !self.killed.load(Ordering::SeqCst)
    }
}

/// A request's slot, freed when its answer is done.
struct SlotGuard<'a>(&'a Shared);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        self.0.line.lock().unwrap().1 -= 1;
        self.0.turn.notify_all();
    }
}

impl ChatDouble {
    pub fn start(faults: ChatFaults) -> ChatDouble {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let killed = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let shared = Arc::new(Shared {
            faults,
            requests: requests.clone(),
            failed: AtomicUsize::new(0),
            line: Mutex::new((VecDeque::new(), 0)),
            turn: Condvar::new(),
            tickets: AtomicU64::new(0),
            killed: killed.clone(),
        });
        let stopping = stop.clone();
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let shared = shared.clone();
                std::thread::spawn(move || serve(conn, &shared));
            }
        });
        ChatDouble {
            port,
            stop,
            killed,
            requests,
            accept: Some(accept),
        }
    }

    /// The API base, as `translate-url` lists it.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Dies as a server does: requests being answered or waiting are cut
    /// off without an answer, and no connection is taken any more.
    pub fn kill(&mut self) {
        self.killed.store(true, Ordering::SeqCst);
        self.stop_accepting();
    }

    fn stop_accepting(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then ends and closes the port.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }

    /// The JSON bodies of the requests, in order.
    pub fn bodies(&self) -> Vec<Value> {
        self.requests().into_iter().map(|r| r.body).collect()
    }
}

impl Drop for ChatDouble {
    fn drop(&mut self) {
        self.stop_accepting();
    }
}

/// One connection: one request, one answer.
fn serve(conn: TcpStream, shared: &Shared) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let Some(Incoming {
        path,
        headers,
        body,
    }) = read_request(&mut reader)
    else {
        return;
    };
    let authorization = header(&headers, "authorization");
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.requests.lock().unwrap().push(Recorded {
        path: path.clone(),
        authorization: authorization.clone(),
        body: body.clone(),
        at: Instant::now(),
    });
    let mut conn = conn;
    let faults = &shared.faults;
    if path != "/v1/chat/completions" {
        return respond_json(&mut conn, 404, &json!({"detail": "Not Found"}));
    }
    if let Some(key) = &faults.api_key {
        if authorization.as_deref() != Some(&format!("Bearer {key}")) {
            let error = openai_error("Unauthorized", "AuthenticationError", 401);
            return respond_json(&mut conn, 401, &error);
        }
    }
    if shared.failed.fetch_add(1, Ordering::SeqCst) < faults.fail_first {
        let error = openai_error(
            "EngineCore encountered an issue.",
            "InternalServerError",
            500,
        );
        return respond_json(&mut conn, 500, &error);
    }
    let served = faults.served_model.as_deref().unwrap_or(SERVED_MODEL);
    let model = body["model"].as_str().unwrap_or_default();
    if model != served {
        let message = format!("The model `{model}` does not exist.");
        return respond_json(
            &mut conn,
            404,
            &openai_error(&message, "NotFoundError", 404),
        );
    }
    let _slot = shared.wait_for_slot();
    let streamed = body["stream"].as_bool() == Some(true);
    let delay = faults.delay.unwrap_or_default();
    let first = faults.first_token.filter(|_| streamed).unwrap_or(delay);
    if !shared.sleep_alive(first) {
        let _ = conn.shutdown(Shutdown::Both);
        return;
    }
    let text = faults.answer.clone().unwrap_or_else(|| translate(&body));
    if streamed {
        let rest = delay.saturating_sub(first);
        stream_answer(&mut conn, shared, model, &text, rest);
    } else {
        let reason = finish_reason(faults);
        respond_json(&mut conn, 200, &completion(model, &text, reason));
    }
}

/// A request as read off the connection.
struct Incoming {
    path: String,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn read_request(reader: &mut impl BufRead) -> Option<Incoming> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let length: usize = header(&headers, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Incoming {
        path,
        headers,
        body,
    })
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
}

/// `[code] text`: the code from the system message's parentheses, the text
/// the last user message's.
fn translate(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let content = |role: &str, last: bool| {
        let mut of_role = messages.iter().filter(|m| m["role"] == role);
        let m = if last {
            of_role.next_back()
        } else {
            of_role.next()
        };
        m.and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    let system = content("system", false);
    let code = system
        .rsplit_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or("??", |(code, _)| code);
    format!("[{code}] {}", content("user", true))
}

fn finish_reason(faults: &ChatFaults) -> &'static str {
    if faults.finish_length {
        "length"
    } else {
        "stop"
    }
}

fn openai_error(message: &str, kind: &str, code: u16) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

fn completion(model: &str, text: &str, reason: &str) -> Value {
    json!({
        "id": "chatcmpl-double",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": reason,
        }],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    })
}

fn respond_json(conn: &mut TcpStream, status: u16, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        reason_phrase(status),
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
    let _ = conn.flush();
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        401 => "Unauthorized",
        404 => "Not Found",
        _ => "Internal Server Error",
    }
}

/// The answer as server-sent events, each in its own HTTP chunk.
fn stream_answer(conn: &mut TcpStream, shared: &Shared, model: &str, text: &str, rest: Duration) {
    let faults = &shared.faults;
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n\
                Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    let _ = conn.write_all(head.as_bytes());
    let chunk = |delta: Value, reason: Option<&str>| {
        let choice = json!({"index": 0, "delta": delta, "finish_reason": reason});
        event(
            &json!({"id": "chatcmpl-double", "object": "chat.completion.chunk",
                      "model": model, "choices": [choice]}),
        )
    };
    let ping = || ": ping - 2026-12-01 00:00:00.000000+00:00\n\n".to_owned();
    send_chunk(
        conn,
        &chunk(json!({"role": "assistant", "content": ""}), None),
    );
    for (k, word) in text.split_inclusive(' ').enumerate() {
        if faults.pings {
            send_chunk(conn, &ping());
        }
        send_chunk(conn, &chunk(json!({"content": word}), None));
        if faults.cut_stream && k == 0 {
            let _ = conn.shutdown(Shutdown::Both);
            return;
        }
        if k == 0 && !shared.sleep_alive(rest) {
            let _ = conn.shutdown(Shutdown::Both);
            return;
        }
    }
    send_chunk(conn, &chunk(json!({}), Some(finish_reason(faults))));
    if faults.usage_chunk {
        let usage = json!({"id": "chatcmpl-double", "object": "chat.completion.chunk",
                           "model": model, "choices": [],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}});
        send_chunk(conn, &event(&usage));
    }
    send_chunk(conn, "data: [DONE]\n\n");
    let _ = conn.write_all(b"0\r\n\r\n");
    let _ = conn.flush();
}

fn event(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// One HTTP chunk, sent at once.
fn send_chunk(conn: &mut TcpStream, data: &str) {
    let _ = write!(conn, "{:x}\r\n{data}\r\n", data.len());
    let _ = conn.flush();
}
