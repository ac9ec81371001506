// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What both elements keep across state changes: the loaded model (READY),
//! the running core (PAUSED and PLAYING), the audio input and the last
//! statistics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use gst::prelude::*;

use crate::recognizer::{Recognizer, Wrapper};
use crate::settings::{EngineChoice, Settings, SettingsCell};

use super::input::{self, AudioInput};
use super::{fetch, Core, ModelSource, Output, Stats};

#[derive(Default)]
pub struct Lifecycle {
    /// The loaded model while no core runs.
    stream: Option<Box<dyn Recognizer>>,
    /// A model still downloading, until a core takes it.
    coming: Option<Receiver<Result<Box<dyn Recognizer>, ()>>>,
    /// Stops that download (at READY->NULL).
    cancel_download: Option<Arc<AtomicBool>>,
    core: Option<Arc<Core>>,
    pub input: AudioInput,
    last_stats: Stats,
    /// Set by tests: what the recognizer is wrapped in when it is made.
    wrapper: Option<Wrapper>,
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
        if settings.engine == EngineChoice::Vllm {
            return match remote_recognizer(element, &settings) {
                Ok(recognizer) => {
                    self.stream = Some(self.wrap(recognizer));
                    Ok(())
                }
                Err(msg) => {
                    element.post_error_message(msg);
                    Err(gst::StateChangeError)
                }
            };
        }
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
                self.stream = Some(self.wrap(Box::new(stream)));
                Ok(())
            }
            Err(msg) => {
                element.post_error_message(msg);
                Err(gst::StateChangeError)
            }
        }
    }

    /// Tests: wrap the recognizer this element makes from now on.
    pub fn set_wrapper(&mut self, wrapper: Option<Wrapper>) {
        self.wrapper = wrapper;
    }

    fn wrap(&self, recognizer: Box<dyn Recognizer>) -> Box<dyn Recognizer> {
        match &self.wrapper {
            Some(wrap) => wrap(recognizer),
            None => recognizer,
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
        let wrapper = self.wrapper.clone();
        let stop = cancel.clone();
        let element = element.clone();
        std::thread::Builder::new()
            .name("voxtralrt-download".into())
            .spawn(move || {
                let loaded = fetch::fetch(&element, &file, &stop)
                    .and_then(|path| input::open_stream_at(&element, &settings, path));
                let sent = match loaded {
                    Ok(stream) => {
                        let stream: Box<dyn Recognizer> = Box::new(stream);
                        sender.send(Ok(match &wrapper {
                            Some(wrap) => wrap(stream),
                            None => stream,
                        }))
                    }
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
        let report = super::report::Reporter::new(element);
        if settings.latency_ms < settings.least_latency_ms() {
            report.warning(
                super::report::Cause::Settings,
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
            (None, None) if settings.engine == EngineChoice::Vllm => {
                ModelSource::Loaded(self.wrap(remote_recognizer(element, settings)?))
            }
            (None, None) => {
                ModelSource::Loaded(self.wrap(Box::new(input::open_stream(element, settings)?)))
            }
        };
        self.input.reset();
        self.core = Some(Arc::new(Core::start(model, settings, output, report)));
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

/// The vLLM client for the settings (it connects when the core starts),
/// with a WARNING for the local-only properties that were set.
fn remote_recognizer(
    element: &gst::Element,
    settings: &Settings,
) -> Result<Box<dyn Recognizer>, gst::ErrorMessage> {
    let unused = settings.local_only_settings_in_use();
    if !unused.is_empty() {
        gst::element_warning!(
            element,
            gst::LibraryError::Settings,
            (
                "{} only apply to engine=local and are ignored with engine=vllm",
                unused.join(", ")
            )
        );
    }
    let config = crate::remote::ServerConfig {
        url: settings.url.clone().unwrap_or_default(),
        api_key: settings
            .api_key
            .expose()
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::remote::API_KEY_VARIABLE).ok())
            .filter(|k| !k.is_empty()),
        model: settings.served_model(),
        server_timeout: std::time::Duration::from_millis(u64::from(settings.server_timeout_ms)),
        give_up_after: (settings.max_lag_ms > 0)
            .then(|| std::time::Duration::from_millis(u64::from(settings.max_lag_ms))),
    };
    new_remote(config).map_err(|e| super::report::error_message(&e.into()))
}

#[cfg(feature = "vllm")]
fn new_remote(
    config: crate::remote::ServerConfig,
) -> Result<Box<dyn Recognizer>, crate::remote::Error> {
    Ok(Box::new(crate::remote::VllmRecognizer::new(config)?))
}

#[cfg(not(feature = "vllm"))]
fn new_remote(
    _config: crate::remote::ServerConfig,
) -> Result<Box<dyn Recognizer>, crate::remote::Error> {
    Err(crate::remote::Error::NotBuiltIn)
}
