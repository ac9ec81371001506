// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Headless Chromium (Debian `chromium`) driven through its DevTools
//! protocol, and the small blocking WebSocket client that speaks it
//! (tests/webrtc.rs, tests/hls.rs): start a browser with a fresh profile,
//! open a page, evaluate script in it, take a screenshot.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

use super::process::Guarded;

/// Hard limit for anything the driver waits for.
const WAIT: Duration = Duration::from_secs(90);

/// Collects the lines of a child's output stream, as they come, each with
/// `prefix`.
pub fn collect_lines(
    stream: impl std::io::Read + Send + 'static,
    lines: Arc<Mutex<Vec<String>>>,
    prefix: &'static str,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            lines.lock().unwrap().push(format!("{prefix}{line}"));
        }
    });
}

/// A WebSocket client with a short read timeout, so one thread can both
/// poll it and write to it.
pub struct Socket(pub WebSocket<TcpStream>);

impl Socket {
    pub fn connect(url: &str) -> Socket {
        let address = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .unwrap()
            .to_owned();
        let stream = TcpStream::connect(address).expect("connecting");
        let (socket, _) = tungstenite::client(url, stream).expect("the WebSocket handshake");
        socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        Socket(socket)
    }

    pub fn send(&mut self, value: &Value) {
        self.send_text(&value.to_string());
    }

    pub fn send_text(&mut self, text: &str) {
        self.0
            .send(Message::text(text.to_owned()))
            .expect("sending on the WebSocket");
    }

    /// The next JSON message, if one comes within the read timeout.
    pub fn poll(&mut self) -> Option<Value> {
        match self.0.read() {
            Ok(Message::Text(text)) => serde_json::from_str(text.as_str()).ok(),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("the WebSocket failed: {e}"),
        }
    }

    /// The next message of type `kind`, within WAIT.
    pub fn wait_for(&mut self, kind: &str) -> Value {
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(message) = self.poll() {
                if message["type"] == kind {
                    return message;
                }
            }
        }
        panic!("no {kind} message in {WAIT:?}");
    }
}

/// Headless Chromium with a fresh profile, killed when dropped.
pub struct Chromium {
    child: Guarded,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Chromium {
    pub fn start(profile: &Path) -> Chromium {
        let mut child = Guarded::spawn(
            Command::new("/usr/bin/chromium")
                .args([
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--no-first-run",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--autoplay-policy=no-user-gesture-required",
                    "--remote-debugging-port=0",
                    "--window-size=1000,520",
                ])
                .arg(format!("--user-data-dir={}", profile.display()))
                .arg("about:blank")
                .stdout(Stdio::null())
                .stderr(Stdio::piped()),
            "/usr/bin/chromium (Debian package chromium)",
        );
        let lines = Arc::new(Mutex::new(Vec::new()));
        collect_lines(child.child().stderr.take().unwrap(), lines.clone(), "");
        Chromium { child, lines }
    }

    /// The browser's DevTools WebSocket address, from its first lines.
    pub fn devtools_url(&mut self) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let lines = self.lines.lock().unwrap();
            if let Some(line) = lines.iter().find(|l| l.contains("DevTools listening on ")) {
                return line.rsplit(' ').next().unwrap().to_owned();
            }
            drop(lines);
            if let Ok(Some(status)) = self.child.child().try_wait() {
                panic!(
                    "chromium ended ({status}): {:?}",
                    self.lines.lock().unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "chromium gave no DevTools address"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A page driven through the DevTools protocol (flat sessions over the
/// browser's one WebSocket).
pub struct DevTools {
    socket: Socket,
    next_id: u64,
    session: Option<String>,
}

impl DevTools {
    pub fn open(browser_url: &str, page: &str) -> DevTools {
        let mut tools = DevTools {
            socket: Socket::connect(browser_url),
            next_id: 1,
            session: None,
        };
        let target = tools.call("Target.createTarget", json!({"url": page}));
        let target = target["targetId"].as_str().unwrap().to_owned();
        let attached = tools.call(
            "Target.attachToTarget",
            json!({"targetId": target, "flatten": true}),
        );
        tools.session = Some(attached["sessionId"].as_str().unwrap().to_owned());
        tools
    }

    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        self.socket.send(&message);
        let deadline = Instant::now() + WAIT;
        while Instant::now() < deadline {
            if let Some(reply) = self.socket.poll() {
                if reply["id"] == id {
                    assert!(reply["error"].is_null(), "{method}: {reply}");
                    return reply["result"].clone();
                }
            }
        }
        panic!("{method}: no reply in {WAIT:?}");
    }

    /// Evaluates `expression` in the page; its value, which must be JSON.
    pub fn evaluate(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        result["result"]["value"].clone()
    }

    pub fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let png = base64_decode(shot["data"].as_str().expect("screenshot data"));
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        std::fs::write(path, png).unwrap();
    }
}

/// Standard base64 (the screenshot's encoding), without a crate for 20
/// lines.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    } as u32;
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | value(c) << (18 - 6 * i));
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}
