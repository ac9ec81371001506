// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The subtitle file properties `voxtralrtsink` and `voxtralrtsubenc`
//! share: `format`, and for SCC `caption-mode`, `drop-frame` and (the
//! encoder's) `caption-channel`.

use gst::glib;
use gst::prelude::*;

use super::{FileFormat, SubtitleFormat};
use crate::subtitles::file::{FileChoice, FileOptions};
use crate::subtitles::scc::SccOptions;
use crate::transcriber::{CaptionChannel, CaptionMode};

/// The values behind the file properties.
#[derive(Debug, Clone)]
pub struct FileSettings {
    pub format: FileChoice,
    /// SCC: pop-on, or as aired live.
    pub caption_mode: CaptionMode,
    /// SCC: CC1, or CC3 for a second language.
    pub caption_channel: CaptionChannel,
    /// SCC: drop-frame time codes.
    pub drop_frame: bool,
}

impl FileSettings {
    pub fn new(format: FileChoice) -> FileSettings {
        FileSettings {
            format,
            caption_mode: CaptionMode::PopOn,
            caption_channel: CaptionChannel::Cc1,
            drop_frame: true,
        }
    }

    /// `format`, an enum of the element's formats ([`FileFormat`] or
    /// [`SubtitleFormat`]) with its default, and its blurb.
    pub fn format_param_spec<E>(default: E, blurb: &'static str) -> glib::ParamSpec
    where
        E: StaticType + glib::translate::FromGlib<i32> + glib::translate::IntoGlib<GlibType = i32>,
    {
        glib::ParamSpecEnum::builder_with_default("format", default)
            .nick("File format")
            .blurb(blurb)
            .mutable_ready()
            .build()
    }

    /// `caption-mode` and `drop-frame`, for SCC files.
    pub fn scc_param_specs() -> Vec<glib::ParamSpec> {
        vec![
            glib::ParamSpecEnum::builder_with_default("caption-mode", CaptionMode::PopOn)
                .nick("SCC caption mode")
                .blurb("SCC files: pop-on (default: each cue shown whole at its start), or roll-up2/3/4 and paint-on as captions air live")
                .mutable_ready()
                .build(),
            glib::ParamSpecBoolean::builder("drop-frame")
                .nick("SCC drop-frame time codes")
                .blurb("SCC files: 29.97 fps drop-frame time codes (HH:MM:SS;FF), which keep to the clock; false: non-drop (HH:MM:SS:FF)")
                .default_value(true)
                .mutable_ready()
                .build(),
        ]
    }

    /// `caption-channel`, for SCC files.
    pub fn caption_channel_param_spec() -> glib::ParamSpec {
        glib::ParamSpecEnum::builder_with_default("caption-channel", CaptionChannel::Cc1)
            .nick("SCC CEA-608 channel")
            .blurb("SCC files: cc1 (default: the main language), or cc3 (field 2) for a second language; ttconv and pycaption read CC1 only, ffmpeg both")
            .mutable_ready()
            .build()
    }

    /// Applies one of these properties: false if `pspec` is none of them.
    pub fn set_property(&mut self, value: &glib::Value, pspec: &glib::ParamSpec) -> bool {
        match pspec.name() {
            "format" => {
                self.format = match value.get::<SubtitleFormat>() {
                    Ok(format) => format.into(),
                    Err(_) => value.get::<FileFormat>().expect("type checked").into(),
                }
            }
            "caption-mode" => self.caption_mode = value.get().expect("type checked"),
            "caption-channel" => self.caption_channel = value.get().expect("type checked"),
            "drop-frame" => self.drop_frame = value.get().expect("type checked"),
            _ => return false,
        }
        true
    }

    /// The value of one of these properties (none: not one of them).
    pub fn property(&self, pspec: &glib::ParamSpec) -> Option<glib::Value> {
        Some(match pspec.name() {
            "format" if pspec.value_type() == SubtitleFormat::static_type() => {
                SubtitleFormat::from(self.format).to_value()
            }
            "format" => FileFormat::from(self.format).to_value(),
            "caption-mode" => self.caption_mode.to_value(),
            "caption-channel" => self.caption_channel.to_value(),
            "drop-frame" => self.drop_frame.to_value(),
            _ => return None,
        })
    }

    /// What the formats need, the text being in `language`.
    pub fn options(&self, language: Option<String>) -> FileOptions {
        FileOptions {
            language,
            scc: SccOptions {
                mode: self.caption_mode.into(),
                drop_frame: self.drop_frame,
                channel: self.caption_channel.into(),
            },
        }
    }
}
