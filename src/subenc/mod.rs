// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtsubenc`: timed text (words, caption lines, translations) into
//! a subtitle file's bytes (SRT, WebVTT, SCC, IMSC 1.1 Text, EBU-TT-D) in a
//! subtitle style, for `filesink`. The cues and the bytes are
//! `crate::subtitles::stream`'s; this room is the element's plumbing.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

mod caps;
mod imp;
mod state;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrtsubenc",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime subtitle file encoder"),
    )
});

glib::wrapper! {
    pub struct VoxtralRtSubEnc(ObjectSubclass<imp::SubEnc>) @extends gst::Element, gst::Object;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    crate::settings::mark_formats_as_plugin_api();
    gst::Element::register(
        Some(plugin),
        "voxtralrtsubenc",
        gst::Rank::NONE,
        VoxtralRtSubEnc::static_type(),
    )
}
