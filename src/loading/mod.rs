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
//! Names, presets and the Hub cache need no GStreamer and no transcribe.cpp:
//! `src/engine/` stays the only code that calls the C library.

mod fetch;
#[cfg(feature = "download")]
pub mod hub;
mod names;
mod presets;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use gst::prelude::*;

pub use names::{FileChoice, HubFile, ModelRef};
pub use presets::{preset, preset_names, Preset, PRESETS, PRESET_REPO};

use crate::engine::{ModelSpec, Stream};
use crate::recognizer::{Recognizer, Wrapper};
use crate::settings::{EngineChoice, Settings};

/// A model, loaded or on its way.
pub(crate) enum Loaded {
    Ready(Box<dyn Recognizer>),
    /// Downloading: the recognizer comes on `receiver` (`Err`: it could not
    /// be had, and the ERROR is posted); `cancel` stops the download.
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
    let spec = model_spec(settings)?;
    if background {
        if let Some(file) = fetch::uncached_hub_file(&spec.path)? {
            return Ok(download(element, settings, file, wrapper.cloned()));
        }
    }
    let path = fetch::local_model_path(element, &spec.path)?;
    let stream = open(element, settings, path)?;
    gst::info!(
        crate::engine::LOG_CAT,
        obj = element,
        "model loaded, running on {}",
        stream.backend_name()
    );
    Ok(Loaded::Ready(wrap(Box::new(stream))))
}

/// `recognizer` in what tests wrap it in, if anything.
fn wrapped(wrapper: Option<&Wrapper>, recognizer: Box<dyn Recognizer>) -> Box<dyn Recognizer> {
    match wrapper {
        Some(wrap) => wrap(recognizer),
        None => recognizer,
    }
}

/// The model file the settings name, or why there is none: `model-path`
/// wins; a name stands for its `hf://` reference.
fn model_spec(settings: &Settings) -> Result<ModelSpec, gst::ErrorMessage> {
    let by_name = || {
        let name = settings.model.as_deref().filter(|m| !m.is_empty())?;
        match ModelRef::from_model_name(name).ok()? {
            ModelRef::Hub(file) => Some(PathBuf::from(file.to_string())),
            ModelRef::Path(path) => Some(path),
        }
    };
    let path = settings
        .model_path
        .clone()
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(by_name)
        .ok_or_else(|| {
            gst::error_msg!(
                gst::ResourceError::NotFound,
                ("{}", crate::engine::Error::NoModelPath)
            )
        })?;
    Ok(ModelSpec {
        path,
        backend: settings.backend.into(),
        device: u32::try_from(settings.device).ok(),
    })
}

/// Loads the local file at `path` with the settings' backend and threads,
/// posting Progress messages around the load.
fn open(
    element: &gst::Element,
    settings: &Settings,
    path: PathBuf,
) -> Result<Stream, gst::ErrorMessage> {
    let spec = ModelSpec {
        path,
        ..model_spec(settings)?
    };
    let progress = |kind, text: &str| {
        let _ = element.post_message(
            gst::message::Progress::builder(kind, "load-model", text)
                .src(element)
                .build(),
        );
    };
    progress(gst::ProgressType::Start, "Loading the Voxtral model");
    let result = Stream::open(&spec, settings.threads);
    match &result {
        Ok(_) => progress(gst::ProgressType::Complete, "Model loaded"),
        Err(_) => progress(gst::ProgressType::Error, "Model load failed"),
    }
    result.map_err(|e| {
        use crate::engine::Error;
        let domain = match e {
            Error::ModelMissing { .. } | Error::NoModelPath => gst::ResourceError::NotFound,
            Error::ModelUnreadable { .. } => gst::ResourceError::OpenRead,
            Error::OutOfMemory { .. } => gst::ResourceError::NoSpaceLeft,
            _ => gst::ResourceError::Settings,
        };
        gst::error_msg!(domain, ("{}", e))
    })
}

/// Downloads the model on a thread of its own and loads it there: the
/// state change does not wait, and the cancel flag stops it.
fn download(
    element: &gst::Element,
    settings: &Settings,
    file: HubFile,
    wrapper: Option<Wrapper>,
) -> Loaded {
    let (sender, receiver) = std::sync::mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = cancel.clone();
    let (element, settings) = (element.clone(), settings.clone());
    std::thread::Builder::new()
        .name("voxtralrt-download".into())
        .spawn(move || {
            let loaded = fetch::fetch(&element, &file, &stop)
                .and_then(|path| open(&element, &settings, path));
            let sent = match loaded {
                Ok(stream) => sender.send(Ok(wrapped(wrapper.as_ref(), Box::new(stream)))),
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
    Loaded::Coming { receiver, cancel }
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
        spread: settings.server_choice == crate::settings::ServerChoice::Spread,
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
