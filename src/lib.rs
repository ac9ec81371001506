// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

#![allow(clippy::non_send_fields_in_send_ty)]
// The README is the crate's documentation, and the Rust snippet of
// docs/from-code.md a doctest (`FromCode` below) that runs the local engine:
// the client build leaves both out.
#![cfg_attr(feature = "local", doc = include_str!("../README.md"))]

/// docs/from-code.md, for `cargo test --doc` to run its Rust snippet.
#[cfg(all(doctest, feature = "local"))]
#[doc = include_str!("../docs/from-code.md")]
pub struct FromCode;

// The elements are the plugin's interface; the rest is public for the
// tests, benches, fuzz targets and examples only.
#[doc(hidden)]
pub mod caption;
pub(crate) mod core;
#[cfg(feature = "local")]
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod loading;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod models;
#[doc(hidden)]
pub mod participants;
#[doc(hidden)]
pub mod recognizer;
#[doc(hidden)]
pub mod remote;
#[doc(hidden)]
pub mod settings;
pub mod sink;
#[doc(hidden)]
pub mod speakers;
pub mod subenc;
pub mod subtitles;
pub mod transcriber;
#[doc(hidden)]
pub mod transcript;
#[doc(hidden)]
pub mod translation;
#[doc(hidden)]
pub mod voxtral;
#[doc(hidden)]
pub mod wording;

/// Tests: makes `element` (either of this plugin's elements) wrap the
/// recognizer it makes from its next NULL->READY on (a slow, faulty or blind
/// model). Returns false for any other element.
#[doc(hidden)]
pub fn set_recognizer_wrapper(element: &gst::Element, wrapper: recognizer::Wrapper) -> bool {
    use gst::prelude::*;
    use gst::subclass::prelude::ObjectSubclassIsExt;
    if let Some(t) = element.downcast_ref::<transcriber::VoxtralRtTranscriber>() {
        t.imp().set_recognizer_wrapper(Some(wrapper));
        true
    } else if let Some(s) = element.downcast_ref::<sink::VoxtralRtSink>() {
        s.imp().set_recognizer_wrapper(Some(wrapper));
        true
    } else {
        false
    }
}

fn plugin_init(plugin: &gst::Plugin) -> Result<(), gst::glib::BoolError> {
    transcriber::register(plugin)?;
    sink::register(plugin)?;
    subenc::register(plugin)?;
    metrics::register(plugin)?;
    Ok(())
}

gst::plugin_define!(
    voxtralrt,
    env!("CARGO_PKG_DESCRIPTION"),
    plugin_init,
    concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID")),
    "MPL",
    env!("CARGO_PKG_NAME"),
    env!("CARGO_PKG_NAME"),
    // GStreamer's own wording when a plugin has no public home (yet).
    "Unknown package origin",
    env!("BUILD_REL_DATE")
);
