// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The speech engine: a safe layer over transcribe.cpp's C API. This module
//! is the only code in the crate that calls into the library, and it is
//! built with the `local` feature only; what it shares with the remote
//! engine is in [`crate::voxtral`].

mod batch;
mod decoder_position;
// The Sortformer diarizer, measured (docs/diarizer.md) and used by no
// element: built only with the `diarize` feature.
#[cfg(feature = "diarize")]
pub mod diarize;
mod error;
mod gguf;
mod log;
mod model;
mod pool;
mod session;
mod stream;
pub mod threads;

pub use batch::{BatchCounts, GATHER};
pub use error::Error;
pub use model::{Backend, Model, ModelSpec, WeightMemory, VOXTRAL_REALTIME_ARCH};
pub use pool::{ModelLease, ModelPool, IDLE_TIMEOUT};
pub use stream::{Stream, StreamState};

/// Installs the bridge from the library's log to GStreamer's debug log. Done
/// automatically before the first load; call it earlier to see backend
/// discovery lines too.
pub fn install_log_bridge() {
    log::install();
}
