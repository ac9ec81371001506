// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The recognizer seam: what the core's worker drives, whichever engine runs
//! the model.
//!
//! A recognizer takes audio (f32, 16 kHz, mono) and gives text updates, each
//! with the audio position it describes. The local transcribe.cpp stream
//! (`crate::engine::Stream`, with the `local` feature) and the vLLM
//! realtime client ([`crate::remote`]) are the two implementations; tests
//! plug in their own by wrapping one ([`Wrapper`]).

mod error;
pub(crate) mod error_kind;
#[cfg(feature = "local")]
mod local;

use std::sync::Arc;
use std::time::Duration;

pub use crate::voxtral::{AbortHandle, StreamConfig, TextUpdate};
pub use error::{Error, Kind};

/// One transcription engine behind the worker.
///
/// Calls come from the worker thread only; [`AbortHandle::abort`] may come
/// from any thread and makes the running call return [`Error::is_abort`]
/// promptly.
pub trait Recognizer: Send + 'static {
    /// Where the model runs, for `stats` (a backend, or a server's URL).
    fn backend_name(&self) -> String;

    /// The CPU threads the model computes with here (0: it runs elsewhere).
    fn threads(&self) -> u32 {
        0
    }

    /// How the model is held and shared in this process (nothing where it
    /// runs elsewhere).
    fn model_use(&self) -> ModelUse {
        ModelUse::default()
    }

    /// The handle that stops a running call.
    fn abort_handle(&self) -> AbortHandle;

    /// Gets ready before audio comes (a remote engine connects), so that a
    /// failure shows when the element starts rather than at the first word.
    fn prepare(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Starts a new stream; any previous one is dropped unfinished.
    fn begin(&mut self, config: StreamConfig) -> Result<(), Error>;

    /// Decodes every `ms` of audio from now on (the stream's own cadence
    /// where the engine has none to set: a server decodes as it pleases).
    fn set_decode_interval(&mut self, _ms: u32) {}

    /// Adds audio; returns one update per decode this audio completed.
    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error>;

    /// Ends the stream and returns the rest of its text: updates whose
    /// last one is final.
    fn finalize(&mut self) -> Result<Vec<TextUpdate>, Error>;

    /// Drops the current stream, if any, and clears the abort flag.
    fn reset(&mut self);

    /// Samples accepted since `begin`.
    fn samples_received(&self) -> u64;

    /// Whether the recognizer notices at once when the model ends a stream on
    /// its own (and goes on from there); if not, only the text stopping
    /// tells.
    fn sees_model_end(&self) -> bool {
        true
    }

    /// What to tell a user whose model is slower than real time.
    fn slowness_advice(&self) -> String {
        "It is slower than real time on this machine: try a GPU backend, a smaller \
         quantisation or a larger decode-interval"
            .into()
    }

    /// What happened since the last call that the element should report
    /// (a reconnection, frames ignored), oldest first.
    fn take_notices(&mut self) -> Vec<Notice> {
        Vec::new()
    }
}

/// How a model in this process is held and shared, for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelUse {
    /// Weights kept in the CPU's repack layout since the load: bytes and
    /// tensors.
    pub repacked_bytes: u64,
    pub repacked_tensors: u32,
    /// Streams open on the model in this process, this one included.
    pub streams: u32,
    /// Rounds of decoder steps run for the model's streams, and the
    /// streams in them over all rounds.
    pub decode_rounds: u64,
    pub decode_streams: u64,
}

/// Something a recognizer reports besides text.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// The connection to a server was lost and made again; the audio the
    /// server had not answered for was sent again.
    Reconnected {
        /// Why the connection was given up.
        cause: String,
        outage: Duration,
        resent_samples: u64,
        /// The server whose connection was lost, and the one that took
        /// the stream on (the same, for a single server).
        left: String,
        joined: String,
    },
    /// A connection to the server `url` was made.
    ServerJoined { url: String },
    /// The server `url` could not be used; `warn`: the element is to say
    /// so (the first failure in a row of a server in a list).
    ServerFailed {
        url: String,
        reason: String,
        warn: bool,
    },
    /// Frames from the server that were not events it defines (binary,
    /// not JSON, unknown types): counted and ignored.
    IgnoredFrames(u64),
}

/// Replaces the recognizer an element would use with one built around it:
/// how tests make a model slow, faulty or blind.
pub type Wrapper = Arc<dyn Fn(Box<dyn Recognizer>) -> Box<dyn Recognizer> + Send + Sync>;
