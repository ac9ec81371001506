// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The enumerated properties' values, as GLib enums.

use gst::glib;
use gst::prelude::*;

use crate::wording::ProfanityMode;

/// What becomes of profane words: the `profanity` property.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtProfanity")]
pub enum ProfanityChoice {
    #[default]
    #[enum_value(name = "Leave every word as the model wrote it", nick = "off")]
    Off = 0,
    #[enum_value(name = "Keep the first letter and star the rest (f***)", nick = "mask")]
    Mask = 1,
    #[enum_value(name = "Leave the word out", nick = "remove")]
    Remove = 2,
    #[enum_value(name = "Write [bleep] in its place", nick = "tag")]
    Tag = 3,
}

impl From<ProfanityChoice> for ProfanityMode {
    fn from(choice: ProfanityChoice) -> Self {
        match choice {
            ProfanityChoice::Off => ProfanityMode::Off,
            ProfanityChoice::Mask => ProfanityMode::Mask,
            ProfanityChoice::Remove => ProfanityMode::Remove,
            ProfanityChoice::Tag => ProfanityMode::Tag,
        }
    }
}

/// How the transcript is cut into output buffers.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtOutput")]
pub enum OutputMode {
    #[default]
    #[enum_value(name = "One buffer per word", nick = "words")]
    Words = 0,
    #[enum_value(
        name = "One buffer per caption line of at most max-line-chars",
        nick = "lines"
    )]
    Lines = 1,
}

/// Where the model runs.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtBackend")]
pub enum BackendChoice {
    #[default]
    #[enum_value(name = "The best device found, else the CPU", nick = "auto")]
    Auto = 0,
    #[enum_value(name = "CPU only", nick = "cpu")]
    Cpu = 1,
    #[enum_value(
        name = "NVIDIA GPU through CUDA (build with the cuda feature)",
        nick = "cuda"
    )]
    Cuda = 2,
    #[enum_value(
        name = "GPU through Vulkan (build with the vulkan feature)",
        nick = "vulkan"
    )]
    Vulkan = 3,
}

/// Which engine runs the model.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtEngine")]
pub enum EngineChoice {
    #[default]
    #[enum_value(
        name = "transcribe.cpp in this process (model-path or model)",
        nick = "local"
    )]
    Local = 0,
    #[enum_value(name = "A vLLM realtime server (url, api-key, model)", nick = "vllm")]
    Vllm = 1,
}

/// engine=vllm with several servers in `url`: where a stream starts.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtServerChoice")]
pub enum ServerChoice {
    #[default]
    #[enum_value(
        name = "Spread: each stream starts at the next server of a rotation the process shares (its first pick random)",
        nick = "spread"
    )]
    Spread = 0,
    #[enum_value(
        name = "In order: each stream starts at the first server of url that answers (a primary, then backups)",
        nick = "in-order"
    )]
    InOrder = 1,
}

/// What to do with live audio that the model cannot keep up with.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtOverload")]
pub enum Overload {
    #[default]
    #[enum_value(
        name = "Skip the oldest waiting audio and go on from the present (subtitles stay live)",
        nick = "skip"
    )]
    Skip = 0,
    #[enum_value(
        name = "Queue everything: every word, however late (memory grows with the lag)",
        nick = "queue"
    )]
    Queue = 1,
}

/// Marks the enums of the shared properties as plugin API, for the
/// documentation tools.
pub fn mark_enums_as_plugin_api() {
    for t in [
        EngineChoice::static_type(),
        OutputMode::static_type(),
        BackendChoice::static_type(),
        Overload::static_type(),
        ProfanityChoice::static_type(),
    ] {
        t.mark_as_plugin_api(gst::PluginAPIFlags::empty());
    }
    super::formats::mark_formats_as_plugin_api();
}
