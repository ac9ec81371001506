// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What both elements keep across state changes: the loaded model (READY),
//! the running core (PAUSED and PLAYING), the audio input and the last
//! statistics.

use std::sync::Arc;

use gst::prelude::*;

use crate::engine::Stream;
use crate::settings::{Settings, SettingsCell};

use super::input::{self, AudioInput};
use super::{Core, Output, Stats};

#[derive(Default)]
pub struct Lifecycle {
    /// The loaded model while no core runs.
    stream: Option<Stream>,
    core: Option<Arc<Core>>,
    pub input: AudioInput,
    last_stats: Stats,
}

impl Lifecycle {
    /// NULL->READY: loads the model (or takes it from the pool), posting
    /// progress, and an ERROR message on failure.
    pub fn load(
        &mut self,
        element: &gst::Element,
        settings: &SettingsCell,
    ) -> Result<(), gst::StateChangeError> {
        settings.post_pending_warnings(element);
        match input::open_stream(element, &settings.snapshot()) {
            Ok(stream) => {
                gst::info!(
                    crate::engine::LOG_CAT,
                    obj = element,
                    "model loaded, running on {}",
                    stream.backend_name()
                );
                self.stream = Some(stream);
                Ok(())
            }
            Err(msg) => {
                element.post_error_message(msg);
                Err(gst::StateChangeError)
            }
        }
    }

    /// READY->NULL.
    pub fn unload(&mut self) {
        self.stream = None;
    }

    /// READY->PAUSED: starts the worker on the loaded model.
    pub fn start(
        &mut self,
        element: &gst::Element,
        settings: &Settings,
        output: Box<dyn Output>,
    ) -> Result<(), gst::ErrorMessage> {
        if settings.latency_ms < settings.least_latency_ms() {
            gst::element_warning!(
                element,
                gst::CoreError::Clock,
                (
                    "latency {} ms is less than delay {} ms and decode-interval {} ms need ({} ms): \
                     words can leave later than the latency promised; raise latency",
                    settings.latency_ms,
                    settings.delay_ms,
                    settings.decode_interval_ms,
                    settings.least_latency_ms()
                )
            );
        }
        let stream = match self.stream.take() {
            Some(stream) => stream,
            // A stop that could not take the model back returned it to the
            // pool: take it from there.
            None => input::open_stream(element, settings)?,
        };
        self.input.reset();
        self.core = Some(Arc::new(Core::start(stream, settings, output)));
        Ok(())
    }

    /// The running core, for use without holding the element's lock.
    pub fn core(&self) -> Option<Arc<Core>> {
        self.core.clone()
    }

    /// PAUSED->READY, first half: takes the core out, to be stopped with
    /// [`stop_core`] without holding the element's lock (the worker may be
    /// delivering results meanwhile).
    pub fn take_core(&mut self) -> Option<Arc<Core>> {
        self.core.take()
    }

    /// PAUSED->READY, second half.
    pub fn stopped(&mut self, (stream, stats): (Option<Stream>, Stats)) {
        self.stream = stream;
        self.last_stats = stats;
    }

    pub fn stats(&self) -> Stats {
        self.core
            .as_ref()
            .map_or_else(|| self.last_stats.clone(), |c| c.stats())
    }
}

/// Stops a core, returning its model (unless another thread still holds the
/// core: then the model goes back to the pool) and its last statistics.
pub fn stop_core(core: Arc<Core>) -> (Option<Stream>, Stats) {
    let stats = core.stats();
    core.flush_start();
    let stream = Arc::into_inner(core).and_then(Core::stop);
    (stream, stats)
}
