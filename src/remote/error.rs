// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Failures of the remote engine. The texts never contain the API key.

use std::fmt;

use crate::recognizer::error_kind::Kind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Stopped by a flush or state change.
    Aborted,
    /// The plugin was built without the `vllm` feature.
    NotBuiltIn,
    /// `url` is not set or not a ws:// or wss:// URL.
    BadUrl { url: String, reason: String },
    /// An API key would go in clear text to another machine.
    KeyInTheClear { url: String },
    /// The server could not be reached (or stayed away too long).
    Unreachable { url: String, detail: String },
    /// The server refused the key (HTTP 401/403 on the upgrade).
    Unauthorized { url: String, status: u16 },
    /// Every server of the list refused the key.
    KeyRefusedEverywhere { urls: Vec<String> },
    /// No server of the list could be used: each with what it said.
    NoServer { failures: Vec<(String, String)> },
    /// The upgrade got another HTTP answer.
    Refused {
        url: String,
        status: u16,
        body: String,
    },
    /// `session.update` named a model the server does not serve.
    ModelNotServed {
        url: String,
        model: String,
        answer: String,
    },
    /// The server serves a longer delay than `delay`: its deltas come
    /// later than the element waits for them.
    DelayMismatch { url: String, ours: u32, server: u32 },
    /// The server blamed what the client sent (`invalid_audio`, ...).
    Rejected {
        url: String,
        code: String,
        message: String,
    },
}

impl Error {
    pub fn kind(&self) -> Kind {
        match self {
            Error::Aborted => Kind::Library,
            Error::NotBuiltIn
            | Error::BadUrl { .. }
            | Error::KeyInTheClear { .. }
            | Error::DelayMismatch { .. } => Kind::Settings,
            Error::Unreachable { .. } | Error::Refused { .. } | Error::NoServer { .. } => {
                Kind::Unreachable
            }
            Error::Unauthorized { .. } | Error::KeyRefusedEverywhere { .. } => Kind::NotAuthorized,
            Error::ModelNotServed { .. } => Kind::NotFound,
            Error::Rejected { .. } => Kind::Stream,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Aborted => write!(f, "the stream was aborted"),
            Error::NotBuiltIn => write!(
                f,
                "engine=vllm needs a build with the vllm cargo feature (on by default)"
            ),
            Error::BadUrl { url, reason } => write!(
                f,
                "url '{url}' cannot be used: {reason}; set url to the server's realtime \
                 endpoint, e.g. ws://gpu-box:8000/v1/realtime"
            ),
            Error::KeyInTheClear { url } => write!(
                f,
                "refusing to send the API key over plain ws:// to {url}, which is not this \
                 machine: use a wss:// URL (TLS), or a loopback address"
            ),
            Error::DelayMismatch { url, ours, server } => write!(
                f,
                "the vLLM server at {url} serves a delay of {server} ms (measured from its first \
                 answers) and delay is {ours} ms: set delay={server}, the server's (its \
                 tekken.json, transcription_delay_ms)"
            ),
            Error::Unreachable { url, detail } => write!(
                f,
                "the vLLM server at {url} cannot be reached: {detail}; check that `vllm serve` \
                 runs there and that url names its /v1/realtime endpoint"
            ),
            Error::Unauthorized { url, status } => write!(
                f,
                "the vLLM server at {url} refused the API key (HTTP {status}): set api-key, or \
                 the environment variable VLLM_API_KEY, to the key the server was started with"
            ),
            Error::KeyRefusedEverywhere { urls } => write!(
                f,
                "every vLLM server in url ({}) refused the API key (HTTP 401): set api-key, or \
                 the environment variable VLLM_API_KEY, to the key the servers were started with",
                urls.join(", ")
            ),
            Error::NoServer { failures } => {
                write!(f, "none of the vLLM servers in url can be used: ")?;
                for (k, (url, what)) in failures.iter().enumerate() {
                    let sep = if k == 0 { "" } else { "; " };
                    write!(f, "{sep}{url}: {what}")?;
                }
                write!(
                    f,
                    "; check that `vllm serve` runs there and that each URL names its \
                     /v1/realtime endpoint"
                )
            }
            Error::Refused { url, status, body } => {
                write!(
                    f,
                    "the vLLM server at {url} refused the connection (HTTP {status})"
                )?;
                if !body.is_empty() {
                    write!(f, ": {body}")?;
                }
                write!(f, "; check that url names its /v1/realtime endpoint")
            }
            Error::ModelNotServed { url, model, answer } => write!(
                f,
                "the vLLM server at {url} does not serve model '{model}' (it answered: \
                 {answer}); set model to the name the server was started with \
                 (--served-model-name)"
            ),
            Error::Rejected { url, code, message } => write!(
                f,
                "the vLLM server at {url} rejected what it was sent ({code}): {message}"
            ),
        }
    }
}

impl std::error::Error for Error {}
