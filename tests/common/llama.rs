// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! llama.cpp's chat servers on this machine's CPU (scripts/servers/llama-server):
//! its own `llama-server` (one model, or a router over a folder of them)
//! and llama-cpp-python's server, each serving the tiny GGUF chat models
//! made by scripts/servers/llama/make_tiny_chat_gguf.py. Each is a guarded
//! process, stopped on drop. Beside them, a tap: a relay that keeps the
//! bytes a server sent, so a test sees what the client read.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::process::Guarded;

/// The name the servers serve the tiny model under ("hola mundo").
pub const CHAT_MODEL: &str = "tiny-translator";
/// The router's name of the long model ("hola mundo 1 2 ... 500").
pub const LONG_MODEL: &str = "tiny-translator-long";
/// The long model's answer.
pub fn long_answer() -> String {
    let count: Vec<String> = (1..=500).map(|i| i.to_string()).collect();
    format!("hola mundo {}", count.join(" "))
}

pub fn script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/servers/llama-server")
}

/// Whether scripts/servers/llama-server installed the servers; if not, says the
/// test is skipped.
pub fn installed(test: &str) -> bool {
    super::installed_by(
        "llama-server",
        test,
        "llama.cpp's servers are not installed",
    )
}

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// llama.cpp's `llama-server`, one model, as [`CHAT_MODEL`].
    LlamaServer,
    /// `llama-server --models-dir`: each model by its file name.
    Router,
    /// llama-cpp-python's `python3 -m llama_cpp.server`, as [`CHAT_MODEL`].
    Python,
}

/// Which model a one-model server serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    /// "hola mundo".
    Tiny,
    /// [`long_answer`].
    Long,
}

pub struct Server {
    pub process: Guarded,
    pub port: u16,
    pub log: std::path::PathBuf,
    kind: Kind,
}

impl Server {
    /// Starts `kind` serving `model` with `args` for the server, and waits
    /// until it answers.
    pub fn start(kind: Kind, model: Model, args: &[&str]) -> Server {
        let command = match kind {
            Kind::LlamaServer => "run",
            Kind::Router => "router",
            Kind::Python => "python",
        };
        let model = match model {
            Model::Tiny => "tiny",
            Model::Long => "long",
        };
        let port = super::process::unused_tcp_port();
        let log = super::scratch_dir(&format!("llama-{port}")).join("server.log");
        let process = Guarded::spawn(
            Command::new(script())
                .arg(command)
                .args(args)
                .env("PORT", port.to_string())
                .env("MODEL", model)
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(Stdio::from(
                    std::fs::File::options().append(true).open(&log).unwrap(),
                )),
            &format!("scripts/servers/llama-server {command}"),
        );
        let mut server = Server {
            process,
            port,
            log,
            kind,
        };
        server.wait_ready();
        server
    }

    /// The OpenAI-compatible base (`/v1/chat/completions` below it).
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Ready once it lists its models (llama-server answers 503 while it
    /// loads one).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.process.child().try_wait() {
                panic!("{:?} exited ({status}):\n{}", self.kind, self.log_text());
            }
            if let Some((status, _)) = get(self.port, "/v1/models") {
                if status == 200 {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!(
            "{:?} not ready after 120 s:\n{}",
            self.kind,
            self.log_text()
        );
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// A GET on 127.0.0.1:`port`: the status and the body.
pub fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).ok()?;
    tcp.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        tcp,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = Vec::new();
    tcp.read_to_end(&mut answer).ok()?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1)?.parse().ok()?;
    Some((status, body_of(&answer)))
}

/// A POST of the JSON `body` to `path`, sent and left to the caller to
/// read (or not).
pub fn post(port: u16, path: &str, body: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        tcp,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    tcp
}

/// The body of one HTTP response, its chunked transfer coding undone.
pub fn body_of(response: &str) -> String {
    let Some((head, mut rest)) = response.split_once("\r\n\r\n") else {
        return String::new();
    };
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return rest.to_owned();
    }
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || after.len() < size {
            break;
        }
        body.push_str(&after[..size]);
        rest = after[size..].strip_prefix("\r\n").unwrap_or(&after[size..]);
    }
    body
}

/// What the server sent back on each connection, in the order they came.
type Connections = Arc<Mutex<Vec<Arc<Mutex<Vec<u8>>>>>>;

/// A relay to a server on 127.0.0.1 that keeps what the server sent back.
pub struct Tap {
    port: u16,
    connections: Connections,
    stop: Arc<AtomicBool>,
}

impl Tap {
    pub fn start(server_port: u16) -> Tap {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections: Connections = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (kept, stopping) = (connections.clone(), stop.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else {
                    continue;
                };
                let sent_back: Arc<Mutex<Vec<u8>>> = Arc::default();
                kept.lock().unwrap().push(sent_back.clone());
                relay(client, server, sent_back);
            }
        });
        Tap {
            port,
            connections,
            stop,
        }
    }

    /// The base URL of the server through the tap.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// What the server sent back so far on the `n`th connection (from 0;
    /// empty before it opened).
    pub fn sent_back(&self, n: usize) -> String {
        let connections = self.connections.lock().unwrap();
        connections.get(n).map_or_else(String::new, |bytes| {
            String::from_utf8_lossy(&bytes.lock().unwrap()).into_owned()
        })
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies each way until either side closes, keeping the server's bytes.
fn relay(client: TcpStream, server: TcpStream, kept: Arc<Mutex<Vec<u8>>>) {
    let (mut client_in, mut server_out) =
        (client.try_clone().unwrap(), server.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut client_in, &mut server_out);
        let _ = server_out.shutdown(Shutdown::Write);
    });
    let (mut server_in, mut client_out) = (server, client);
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        while let Ok(n) = server_in.read(&mut buffer) {
            // Kept before the client has it: what it read is there.
            kept.lock().unwrap().extend_from_slice(&buffer[..n]);
            if n == 0 || client_out.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        let _ = client_out.shutdown(Shutdown::Both);
    });
}
