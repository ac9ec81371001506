// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The sink-pad side both elements share: the caps they accept and turning
//! buffers into samples.

use std::sync::LazyLock;

use gst::prelude::*;

use crate::voxtral::{SampleConverter, SampleFormat, SAMPLE_RATE};

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
