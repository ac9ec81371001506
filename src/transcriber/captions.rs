// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The closed caption properties, which only voxtralrttranscriber has (its
//! src pad can output captions).

use gst::glib;
use gst::prelude::*;

use crate::caption;

/// How closed captions appear (tttocea608's `mode` values).
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtCaptionMode")]
pub enum CaptionMode {
    #[enum_value(
        name = "Pop-on: each line is shown whole, when full, at a sentence end or a pause",
        nick = "pop-on"
    )]
    PopOn = 0,
    #[enum_value(
        name = "Paint-on: characters appear as they come, one line",
        nick = "paint-on"
    )]
    PaintOn = 1,
    #[default]
    #[enum_value(
        name = "Roll-up, 2 rows: characters appear as they come, rows roll up (live captioning)",
        nick = "roll-up2"
    )]
    RollUp2 = 2,
    #[enum_value(name = "Roll-up, 3 rows", nick = "roll-up3")]
    RollUp3 = 3,
    #[enum_value(name = "Roll-up, 4 rows", nick = "roll-up4")]
    RollUp4 = 4,
}

/// The CEA-608 channel of the captions.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtCaptionChannel")]
pub enum CaptionChannel {
    #[default]
    #[enum_value(name = "CC1: field 1, the main language", nick = "cc1")]
    Cc1 = 1,
    #[enum_value(
        name = "CC3: field 2, a second language (not in format=raw)",
        nick = "cc3"
    )]
    Cc3 = 3,
}

impl From<CaptionChannel> for caption::Channel608 {
    fn from(channel: CaptionChannel) -> Self {
        match channel {
            CaptionChannel::Cc1 => caption::Channel608::Cc1,
            CaptionChannel::Cc3 => caption::Channel608::Cc3,
        }
    }
}

impl From<CaptionMode> for caption::Mode {
    fn from(mode: CaptionMode) -> Self {
        match mode {
            CaptionMode::PopOn => caption::Mode::PopOn,
            CaptionMode::PaintOn => caption::Mode::PaintOn,
            CaptionMode::RollUp2 => caption::Mode::RollUp2,
            CaptionMode::RollUp3 => caption::Mode::RollUp3,
            CaptionMode::RollUp4 => caption::Mode::RollUp4,
        }
    }
}

/// The values behind the caption properties.
#[derive(Debug, Clone)]
pub struct CaptionSettings {
    pub mode: CaptionMode,
    pub clear_after_ms: u32,
    pub channel: CaptionChannel,
    pub service: u32,
    /// What starts a new speaker's row.
    pub speaker_prefix: String,
}

/// Broadcast captions mark a change of speaker with a chevron.
pub const DEFAULT_SPEAKER_PREFIX: &str = ">> ";

impl Default for CaptionSettings {
    fn default() -> Self {
        Self {
            mode: CaptionMode::RollUp2,
            clear_after_ms: caption::DEFAULT_CLEAR_AFTER_MS as u32,
            channel: CaptionChannel::Cc1,
            service: 1,
            speaker_prefix: DEFAULT_SPEAKER_PREFIX.to_owned(),
        }
    }
}

impl CaptionSettings {
    pub fn param_specs() -> Vec<glib::ParamSpec> {
        let d = CaptionSettings::default();
        vec![
            glib::ParamSpecEnum::builder_with_default("caption-mode", d.mode)
                .nick("Caption mode")
                .blurb("How captions appear with closed caption output (tttocea608's modes); roll-up2 is live captioning's")
                .mutable_ready()
                .build(),
            glib::ParamSpecUInt::builder("caption-clear-after")
                .nick("Caption clear after (ms)")
                .blurb("Closed captions: the screen is cleared this long (ms) after the last word ended")
                .minimum(100)
                .maximum(60_000)
                .default_value(d.clear_after_ms)
                .mutable_ready()
                .build(),
            glib::ParamSpecEnum::builder_with_default("caption-channel", d.channel)
                .nick("CEA-608 channel")
                .blurb("The CEA-608 channel of closed caption output: cc1, or cc3 (field 2) for a second language; no added latency")
                .mutable_ready()
                .build(),
            glib::ParamSpecUInt::builder("caption-service")
                .nick("CEA-708 service")
                .blurb("The CEA-708 service of closed caption output: 1 (primary), 2 (secondary language) up to 6; no added latency")
                .minimum(u32::from(*caption::SERVICES.start()))
                .maximum(u32::from(*caption::SERVICES.end()))
                .default_value(d.service)
                .mutable_ready()
                .build(),
            glib::ParamSpecString::builder("speaker-prefix")
                .nick("Speaker prefix")
                .blurb("Closed captions: what starts the new row at each change of speaker (when a speaker source is in use); empty: the row alone")
                .default_value(Some(DEFAULT_SPEAKER_PREFIX))
                .mutable_ready()
                .build(),
        ]
    }

    /// Applies a caption property; false if `name` is not one.
    pub fn set(&mut self, name: &str, value: &glib::Value) -> bool {
        match name {
            "caption-mode" => self.mode = value.get().expect("type checked"),
            "caption-clear-after" => self.clear_after_ms = value.get().expect("type checked"),
            "caption-channel" => self.channel = value.get().expect("type checked"),
            "caption-service" => self.service = value.get().expect("type checked"),
            "speaker-prefix" => {
                self.speaker_prefix = value
                    .get::<Option<String>>()
                    .expect("type checked")
                    .unwrap_or_default()
            }
            _ => return false,
        }
        true
    }

    pub fn get(&self, name: &str) -> Option<glib::Value> {
        match name {
            "caption-mode" => Some(self.mode.to_value()),
            "caption-clear-after" => Some(self.clear_after_ms.to_value()),
            "caption-channel" => Some(self.channel.to_value()),
            "caption-service" => Some(self.service.to_value()),
            "speaker-prefix" => Some(self.speaker_prefix.to_value()),
            _ => None,
        }
    }

    /// The caption encoder's set-up for video at `framerate`.
    pub fn config(&self, framerate: caption::Framerate) -> caption::Config {
        caption::Config {
            mode: self.mode.into(),
            framerate,
            timing: caption::Timing {
                clear_after_ns: gst::ClockTime::from_mseconds(u64::from(self.clear_after_ms))
                    .nseconds(),
                ..caption::Timing::default()
            },
            channel: self.channel.into(),
            service: self.service as u8,
        }
    }
}
