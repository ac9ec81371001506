// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The local engine as a recognizer: transcribe.cpp in this process.

use super::{AbortHandle, Error, Kind, ModelUse, Recognizer, StreamConfig, TextUpdate};
use crate::engine::{self, Stream};

impl From<engine::Error> for Error {
    fn from(e: engine::Error) -> Self {
        match e {
            engine::Error::Aborted => Error::Aborted,
            e => Error::Engine(e),
        }
    }
}

/// The kind of a local engine's failure.
pub(super) fn kind(e: &engine::Error) -> Kind {
    match e {
        engine::Error::NoModelPath | engine::Error::ModelMissing { .. } => Kind::NotFound,
        engine::Error::BackendUnavailable { .. } | engine::Error::InvalidDelay { .. } => {
            Kind::Settings
        }
        _ => Kind::Library,
    }
}

impl Recognizer for Stream {
    fn backend_name(&self) -> String {
        Stream::backend_name(self).to_owned()
    }

    fn threads(&self) -> u32 {
        Stream::threads(self)
    }

    fn model_use(&self) -> ModelUse {
        let memory = self.model().memory();
        let together = self.decoded_together();
        ModelUse {
            repacked_bytes: memory.repacked,
            repacked_tensors: memory.repacked_tensors,
            streams: self.model_streams(),
            decode_rounds: together.rounds,
            decode_streams: together.streams,
        }
    }

    fn abort_handle(&self) -> AbortHandle {
        Stream::abort_handle(self)
    }

    fn begin(&mut self, config: StreamConfig) -> Result<(), Error> {
        Ok(Stream::begin(self, config)?)
    }

    fn set_decode_interval(&mut self, ms: u32) {
        Stream::set_decode_interval(self, ms)
    }

    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        Ok(Stream::feed(self, samples)?)
    }

    fn finalize(&mut self) -> Result<Vec<TextUpdate>, Error> {
        Ok(vec![Stream::finalize(self)?])
    }

    fn reset(&mut self) {
        Stream::reset(self)
    }

    fn samples_received(&self) -> u64 {
        Stream::samples_received(self)
    }

    fn sees_model_end(&self) -> bool {
        Stream::sees_model_end(self)
    }
}
