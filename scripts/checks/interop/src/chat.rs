// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A stand-in for an OpenAI-compatible chat server on 127.0.0.1, for the
//! transcriber's translate pads: `POST /v1/chat/completions` over HTTP/1.1
//! answers `[code] ` and the last user message, `code` being what the
//! system message puts in parentheses ("... into Spanish (es). ..."), as
//! one plain JSON completion (a server may ignore `stream`; the client
//! reads either). One thread per connection, closed after its answer.
//! It stops listening when dropped.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// The model it serves.
pub const MODEL: &str = "translator";

pub struct ChatDouble {
    port: u16,
    stop: Arc<AtomicBool>,
    requests: Arc<AtomicUsize>,
    accept: Option<JoinHandle<()>>,
}

impl ChatDouble {
    pub fn start() -> ChatDouble {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(AtomicUsize::new(0));
        let (stopping, counted) = (stop.clone(), requests.clone());
        let accept = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let counted = counted.clone();
                std::thread::spawn(move || serve(conn, &counted));
            }
        });
        ChatDouble {
            port,
            stop,
            requests,
            accept: Some(accept),
        }
    }

    /// The API base, as `translate-url` takes it.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The chat completions answered.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for ChatDouble {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then ends and closes the port.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn serve(conn: TcpStream, requests: &AtomicUsize) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let Some((path, body)) = read_request(&mut reader) else {
        return;
    };
    let mut conn = conn;
    if path != "/v1/chat/completions" {
        return respond(&mut conn, "404 Not Found", &json!({"detail": "Not Found"}));
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    requests.fetch_add(1, Ordering::SeqCst);
    let completion = json!({
        "id": "chatcmpl-interop",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": translate(&body)},
            "finish_reason": "stop",
        }],
    });
    respond(&mut conn, "200 OK", &completion);
}

/// The path and body of one request.
fn read_request(reader: &mut impl BufRead) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_owned();
    let mut length = 0;
    loop {
        line.clear();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((path, body))
}

/// `[code] text`: the code in the system message's last parentheses, the
/// text of the last user message.
fn translate(body: &Value) -> String {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let content = |role: &str| {
        messages
            .iter()
            .filter(|m| m["role"] == role)
            .filter_map(|m| m["content"].as_str())
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let system = content("system").into_iter().next().unwrap_or_default();
    let code = system
        .rsplit_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map_or("??", |(code, _)| code);
    let text = content("user").pop().unwrap_or_default();
    format!("[{code}] {text}")
}

fn respond(conn: &mut TcpStream, status: &str, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(body.as_bytes());
    let _ = conn.flush();
}
