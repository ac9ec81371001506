// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What can go wrong behind the seam, with text a user can act on.

use std::fmt;

use crate::voxtral::InvalidDelay;

/// Why a recognizer failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Stopped through the [`AbortHandle`](super::AbortHandle): a flush or a
    /// state change, not trouble.
    Aborted,
    /// The local engine (transcribe.cpp) failed (see `local.rs`).
    #[cfg(feature = "local")]
    Engine(crate::engine::Error),
    /// engine=local in a build without the `local` feature (a client of
    /// vLLM servers only).
    NoLocalEngine,
    /// The remote engine (a vLLM server) failed.
    Remote(crate::remote::Error),
    /// A delay the model was not trained for.
    InvalidDelay(InvalidDelay),
    /// Anything else, e.g. from a recognizer made for tests.
    Other {
        operation: &'static str,
        reason: String,
    },
}

pub use super::error_kind::Kind;

impl Error {
    pub fn is_abort(&self) -> bool {
        matches!(self, Error::Aborted)
    }

    pub fn kind(&self) -> Kind {
        match self {
            Error::Aborted | Error::Other { .. } => Kind::Library,
            #[cfg(feature = "local")]
            Error::Engine(e) => super::local::kind(e),
            Error::NoLocalEngine | Error::InvalidDelay(_) => Kind::Settings,
            Error::Remote(e) => e.kind(),
        }
    }
}

impl From<crate::remote::Error> for Error {
    fn from(e: crate::remote::Error) -> Self {
        match e {
            crate::remote::Error::Aborted => Error::Aborted,
            e => Error::Remote(e),
        }
    }
}

impl From<InvalidDelay> for Error {
    fn from(e: InvalidDelay) -> Self {
        Error::InvalidDelay(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Aborted => write!(f, "the stream was aborted"),
            #[cfg(feature = "local")]
            Error::Engine(e) => e.fmt(f),
            Error::NoLocalEngine => write!(
                f,
                "this build of the voxtralrt plugin has no local engine (it was built without \
                 the cargo feature \"local\", so without transcribe.cpp): set engine=vllm and \
                 url=ws://HOST:PORT/v1/realtime to use a vLLM server, or rebuild the plugin \
                 with the \"local\" feature (on by default; meson: -Dlocal-engine=enabled)"
            ),
            Error::Remote(e) => e.fmt(f),
            Error::InvalidDelay(e) => e.fmt(f),
            Error::Other { operation, reason } => write!(f, "{operation} failed: {reason}"),
        }
    }
}

impl std::error::Error for Error {}
