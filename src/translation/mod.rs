// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Translation of the transcript into the viewers' languages, on an
//! OpenAI-compatible chat server: the pure parts (closed words gathered into
//! units, target languages checked and named) and the client (feature
//! `translate`). Nothing here knows about GStreamer's pads or threads.

pub mod capacity;
pub mod language;
pub mod pacing;
pub mod unit;

#[cfg(feature = "translate")]
pub mod chat;
#[cfg(feature = "translate")]
mod error;
#[cfg(feature = "translate")]
pub mod key;
#[cfg(feature = "translate")]
pub mod prompt;
#[cfg(feature = "translate")]
pub mod servers;
#[cfg(feature = "translate")]
pub mod sse;

#[cfg(feature = "translate")]
pub use chat::{Attempt, ChatClient, ChatConfig, Translation};
#[cfg(feature = "translate")]
pub use error::Error;
#[cfg(feature = "translate")]
pub use key::ApiKey;
pub use language::{Language, LanguageError};
pub use pacing::{PaceLimits, Pacer, Released, Request};
#[cfg(feature = "translate")]
pub use prompt::History;
pub use unit::{Unit, UnitBuilder, UnitLimits};
