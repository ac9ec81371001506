// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The sink-pad side both elements share: the caps they accept, turning
//! buffers into samples, and loading the model with progress messages.

use std::sync::LazyLock;

use gst::prelude::*;

use crate::engine::{SampleConverter, SampleFormat, Stream, SAMPLE_RATE};
use crate::settings::Settings;

use super::Core;

/// The audio both elements take.
pub fn sink_caps() -> gst::Caps {
    static CAPS: LazyLock<gst::Caps> = LazyLock::new(|| {
        gst_audio::AudioCapsBuilder::new_interleaved()
            .format_list([gst_audio::AudioFormat::S16le, gst_audio::AudioFormat::F32le])
            .rate(SAMPLE_RATE as i32)
            .channels(1)
            .build()
    });
    CAPS.clone()
}

/// The sample format of negotiated caps.
pub fn format_of(caps: &gst::CapsRef) -> Result<SampleFormat, String> {
    let info =
        gst_audio::AudioInfo::from_caps(caps).map_err(|_| format!("invalid audio caps {caps}"))?;
    if info.rate() != SAMPLE_RATE || info.channels() != 1 {
        return Err(format!(
            "the model takes 16000 Hz mono audio, not {} Hz with {} channels (put audioconvert ! audioresample in front)",
            info.rate(),
            info.channels()
        ));
    }
    match info.format() {
        gst_audio::AudioFormat::S16le => Ok(SampleFormat::S16le),
        gst_audio::AudioFormat::F32le => Ok(SampleFormat::F32le),
        other => Err(format!(
            "sample format {other:?} is not supported (S16LE or F32LE)"
        )),
    }
}

/// One buffer's audio, ready for the core.
#[derive(Debug)]
pub struct Audio {
    pub samples: Vec<f32>,
    pub pts: Option<gst::ClockTime>,
    pub live: bool,
}

/// Per-start state of the audio input.
#[derive(Debug, Default)]
pub struct AudioInput {
    converter: Option<SampleConverter>,
    /// Whether upstream is live, asked once per start.
    live: Option<bool>,
}

impl AudioInput {
    /// Takes new caps; a format change mid-stream starts a fresh converter.
    pub fn set_caps(&mut self, caps: &gst::CapsRef) -> Result<(), String> {
        let format = format_of(caps)?;
        if self.converter.as_ref().map(SampleConverter::format) != Some(format) {
            self.converter = Some(SampleConverter::new(format));
        }
        Ok(())
    }

    /// Forgets partial samples (flush, discontinuity).
    pub fn clear(&mut self) {
        if let Some(c) = &mut self.converter {
            c.clear();
        }
    }

    pub fn reset(&mut self) {
        *self = AudioInput::default();
    }

    /// Whether the audio source upstream of `sinkpad` is live.
    pub fn upstream_is_live(&mut self, sinkpad: &gst::Pad) -> bool {
        *self.live.get_or_insert_with(|| {
            let mut q = gst::query::Latency::new();
            sinkpad.peer_query(&mut q) && q.result().0
        })
    }

    /// Converts `buffer` for [`Core::push_audio`]; call that without holding
    /// the element's lock, since it may wait for the worker.
    pub fn take_buffer(
        &mut self,
        sinkpad: &gst::Pad,
        buffer: &gst::BufferRef,
        core: &Core,
    ) -> Result<Audio, gst::FlowError> {
        let live = self.upstream_is_live(sinkpad);
        let converter = self
            .converter
            .as_mut()
            .ok_or(gst::FlowError::NotNegotiated)?;
        // The worker aligns buffers by timestamp; a DISCONT only means a
        // carried partial sample belongs to nothing.
        if buffer.flags().contains(gst::BufferFlags::DISCONT) {
            converter.clear();
        }
        let map = buffer.map_readable().map_err(|_| gst::FlowError::Error)?;
        let mut samples = Vec::new();
        let converted = converter.convert(map.as_slice(), &mut samples);
        if converted.sanitized > 0 {
            core.count_sanitized(converted.sanitized);
        }
        Ok(Audio {
            samples,
            pts: buffer.pts(),
            live,
        })
    }
}

/// Loads the model for `element`, posting progress messages around the load
/// so that applications can show it.
pub fn open_stream(
    element: &gst::Element,
    settings: &Settings,
) -> Result<Stream, gst::ErrorMessage> {
    let spec = model_spec(settings)?;
    let path = super::fetch::local_model_path(element, &spec.path)?;
    open_stream_at(element, settings, path)
}

pub fn model_spec(settings: &Settings) -> Result<crate::engine::ModelSpec, gst::ErrorMessage> {
    settings
        .model_spec()
        .map_err(|e| gst::error_msg!(gst::ResourceError::NotFound, ("{}", e)))
}

/// Loads the model file at `path` (a local file) with the settings'
/// backend and threads.
pub fn open_stream_at(
    element: &gst::Element,
    settings: &Settings,
    path: std::path::PathBuf,
) -> Result<Stream, gst::ErrorMessage> {
    let mut spec = model_spec(settings)?;
    spec.path = path;
    let _ = element.post_message(
        gst::message::Progress::builder(
            gst::ProgressType::Start,
            "load-model",
            "Loading the Voxtral model",
        )
        .src(element)
        .build(),
    );
    let result = Stream::open(&spec, settings.threads);
    let (kind, text) = match &result {
        Ok(_) => (gst::ProgressType::Complete, "Model loaded"),
        Err(_) => (gst::ProgressType::Error, "Model load failed"),
    };
    let _ = element.post_message(
        gst::message::Progress::builder(kind, "load-model", text)
            .src(element)
            .build(),
    );
    result.map_err(|e| {
        use crate::engine::Error;
        let resource_error = match e {
            Error::ModelMissing { .. } | Error::NoModelPath => gst::ResourceError::NotFound,
            Error::ModelUnreadable { .. } => gst::ResourceError::OpenRead,
            Error::OutOfMemory { .. } => gst::ResourceError::NoSpaceLeft,
            _ => gst::ResourceError::Settings,
        };
        gst::error_msg!(resource_error, ("{}", e))
    })
}
