// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The tracer's HTTP server, on tiny_http. Its accept thread and its pool
//! read the requests, so a client that stalls holds one of the pool's
//! threads and nothing of the elements'; one thread of ours answers the
//! requests in turn, each from one reading of the elements. GET (or HEAD)
//! of `/metrics`, `/healthz` and `/readyz`.

use std::sync::Arc;
use std::thread::JoinHandle;

use tiny_http::{Header, Method, Request, Response};

use super::elements::Elements;
use super::snapshot::{self, ElementFigures};
use super::{exposition, health, CAT};

const TEXT: &str = "text/plain; charset=utf-8";

/// A running server: dropping it stops it.
pub(super) struct Server {
    http: Arc<tiny_http::Server>,
    answering: Option<JoinHandle<()>>,
}

/// Listens on `address` and answers from a thread of its own; why not, in
/// words for the log and the elements' WARNING.
pub(super) fn start(address: &str, elements: Arc<Elements>) -> Result<Server, String> {
    let cannot = |why: &dyn std::fmt::Display| {
        format!(
            "voxtralrtmetrics cannot serve on {address}: {why}; the pipeline runs on without \
             metrics (set GST_TRACERS=\"voxtralrtmetrics(address=HOST:PORT)\" to another)"
        )
    };
    let http = Arc::new(tiny_http::Server::http(address).map_err(|e| cannot(&e))?);
    let answering = std::thread::Builder::new()
        .name("voxtralrt-metrics".into())
        .spawn({
            let http = http.clone();
            move || answer_all(&http, &elements)
        })
        .map_err(|e| cannot(&format!("no thread: {e}")))?;
    Ok(Server {
        http,
        answering: Some(answering),
    })
}

impl Server {
    pub(super) fn address(&self) -> String {
        self.http.server_addr().to_string()
    }
}

impl Drop for Server {
    /// Ends the answering thread (after the answer it may be writing), then
    /// tiny_http's server: its accept thread closes the listening socket at
    /// once, and the port is free.
    fn drop(&mut self) {
        self.http.unblock();
        if let Some(answering) = self.answering.take() {
            let _ = answering.join();
        }
    }
}

fn answer_all(http: &tiny_http::Server, elements: &Elements) {
    loop {
        match http.recv() {
            Ok(request) => answer(request, elements),
            // Unblocked by a stop, or the listening socket failed.
            Err(e) => {
                gst::debug!(CAT, "no more requests: {e}");
                return;
            }
        }
    }
}

fn answer(request: Request, elements: &Elements) {
    let page = page(request.method(), request.url(), || {
        snapshot::read(&elements.alive())
    });
    let url = request.url().to_owned();
    let response = Response::from_string(page.body)
        .with_status_code(page.status)
        .with_header(content_type(page.content_type));
    if let Err(e) = request.respond(response) {
        gst::debug!(CAT, "answering {url}: {e}");
    }
}

fn content_type(value: &'static str) -> Header {
    Header::from_bytes("Content-Type", value).expect("an ASCII header")
}

/// What a request gets.
#[derive(Debug, PartialEq, Eq)]
struct Page {
    status: u16,
    content_type: &'static str,
    body: String,
}

impl Page {
    fn text(status: u16, body: &str) -> Page {
        Page {
            status,
            content_type: TEXT,
            body: body.to_owned(),
        }
    }
}

/// The page for `method` and `url`, with the elements read once by `read`
/// where the page needs them.
fn page(method: &Method, url: &str, read: impl FnOnce() -> Vec<ElementFigures>) -> Page {
    if !matches!(method, Method::Get | Method::Head) {
        return Page::text(405, "GET only\n");
    }
    let path = url.split('?').next().unwrap_or_default();
    match path {
        "/metrics" => match exposition::render(read()) {
            Ok(body) => Page {
                status: 200,
                content_type: exposition::CONTENT_TYPE,
                body,
            },
            Err(_) => Page::text(500, "the metrics could not be written\n"),
        },
        "/healthz" => Page::text(200, "ok\n"),
        "/readyz" => {
            let (ready, body) = health::readyz(&read());
            Page::text(if ready { 200 } else { 503 }, &body)
        }
        _ => Page::text(
            404,
            "voxtralrtmetrics serves /metrics, /healthz and /readyz\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never_read() -> Vec<ElementFigures> {
        panic!("this page reads no element")
    }

    #[test]
    fn liveness_and_unknown_pages_read_no_element() {
        assert_eq!(
            page(&Method::Get, "/healthz", never_read),
            Page::text(200, "ok\n")
        );
        assert_eq!(page(&Method::Get, "/other", never_read).status, 404);
        assert_eq!(page(&Method::Post, "/metrics", never_read).status, 405);
    }

    #[test]
    fn a_page_reads_the_elements_once() {
        let mut reads = 0;
        let metrics = page(&Method::Head, "/metrics?x=1", || {
            reads += 1;
            Vec::new()
        });
        assert_eq!(reads, 1);
        assert_eq!(metrics.status, 200);
        assert_eq!(metrics.content_type, exposition::CONTENT_TYPE);
        assert!(metrics.body.contains("voxtralrt_build_info{"));
        let readyz = page(&Method::Get, "/readyz", Vec::new);
        assert_eq!(readyz.status, 503);
    }
}
