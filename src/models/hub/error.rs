// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What a fetch reports: its progress, and why it failed.

use std::path::PathBuf;

/// How far a download has come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// Over the download so far (resumed bytes not counted).
    pub bytes_per_second: f64,
}

/// Why a file could not be fetched; each says what to do about it.
#[derive(Debug)]
pub enum FetchError {
    /// `HF_HUB_OFFLINE` is set and the file is not in the cache.
    Offline { url: String, cache: PathBuf },
    /// The Hub could not be reached, or did not answer in time.
    Unreachable {
        url: String,
        reason: String,
        cache: PathBuf,
    },
    /// 404: the repository, revision or file does not exist (or is private).
    NotFound { what: String, url: String },
    /// 401/403: a token is needed, or the one given is refused.
    Unauthorized { url: String },
    /// The server answered something this client cannot use.
    Protocol { url: String, reason: String },
    /// No file in the repository carries the quantisation tag, or several.
    NoMatch {
        repo: String,
        tag: String,
        candidates: Vec<String>,
    },
    /// The downloaded bytes are not the file the Hub named.
    Checksum {
        url: String,
        expected: String,
        actual: String,
    },
    /// Not enough room in the cache for the file.
    DiskFull {
        dir: PathBuf,
        needed: u64,
        available: u64,
    },
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The element stopped; the partial file stays for the next attempt.
    Cancelled,
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Offline { url, cache } => write!(
                f,
                "HF_HUB_OFFLINE is set and {url} is not in the cache {}; unset HF_HUB_OFFLINE, \
                 or download the file by hand (huggingface-cli download) into that cache, or \
                 point model-path at a local copy",
                cache.display()
            ),
            FetchError::Unreachable { url, reason, cache } => write!(
                f,
                "could not download {url}: {reason}. Without network, place the file in the \
                 Hugging Face cache {} (huggingface-cli download on a machine with network, then \
                 copy the cache), or download it by hand and point model-path at it",
                cache.display()
            ),
            FetchError::NotFound { what, url } => {
                write!(f, "{what} not found on the Hub ({url}); check the name, or set HF_TOKEN if it is private or gated")
            }
            FetchError::Unauthorized { url } => write!(
                f,
                "the Hub refused {url} without a valid token: set HF_TOKEN to an access token \
                 that may read it (and accept the model's terms on its page if it is gated)"
            ),
            FetchError::Protocol { url, reason } => write!(f, "unexpected answer for {url}: {reason}"),
            FetchError::NoMatch { repo, tag, candidates } if candidates.is_empty() => write!(
                f,
                "no GGUF file with \"{tag}\" in its name in {repo}; name the file with hf://{repo}/FILE"
            ),
            FetchError::NoMatch { repo, tag, candidates } => write!(
                f,
                "several GGUF files with \"{tag}\" in their name in {repo} ({}); name one with hf://{repo}/FILE",
                candidates.join(", ")
            ),
            FetchError::Checksum { url, expected, actual } => write!(
                f,
                "the download of {url} is damaged: its sha256 is {actual}, the Hub names {expected}; \
                 the file was deleted, try again"
            ),
            FetchError::DiskFull { dir, needed, available } => write!(
                f,
                "not enough space for the model in {}: {:.2} GB needed, {:.2} GB free; free some \
                 space or set HF_HOME to a cache on a larger disk",
                dir.display(),
                gb(*needed),
                gb(*available)
            ),
            FetchError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            FetchError::Cancelled => write!(f, "the download was cancelled"),
        }
    }
}

impl std::error::Error for FetchError {}
