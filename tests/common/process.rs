// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Child processes for the tests that run examples, servers and ffmpeg:
//! killed when the test ends however it ends, and waited for with a
//! deadline, so that no test hangs or leaves a process behind.

use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Builds the examples once, in this test binary's profile, and returns
/// the directory holding them.
pub fn examples_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| super::cargo_build(&["--examples"]).join("examples"))
        .clone()
}

/// A child process that is killed when dropped (a failed assertion
/// included).
pub struct Guarded {
    child: Child,
    what: String,
}

impl Guarded {
    pub fn spawn(command: &mut Command, what: &str) -> Guarded {
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what}: {e}"));
        Guarded {
            child,
            what: what.to_owned(),
        }
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits for the process to exit on its own; None if it still runs
    /// after `timeout`.
    pub fn wait_for(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Ok(None) => return None,
                Err(e) => panic!("waiting for {}: {e}", self.what),
            }
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines a child writes on its stdout, as they come; the reading
/// thread drains the pipe to the end, so the child never blocks on it.
pub fn stdout_lines(guarded: &mut Guarded) -> Receiver<String> {
    use std::io::BufRead;
    let stdout = guarded
        .child()
        .stdout
        .take()
        .expect("the child's stdout is piped");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// The first line from `lines` that starts with `prefix`, within `timeout`.
pub fn line_starting_with(
    lines: &Receiver<String>,
    prefix: &str,
    timeout: Duration,
) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return Some(line),
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// A TCP listener on 127.0.0.1, on a port this test process has not handed
/// out before. The element remembers failed servers by address for the
/// whole process (their rest, src/remote/rack.rs), and Linux gives a freed
/// port out again, so a port that an earlier test's refusing or killed
/// server had must not come back as a healthy server.
pub fn unused_tcp_listener() -> (std::net::TcpListener, u16) {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut handed_out = HANDED_OUT.lock().unwrap();
    // The ones refused stay bound until the search ends, so the next bind
    // cannot be given the same port again.
    let mut refused = Vec::new();
    loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if !handed_out.contains(&port) {
            handed_out.push(port);
            return (listener, port);
        }
        refused.push(listener);
    }
}

/// A TCP port on 127.0.0.1 for a server the test starts: free a moment ago,
/// and not handed out before in this process (`unused_tcp_listener`).
pub fn unused_tcp_port() -> u16 {
    unused_tcp_listener().1
}

/// A UDP port on 127.0.0.1 that was free a moment ago (the OS picks it).
pub fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("binding a UDP socket on 127.0.0.1")
        .port()
}

/// Whether a UDP socket is bound on 127.0.0.1:`port` (Linux
/// /proc/net/udp): how a test knows that a listener is up.
pub fn udp_port_bound(port: u16) -> bool {
    let local = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/udp")
        .map(|table| {
            table
                .lines()
                .skip(1)
                .any(|l| l.split_whitespace().nth(1) == Some(local.as_str()))
        })
        .unwrap_or(false)
}

/// Waits until `ready` holds, checking every 50 ms; false after `timeout`.
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ready()
}
