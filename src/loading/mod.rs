// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Finding and loading a model: from an element's settings to the
//! recognizer its core runs on, with one entry point, [`load`].
//!
//! - engine=local: `model-path` (a file, or an `hf://` reference) or
//!   `model` (a preset or a reference) names a GGUF file; a Hub file not in
//!   the cache is downloaded on a thread of its own (Progress messages
//!   `download-model`), then loaded (Progress messages `load-model`).
//! - engine=vllm: the client for the server at `url` (it connects when the
//!   core starts).
//!
//! Names, presets and the Hub cache are `crate::models` (no GStreamer, no
//! transcribe.cpp): `src/engine/` stays the only code that calls the C
//! library. Without the `local` feature (the client build) engine=local is
//! an ERROR at start.

#[cfg(feature = "local")]
mod fetch;
#[cfg(feature = "local")]
mod local;

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use crate::recognizer::{Recognizer, Wrapper};
use crate::settings::{EngineChoice, ServerChoice, Settings};

/// A model, loaded or on its way.
pub(crate) enum Loaded {
    Ready(Box<dyn Recognizer>),
    /// Downloading: the recognizer comes on `receiver` (`Err`: it could not
    /// be had, and the ERROR is posted); `cancel` stops the download.
    #[cfg_attr(not(feature = "local"), allow(dead_code))]
    Coming {
        receiver: Receiver<Result<Box<dyn Recognizer>, ()>>,
        cancel: Arc<AtomicBool>,
    },
}

/// The recognizer `settings` name, wrapped by `wrapper` (tests). A Hub file
/// not in the cache is downloaded on a thread of its own when `background`,
/// else here.
pub(crate) fn load(
    element: &gst::Element,
    settings: &Settings,
    wrapper: Option<&Wrapper>,
    background: bool,
) -> Result<Loaded, gst::ErrorMessage> {
    let wrap = |recognizer| wrapped(wrapper, recognizer);
    if settings.engine == EngineChoice::Vllm {
        return Ok(Loaded::Ready(wrap(remote(element, settings)?)));
    }
    load_local(element, settings, wrapper, background)
}

#[cfg(feature = "local")]
use local::load as load_local;

/// engine=local in the client build: an ERROR that names the ways out.
#[cfg(not(feature = "local"))]
fn load_local(
    _element: &gst::Element,
    _settings: &Settings,
    _wrapper: Option<&Wrapper>,
    _background: bool,
) -> Result<Loaded, gst::ErrorMessage> {
    Err(crate::core::report::error_message(
        &crate::recognizer::Error::NoLocalEngine,
    ))
}

/// `recognizer` in what tests wrap it in, if anything.
fn wrapped(wrapper: Option<&Wrapper>, recognizer: Box<dyn Recognizer>) -> Box<dyn Recognizer> {
    match wrapper {
        Some(wrap) => wrap(recognizer),
        None => recognizer,
    }
}

/// The vLLM client for the settings, with a WARNING for the local-only
/// properties that were set.
fn remote(
    element: &gst::Element,
    settings: &Settings,
) -> Result<Box<dyn Recognizer>, gst::ErrorMessage> {
    let unused = settings.local_only_settings_in_use();
    if !unused.is_empty() {
        crate::core::report::Reporter::new(element).warning(
            crate::core::report::Cause::Settings,
            &format!(
                "{} only apply to engine=local and are ignored with engine=vllm",
                unused.join(", ")
            ),
        );
    }
    let config = crate::remote::ServerConfig {
        url: settings.url.clone().unwrap_or_default(),
        spread: settings.server_choice == ServerChoice::Spread,
        api_key: settings
            .api_key
            .expose()
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::remote::API_KEY_VARIABLE).ok())
            .filter(|k| !k.is_empty()),
        model: settings.served_model(),
        server_timeout: settings.server_timeout(),
        give_up_after: (settings.max_lag_ms > 0).then(|| settings.max_lag().into()),
    };
    new_remote(config).map_err(|e| crate::core::report::error_message(&e.into()))
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
