// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Errors of the engine layer: one variant per failure a user can act on.

use std::fmt;
use std::path::PathBuf;

use super::Backend;
use crate::voxtral::InvalidDelay;

/// Everything that can go wrong when loading a model or running a stream.
///
/// The `Display` text is meant to be shown to a user as it is (it ends up in
/// GStreamer ERROR messages), so each variant says what was tried and what to
/// do about it. `detail` fields carry the library's own log lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// No model path was given at all.
    NoModelPath,
    /// The model path does not exist.
    ModelMissing { path: PathBuf },
    /// The model path exists but cannot be read (permissions, a directory, ...).
    ModelUnreadable { path: PathBuf, reason: String },
    /// The file is not a GGUF file, or a damaged one.
    NotGguf { path: PathBuf, detail: String },
    /// A GGUF file of a model family other than Voxtral Realtime.
    WrongArchitecture { path: PathBuf, found: String },
    /// A Voxtral-family model that has no realtime streaming extension.
    NoStreamExtension { path: PathBuf, arch: String },
    /// The requested backend was not compiled in, or it has no usable device.
    BackendUnavailable { backend: Backend, detail: String },
    /// The model or its buffers do not fit in memory.
    OutOfMemory { detail: String },
    /// The stream was stopped through its [`AbortHandle`](crate::voxtral::AbortHandle).
    Aborted,
    /// A delay that the model was not trained for.
    InvalidDelay { ms: u32 },
    /// Any other failure reported by transcribe.cpp.
    Engine {
        operation: &'static str,
        status: String,
        detail: String,
    },
}

impl Error {
    /// True for failures caused by the stream's abort handle, which callers
    /// treat as a normal way of stopping rather than as trouble.
    pub fn is_abort(&self) -> bool {
        matches!(self, Error::Aborted)
    }
}

fn with_detail(f: &mut fmt::Formatter<'_>, detail: &str) -> fmt::Result {
    if detail.is_empty() {
        Ok(())
    } else {
        write!(f, " (transcribe.cpp: {detail})")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoModelPath => write!(
                f,
                "no model given; set model-path to a Voxtral Mini 4B Realtime GGUF file, or \
                 model to a preset such as q4_k_m (downloaded once into the Hugging Face cache)"
            ),
            Error::ModelMissing { path } => write!(
                f,
                "model file {} does not exist; set model-path to a Voxtral Mini 4B Realtime GGUF file",
                path.display()
            ),
            Error::ModelUnreadable { path, reason } => {
                write!(f, "model file {} cannot be read: {reason}", path.display())
            }
            Error::NotGguf { path, detail } => {
                write!(
                    f,
                    "{} is not a valid GGUF model file (truncated or a different format)",
                    path.display()
                )?;
                with_detail(f, detail)
            }
            Error::WrongArchitecture { path, found } => write!(
                f,
                "{} is a '{found}' model, but this element needs a 'voxtral_realtime' model \
                 (Voxtral Mini 4B Realtime)",
                path.display()
            ),
            Error::NoStreamExtension { path, arch } => write!(
                f,
                "{} ('{arch}') does not accept the Voxtral Realtime streaming parameters",
                path.display()
            ),
            Error::BackendUnavailable { backend, detail } => write!(
                f,
                "backend '{}' cannot be used: {detail}; or use backend=auto or backend=cpu",
                backend.nick()
            ),
            Error::OutOfMemory { detail } => {
                write!(f, "out of memory while loading or running the model")?;
                with_detail(f, detail)
            }
            Error::Aborted => write!(f, "the stream was aborted"),
            Error::InvalidDelay { ms } => InvalidDelay { ms: *ms }.fmt(f),
            Error::Engine {
                operation,
                status,
                detail,
            } => {
                write!(f, "{operation} failed: {status}")?;
                with_detail(f, detail)
            }
        }
    }
}

impl std::error::Error for Error {}

impl From<InvalidDelay> for Error {
    fn from(e: InvalidDelay) -> Self {
        Error::InvalidDelay { ms: e.ms }
    }
}
