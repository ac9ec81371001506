// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtsink`: the transcription ends here, in bus messages, a signal
//! and a transcript file.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

pub(crate) mod imp;
mod output;
mod own_pad;

/// The structure name of the element messages the sink posts per cue.
pub use crate::core::TRANSCRIPT_MESSAGE as MESSAGE_NAME;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrtsink",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime transcription sink"),
    )
});

glib::wrapper! {
    pub struct VoxtralRtSink(ObjectSubclass<imp::Sink>) @extends gst_base::BaseSink, gst::Element, gst::Object, @implements gst::ChildProxy;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    crate::settings::mark_enums_as_plugin_api();
    gst::Element::register(
        Some(plugin),
        "voxtralrtsink",
        gst::Rank::NONE,
        VoxtralRtSink::static_type(),
    )
}
