// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrttranscriber`: speech in, timestamped words or caption lines out.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

mod caps;
mod caption_output;
mod captions;
mod downstream;
pub(crate) mod imp;
mod output;
mod translate;

pub use crate::participants::SpeakerPad;
pub use captions::{CaptionChannel, CaptionMode};

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrttranscriber",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime transcriber"),
    )
});

glib::wrapper! {
    pub struct VoxtralRtTranscriber(ObjectSubclass<imp::Transcriber>) @extends gst::Element, gst::Object, @implements gst::ChildProxy;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    crate::settings::mark_enums_as_plugin_api();
    CaptionMode::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
    CaptionChannel::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
    gst::Element::register(
        Some(plugin),
        "voxtralrttranscriber",
        gst::Rank::NONE,
        VoxtralRtTranscriber::static_type(),
    )
}
