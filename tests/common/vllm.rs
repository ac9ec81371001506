// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Real vLLM servers on this machine's CPU (scripts/servers/vllm-server): the
//! tiny Voxtral checkpoint for engine=vllm, the tiny chat model for
//! translation. Each is a guarded process, stopped with its engine
//! processes on drop.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::process::Guarded;

/// The name scripts/servers/vllm-server serves the tiny chat model under.
pub const CHAT_MODEL: &str = "tiny-translator";

pub fn script() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/servers/vllm-server")
}

/// Whether the vLLM venv is there; if not, says the test is skipped.
pub fn installed(test: &str) -> bool {
    super::installed_by("vllm-server", test, "no vLLM installation")
}

/// A vllm serve process on a port of its own, stopped with its engine
/// processes on drop.
pub struct Server {
    pub process: Guarded,
    pub port: u16,
    pub log: std::path::PathBuf,
}

impl Server {
    pub fn start(port: Option<u16>, args: &[&str]) -> Server {
        Server::start_with(port, args, &[])
    }

    /// With `env` for scripts/servers/vllm-server (DELAY_MS: another delay).
    pub fn start_with(port: Option<u16>, args: &[&str], env: &[(&str, &str)]) -> Server {
        Server::spawn("run", port, args, env)
    }

    /// The tiny chat model on /v1/chat/completions, as [`CHAT_MODEL`].
    pub fn chat(args: &[&str]) -> Server {
        Server::spawn("chat", None, args, &[])
    }

    fn spawn(command: &str, port: Option<u16>, args: &[&str], env: &[(&str, &str)]) -> Server {
        let port = port.unwrap_or_else(super::process::unused_tcp_port);
        let log = super::scratch_dir(&format!("vllm-{port}")).join("server.log");
        let process = Guarded::spawn(
            Command::new(script())
                .arg(command)
                .args(args)
                .envs(env.iter().copied())
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(std::fs::File::create(&log).unwrap())
                .stderr(Stdio::from(
                    std::fs::File::options().append(true).open(&log).unwrap(),
                )),
            &format!("scripts/servers/vllm-server {command}"),
        );
        let mut server = Server { process, port, log };
        server.wait_healthy();
        server
    }

    /// The realtime endpoint.
    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/v1/realtime", self.port)
    }

    /// The OpenAI-compatible base (`/v1/chat/completions` below it).
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_healthy(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.process.child().try_wait() {
                panic!("vllm serve exited ({status}):\n{}", self.log_text());
            }
            if let Ok(mut tcp) = std::net::TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = tcp.write_all(b"GET /health HTTP/1.0\r\n\r\n");
                let mut answer = String::new();
                let _ = tcp.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("vllm serve not healthy after 300 s:\n{}", self.log_text());
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Kills the server and its engine processes at once, as a crash would.
    pub fn kill(&mut self) {
        self.process.kill_now();
    }
}
