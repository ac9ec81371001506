// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Failures of a translation request, each naming the chat server (the
//! base URL as `translate-url` lists it) and what to do. The texts never
//! contain the API key.

use std::fmt;

use super::key::{key_advice, KeySource};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// `translate-url` cannot be used.
    BadUrl { url: String, reason: String },
    /// An API key would go in clear text to another machine.
    KeyInTheClear { url: String, source: KeySource },
    /// No connection, or no whole answer in time.
    Unreachable { server: String, detail: String },
    /// HTTP 401 or 403.
    Unauthorized {
        server: String,
        status: u16,
        source: KeySource,
    },
    /// The server does not serve the model asked for.
    UnknownModel {
        server: String,
        model: String,
        answer: String,
    },
    /// HTTP 404 that is not about the model: no chat endpoint there.
    NoEndpoint { server: String, answer: String },
    /// HTTP 429 or 5xx, or an error in place of a streamed chunk (status
    /// 200): the server failed, another may answer.
    ServerFailure {
        server: String,
        status: u16,
        answer: String,
    },
    /// Another HTTP status.
    Refused {
        server: String,
        status: u16,
        answer: String,
    },
    /// The answer is not an OpenAI chat completion.
    Malformed { server: String, detail: String },
    /// The streamed answer stopped before its end.
    Cut { server: String, detail: String },
    /// The model stopped at its token limit (`finish_reason: length`).
    TooLong { server: String },
    /// The answer holds no text.
    Empty { server: String },
    /// Every server of the list failed; what each said.
    NoServer { failures: Vec<Error> },
}

impl Error {
    /// Whether another server (or a later try) may do better: the server
    /// could not be reached, failed, or broke off its answer.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Error::Unreachable { .. } | Error::ServerFailure { .. } | Error::Cut { .. }
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadUrl { url, reason } => write!(
                f,
                "translate-url '{url}' cannot be used: {reason}; list the chat servers' API \
                 bases, e.g. http://gpu-box:8000/v1"
            ),
            Error::KeyInTheClear { url, source } => {
                write!(
                    f,
                    "refusing to send the translation API key over plain http:// to {url}, \
                     which is not this machine: use an https:// URL"
                )?;
                if let KeySource::Env(var) = source {
                    write!(f, ", or set {var} empty if the server needs no key")?;
                }
                Ok(())
            }
            Error::Unreachable { server, detail } => write!(
                f,
                "the chat server at {server} cannot be reached: {detail}; check that it runs \
                 and that translate-url names its API base (…/v1)"
            ),
            Error::Unauthorized {
                server,
                status,
                source,
            } => write!(
                f,
                "the chat server at {server} refused the request (HTTP {status}): {}",
                key_advice(*source)
            ),
            Error::UnknownModel {
                server,
                model,
                answer,
            } => write!(
                f,
                "the chat server at {server} does not serve the model '{model}' (it answered: \
                 {answer}); set the translation model to a name its /v1/models lists"
            ),
            Error::NoEndpoint { server, answer } => write!(
                f,
                "the chat server at {server} has no /chat/completions endpoint (HTTP 404: \
                 {answer}); translate-url should be the API base, e.g. http://gpu-box:8000/v1"
            ),
            Error::ServerFailure {
                server,
                status,
                answer,
            } => {
                // An error sent in place of a chunk comes with HTTP 200.
                match status {
                    200 => write!(f, "the chat server at {server} failed mid-answer: {answer}")?,
                    _ => write!(
                        f,
                        "the chat server at {server} failed (HTTP {status}: {answer})"
                    )?,
                }
                write!(
                    f,
                    "; it may answer a later request, or list another server in translate-url"
                )
            }
            Error::Refused {
                server,
                status,
                answer,
            } => write!(
                f,
                "the chat server at {server} refused the request (HTTP {status}: {answer})"
            ),
            Error::Malformed { server, detail } => write!(
                f,
                "the chat server at {server} did not answer as an OpenAI-compatible chat \
                 server does: {detail}"
            ),
            Error::Cut { server, detail } => write!(
                f,
                "the chat server at {server} broke off its answer: {detail}"
            ),
            Error::TooLong { server } => write!(
                f,
                "the chat server at {server} stopped the translation at its token limit \
                 (finish_reason length): raise the server's limit (max_tokens, context size), \
                 or lower translate-lookahead for shorter units"
            ),
            Error::Empty { server } => write!(
                f,
                "the chat server at {server} answered without a translation: check that its \
                 model is an instruction-tuned chat model"
            ),
            Error::NoServer { failures } => {
                write!(f, "no chat server of translate-url answered: ")?;
                for (k, failure) in failures.iter().enumerate() {
                    let sep = if k == 0 { "" } else { "; " };
                    write!(f, "{sep}{failure}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}
