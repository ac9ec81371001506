// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A static file server on 127.0.0.1 for the browser tests (tests/hls.rs,
//! the WebVTT check of tests/speakers.rs): the files of one folder, and
//! named files from elsewhere; anything else is a 404.

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct Http {
    server: Arc<tiny_http::Server>,
    port: u16,
}

const SERVER_THREADS: usize = 4;

impl Http {
    /// Serves the files of `dir` (no subfolders, no dot files).
    pub fn serve(dir: &Path) -> Http {
        Http::serve_with(dir, Vec::new())
    }

    /// The same, and `aliases`: a name served from another path.
    pub fn serve_with(dir: &Path, aliases: Vec<(&str, PathBuf)>) -> Http {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let aliases: Arc<Vec<(String, PathBuf)>> = Arc::new(
            aliases
                .into_iter()
                .map(|(name, path)| (name.to_owned(), path))
                .collect(),
        );
        for _ in 0..SERVER_THREADS {
            let (server, dir, aliases) = (server.clone(), dir.to_owned(), aliases.clone());
            std::thread::spawn(move || {
                for request in server.incoming_requests() {
                    respond(request, &dir, &aliases);
                }
            });
        }
        Http { server, port }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        for _ in 0..SERVER_THREADS {
            self.server.unblock();
        }
    }
}

fn respond(request: tiny_http::Request, dir: &Path, aliases: &[(String, PathBuf)]) {
    let name = request.url().trim_start_matches('/');
    let name = name.split('?').next().unwrap_or_default().to_owned();
    let alias = aliases
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, p)| p.clone());
    let path = match alias {
        Some(path) => path,
        None if !name.is_empty() && !name.contains('/') && !name.starts_with('.') => {
            dir.join(&name)
        }
        None => PathBuf::new(),
    };
    let content_type = match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("m3u8") => "application/vnd.apple.mpegurl",
        Some("ts") => "video/mp2t",
        Some("vtt") => "text/vtt; charset=utf-8",
        _ => "application/octet-stream",
    };
    let _ = match std::fs::File::open(&path) {
        Ok(file) => request.respond(
            tiny_http::Response::from_file(file)
                .with_header(tiny_http::Header::from_bytes("Content-Type", content_type).unwrap()),
        ),
        Err(_) => request.respond(tiny_http::Response::empty(404)),
    };
}
