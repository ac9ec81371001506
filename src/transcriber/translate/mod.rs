// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The `translate_src_%u` pads of `voxtralrttranscriber` (feature
//! `translate`): `pad.rs` their class (`language-code`, caption channel and
//! service), `pads.rs` the set and its start (the chat client, each pad's
//! thread), `output.rs` one pad's thread (units, requests paced by
//! [`crate::translation::pacing`], timing, GAPs), `requests.rs` the
//! requests in flight and the servers' shared room, `counts.rs` each pad's
//! counts for `stats`, `watch.rs` its lag and caption alarm, `settings.rs` the
//! `translate-*` properties, and `taps.rs` what the src output hands them
//! (built without the feature too, empty).

#[cfg(feature = "translate")]
mod counts;
#[cfg(feature = "translate")]
mod output;
#[cfg(feature = "translate")]
mod pad;
#[cfg(feature = "translate")]
mod pads;
#[cfg(feature = "translate")]
mod requests;
#[cfg(feature = "translate")]
mod settings;
mod taps;
#[cfg(feature = "translate")]
mod watch;

#[cfg(feature = "translate")]
pub(super) use pad::TranslatePad;
#[cfg(feature = "translate")]
pub(super) use pads::TranslatePads;
#[cfg(feature = "translate")]
pub(super) use settings::TranslateSettings;
pub(super) use taps::{Item, Taps};
