// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What both elements keep across state changes: the loaded model (READY),
//! the running core (PAUSED and PLAYING), the audio input and the last
//! statistics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use gst::prelude::*;

use crate::loading::{self, Loaded};
use crate::recognizer::{Recognizer, Wrapper};
use crate::settings::{Settings, SettingsCell};

use super::input::AudioInput;
use super::report::{Cause, Reporter};
use super::{Core, ModelSource, Output, Stats};

#[derive(Default)]
pub struct Lifecycle {
    /// The loaded model while no core runs.
    stream: Option<Box<dyn Recognizer>>,
    /// A model still downloading, until a core takes it.
    coming: Option<Receiver<Result<Box<dyn Recognizer>, ()>>>,
    /// Stops that download (at READY->NULL).
    cancel_download: Option<Arc<AtomicBool>>,
    core: Option<Arc<Core>>,
    /// Started without a model or a core: its pad was unlinked beside
    /// request pads.
    idle: bool,
    /// The ERROR about data on that idle pad was posted.
    idle_said: bool,
    pub input: AudioInput,
    last_stats: Stats,
    /// Set by tests: what the recognizer is wrapped in when it is made.
    wrapper: Option<Wrapper>,
}

impl Lifecycle {
    /// NULL->READY: loads the model (or takes it from the pool, or starts
    /// its download), posting progress, and an ERROR message on failure.
    pub fn load(
        &mut self,
        element: &gst::Element,
        settings: &SettingsCell,
    ) -> Result<(), gst::StateChangeError> {
        settings.post_pending_warnings(element);
        let loaded = loading::load(element, &settings.snapshot(), self.wrapper.as_ref(), true);
        match loaded {
            Ok(Loaded::Ready(recognizer)) => self.stream = Some(recognizer),
            Ok(Loaded::Coming { receiver, cancel }) => {
                self.coming = Some(receiver);
                self.cancel_download = Some(cancel);
            }
            Err(msg) => {
                element.post_error_message(msg);
                return Err(gst::StateChangeError);
            }
        }
        Ok(())
    }

    /// Tests: wrap the recognizer this element makes from now on.
    pub fn set_wrapper(&mut self, wrapper: Option<Wrapper>) {
        self.wrapper = wrapper;
    }

    /// READY->NULL.
    pub fn unload(&mut self) {
        self.stream = None;
        self.coming = None;
        if let Some(cancel) = self.cancel_download.take() {
            cancel.store(true, Ordering::Relaxed);
        }
    }

    /// READY->PAUSED for a pad that carries no audio (the element's sink
    /// pad unlinked beside request pads): no core, and no model kept.
    pub fn start_idle(&mut self) {
        self.unload();
        self.idle = true;
        self.idle_said = false;
    }

    /// READY->PAUSED: starts the worker on the loaded model.
    pub fn start(
        &mut self,
        element: &gst::Element,
        settings: &Settings,
        output: Box<dyn Output>,
    ) -> Result<(), gst::ErrorMessage> {
        let report = Reporter::new(element);
        if settings.latency_ms < settings.least_latency_ms() {
            report.warning(
                Cause::Settings,
                &format!(
                    "latency {} ms is less than delay {} ms and decode-interval {} ms need ({} ms): \
                     words can leave later than the latency promised; raise latency",
                    settings.latency_ms,
                    settings.delay_ms,
                    settings.decode_interval_ms,
                    settings.least_latency_ms()
                ),
            );
        }
        let model = match (self.stream.take(), self.coming.take()) {
            (Some(stream), _) => ModelSource::Loaded(stream),
            (None, Some(coming)) => ModelSource::Coming(coming),
            // A stop that could not take the model back returned it to the
            // pool (or the download did not finish): take it from there.
            (None, None) => match loading::load(element, settings, self.wrapper.as_ref(), false)? {
                Loaded::Ready(recognizer) => ModelSource::Loaded(recognizer),
                Loaded::Coming { receiver, .. } => ModelSource::Coming(receiver),
            },
        };
        self.input.reset();
        self.core = Some(Arc::new(Core::start(model, settings, output, report)));
        Ok(())
    }

    /// The core for the data (audio, serialized events) on the element's
    /// sink pad: none while stopped (flushing); data on a pad that started
    /// idle is an ERROR, said once.
    pub fn core_for_audio(&mut self, element: &gst::Element) -> Result<Arc<Core>, gst::FlowError> {
        match &self.core {
            Some(core) => Ok(core.clone()),
            None if self.idle => {
                if std::mem::replace(&mut self.idle_said, true) {
                    return Err(gst::FlowError::Error);
                }
                gst::element_error!(
                    element,
                    gst::CoreError::Pad,
                    ("Audio came on the sink pad, which was not linked when the element started beside its request pads: it has no model stream"),
                    ["link the sink pad before the element starts, or bring this audio on a request pad (sink_%u)"]
                );
                Err(gst::FlowError::Error)
            }
            None => Err(gst::FlowError::Flushing),
        }
    }

    /// The running core, for use without holding the element's lock.
    pub fn core(&self) -> Option<Arc<Core>> {
        self.core.clone()
    }

    /// PAUSED->READY, first half: takes the core out, to be stopped with
    /// [`stop_core`] without holding the element's lock (the worker may be
    /// delivering results meanwhile).
    pub fn take_core(&mut self) -> Option<Arc<Core>> {
        self.idle = false;
        self.core.take()
    }

    /// PAUSED->READY, second half.
    pub fn stopped(&mut self, (stream, stats): (Option<Box<dyn Recognizer>>, Stats)) {
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
pub fn stop_core(core: Arc<Core>) -> (Option<Box<dyn Recognizer>>, Stats) {
    let stats = core.stats();
    core.flush_start();
    let stream = Arc::into_inner(core).and_then(Core::stop);
    (stream, stats)
}
