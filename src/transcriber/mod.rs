// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrttranscriber`: speech in, timestamped words or caption lines out.

use gst::glib;
use gst::prelude::*;

pub(crate) mod imp;

glib::wrapper! {
    pub struct VoxtralRtTranscriber(ObjectSubclass<imp::Transcriber>) @extends gst::Element, gst::Object;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Element::register(
        Some(plugin),
        "voxtralrttranscriber",
        gst::Rank::NONE,
        VoxtralRtTranscriber::static_type(),
    )
}
