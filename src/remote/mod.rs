// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The remote engine: the model served by vLLM's realtime WebSocket API
//! (`vllm serve mistralai/Voxtral-Mini-4B-Realtime-2602`, `/v1/realtime`).
//!
//! Blocking, on the worker thread: no async runtime. The server sends one
//! `transcription.delta` per 80 ms model step, so counting them gives each
//! piece of text its audio frame, as the local stream's decoder position
//! does.

mod error;
#[cfg(feature = "vllm")]
mod protocol;
#[cfg(feature = "vllm")]
mod rack;
#[cfg(feature = "vllm")]
mod socket;
#[cfg(feature = "vllm")]
mod vllm;

use std::time::Duration;

pub use error::Error;
#[cfg(feature = "vllm")]
pub use vllm::VllmRecognizer;

/// How to reach a vLLM realtime server.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// `ws://HOST:PORT/v1/realtime` or `wss://...`, or several such
    /// separated by commas.
    pub url: String,
    /// Several servers: streams start spread over them (else in order).
    pub spread: bool,
    pub api_key: Option<String>,
    /// The served model's name, sent in `session.update`.
    pub model: String,
    /// No delta for this long while audio is due an answer: the server is
    /// taken to have gone.
    pub server_timeout: Duration,
    /// Reconnecting is given up after an outage this long (`None`: never).
    pub give_up_after: Option<Duration>,
}

impl std::fmt::Debug for ServerConfig {
    // Never the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("url", &self.url)
            .field("spread", &self.spread)
            .field("api_key", &self.api_key.as_ref().map(|_| "(set)"))
            .field("model", &self.model)
            .field("server_timeout", &self.server_timeout)
            .field("give_up_after", &self.give_up_after)
            .finish()
    }
}

/// The environment variable vLLM itself reads for its key.
pub const API_KEY_VARIABLE: &str = "VLLM_API_KEY";
