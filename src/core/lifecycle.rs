// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What both elements keep across state changes: the loaded model (READY),
//! the running core (PAUSED and PLAYING), the audio input and the last
//! statistics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use gst::prelude::*;

use crate::engine::Stream;
use crate::settings::{Settings, SettingsCell};

use super::input::{self, AudioInput};
use super::{fetch, Core, ModelSource, Output, Stats};

#[derive(Default)]
pub struct Lifecycle {
    /// The loaded model while no core runs.
    stream: Option<Stream>,
    /// A model still downloading, until a core takes it.
    coming: Option<Receiver<Result<Stream, ()>>>,
    /// Stops that download (at READY->NULL).
    cancel_download: Option<Arc<AtomicBool>>,
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
        let settings = settings.snapshot();
        let to_download =
            input::model_spec(&settings).and_then(|spec| fetch::uncached_hub_file(&spec.path));
        match to_download {
            Ok(Some(file)) => {
                self.download(element, settings, file);
                return Ok(());
            }
            Ok(None) => {}
            Err(msg) => {
                element.post_error_message(msg);
                return Err(gst::StateChangeError);
            }
        }
        match input::open_stream(element, &settings) {
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

    /// Downloads the model on a thread of its own and loads it there: the
    /// state change does not wait, and READY->NULL stops it.
    fn download(
        &mut self,
        element: &gst::Element,
        settings: Settings,
        file: crate::models::HubFile,
    ) {
        let (sender, receiver) = std::sync::mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = cancel.clone();
        let element = element.clone();
        std::thread::Builder::new()
            .name("voxtralrt-download".into())
            .spawn(move || {
                let loaded = fetch::fetch(&element, &file, &stop)
                    .and_then(|path| input::open_stream_at(&element, &settings, path));
                let sent = match loaded {
                    Ok(stream) => sender.send(Ok(stream)),
                    Err(msg) => {
                        if !stop.load(Ordering::Relaxed) {
                            element.post_error_message(msg);
                        }
                        sender.send(Err(()))
                    }
                };
                drop(sent);
            })
            .expect("spawning the model download");
        self.coming = Some(receiver);
        self.cancel_download = Some(cancel);
    }

    /// READY->NULL.
    pub fn unload(&mut self) {
        self.stream = None;
        self.coming = None;
        if let Some(cancel) = self.cancel_download.take() {
            cancel.store(true, Ordering::Relaxed);
        }
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
        let model = match (self.stream.take(), self.coming.take()) {
            (Some(stream), _) => ModelSource::Loaded(Box::new(stream)),
            (None, Some(coming)) => ModelSource::Coming(coming),
            // A stop that could not take the model back returned it to the
            // pool (or the download did not finish): take it from there.
            (None, None) => ModelSource::Loaded(Box::new(input::open_stream(element, settings)?)),
        };
        self.input.reset();
        self.core = Some(Arc::new(Core::start(model, settings, output)));
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
