// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The HTTP server of the tracer: std's blocking sockets, an accept thread
//! and a thread per connection with read and write timeouts, so that a
//! client that stalls holds only its own thread. Requests are GET (or HEAD)
//! of `/metrics`, `/healthz` and `/readyz`; each answer closes its
//! connection.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::snapshot::Elements;
use super::{exposition, health, CAT};

/// A client has this long to send its request, and to take the answer.
const TIMEOUT: Duration = Duration::from_secs(5);
/// Connections served at once; more are closed at once (a scraper makes
/// one at a time, a supervisor's probes a few).
const MAX_CONNECTIONS: usize = 32;
/// The longest request head read.
const MAX_HEAD: usize = 8192;

/// Listens on `address` and serves from a thread of its own; the address
/// bound, or why not.
pub(super) fn start(address: &str, elements: Arc<Elements>) -> Result<SocketAddr, String> {
    let cannot = |why: String| {
        format!(
            "voxtralrtmetrics cannot serve on {address}: {why}; the pipeline runs on without \
             metrics (set GST_TRACERS=\"voxtralrtmetrics(address=HOST:PORT)\" to another)"
        )
    };
    let target = address
        .to_socket_addrs()
        .map_err(|e| cannot(format!("not a HOST:PORT address ({e})")))?
        .next()
        .ok_or_else(|| cannot("the name has no address".into()))?;
    let listener = TcpListener::bind(target).map_err(|e| cannot(e.to_string()))?;
    let bound = listener.local_addr().map_err(|e| cannot(e.to_string()))?;
    std::thread::Builder::new()
        .name("voxtralrt-metrics".into())
        .spawn(move || accept(listener, elements))
        .map_err(|e| cannot(format!("no thread: {e}")))?;
    Ok(bound)
}

fn accept(listener: TcpListener, elements: Arc<Elements>) {
    let open = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            continue;
        };
        if open.fetch_add(1, Ordering::AcqRel) >= MAX_CONNECTIONS {
            open.fetch_sub(1, Ordering::AcqRel);
            gst::debug!(CAT, "{MAX_CONNECTIONS} connections open: closing a new one");
            continue;
        }
        let (open, elements) = (open.clone(), elements.clone());
        let spawned = std::thread::Builder::new()
            .name("voxtralrt-metrics-client".into())
            .spawn(move || {
                serve(stream, &elements);
                open.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            gst::warning!(CAT, "no thread for a metrics connection");
        }
    }
}

fn serve(mut stream: TcpStream, elements: &Elements) {
    let _ = stream.set_read_timeout(Some(TIMEOUT));
    let _ = stream.set_write_timeout(Some(TIMEOUT));
    let Some(head) = read_head(&mut stream) else {
        return;
    };
    let mut words = head.split_whitespace();
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        ("GET" | "HEAD", "/metrics") => (
            "200 OK",
            exposition::CONTENT_TYPE,
            exposition::render(&elements.read()),
        ),
        ("GET" | "HEAD", "/healthz") => ("200 OK", TEXT, "ok\n".to_owned()),
        ("GET" | "HEAD", "/readyz") => {
            let (ready, body) = health::readyz(&elements.read());
            let status = if ready {
                "200 OK"
            } else {
                "503 Service Unavailable"
            };
            (status, TEXT, body)
        }
        ("GET" | "HEAD", _) => (
            "404 Not Found",
            TEXT,
            "voxtralrtmetrics serves /metrics, /healthz and /readyz\n".to_owned(),
        ),
        _ => ("405 Method Not Allowed", TEXT, "GET only\n".to_owned()),
    };
    let mut answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    if method != "HEAD" {
        answer.push_str(&body);
    }
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

const TEXT: &str = "text/plain; charset=utf-8";

/// The request line and headers, up to the blank line; `None` if the
/// client sends none in time.
fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return None;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}
