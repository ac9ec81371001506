// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtsink`: the transcription ends here, in bus messages, a signal
//! and a transcript file.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

mod file_format;
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

/// The format of the transcript file.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtFileFormat")]
pub enum FileFormatChoice {
    #[default]
    #[enum_value(
        name = "From the location's extension (.srt, .vtt, .jsonl), else plain text",
        nick = "auto"
    )]
    Auto = 0,
    #[enum_value(name = "Plain text", nick = "txt")]
    Txt = 1,
    #[enum_value(name = "SubRip subtitles", nick = "srt")]
    Srt = 2,
    #[enum_value(name = "WebVTT subtitles", nick = "vtt")]
    Vtt = 3,
    #[enum_value(name = "One JSON object per cue and line", nick = "jsonl")]
    Jsonl = 4,
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    crate::settings::mark_enums_as_plugin_api();
    FileFormatChoice::static_type().mark_as_plugin_api(gst::PluginAPIFlags::empty());
    gst::Element::register(
        Some(plugin),
        "voxtralrtsink",
        gst::Rank::NONE,
        VoxtralRtSink::static_type(),
    )
}
