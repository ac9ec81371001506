// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The speech engine: a safe layer over transcribe.cpp's C API. This module
//! is the only code in the crate that calls into the library.

mod decoder_position;
mod error;
mod gguf;
mod log;
mod model;
mod pool;
mod samples;
mod stream;

pub use error::Error;
pub use model::{Backend, Model, ModelSpec, VOXTRAL_REALTIME_ARCH};
pub use pool::{ModelLease, ModelPool, IDLE_TIMEOUT};
pub use samples::{Converted, SampleConverter, SampleFormat};
pub use stream::{
    validate_delay, AbortHandle, Stream, StreamConfig, StreamState, TextUpdate,
    DECODE_INTERVAL_RANGE, TOKEN_LOOKAHEAD_SAMPLES,
};

/// The debug category of the engine, for lines about the engine's behaviour.
pub use log::CAT as LOG_CAT;

/// The only sample rate the model takes.
pub const SAMPLE_RATE: u32 = 16_000;

/// Audio the model consumes per generated token.
pub const FRAME_MS: u32 = 80;
/// The same in samples.
pub const FRAME_SAMPLES: u64 = FRAME_MS as u64 * SAMPLE_RATE as u64 / 1000;

/// `samples` of model audio as nanoseconds.
pub fn samples_to_ns(samples: u64) -> u64 {
    samples * 1_000_000_000 / u64::from(SAMPLE_RATE)
}

/// `ns` of model audio as samples (rounded down).
pub fn ns_to_samples(ns: u64) -> u64 {
    ns * u64::from(SAMPLE_RATE) / 1_000_000_000
}

/// Installs the bridge from the library's log to GStreamer's debug log. Done
/// automatically before the first load; call it earlier to see backend
/// discovery lines too.
pub fn install_log_bridge() {
    log::install();
}
