// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! engine=local: the settings' GGUF file (downloaded first if it is a Hub
//! file not in the cache), loaded by transcribe.cpp. Built with the `local`
//! feature only.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gst::prelude::*;

use super::{fetch, wrapped, Loaded};
use crate::engine::{Backend, ModelSpec, Stream};
use crate::models::{HubFile, ModelRef};
use crate::recognizer::Wrapper;
use crate::settings::{BackendChoice, Settings};

/// The local recognizer for `settings` (see [`super::load`]).
pub(super) fn load(
    element: &gst::Element,
    settings: &Settings,
    wrapper: Option<&Wrapper>,
    background: bool,
) -> Result<Loaded, gst::ErrorMessage> {
    let spec = model_spec(settings)?;
    if background {
        if let Some(file) = fetch::uncached_hub_file(&spec.path)? {
            return Ok(download(element, settings, file, wrapper.cloned()));
        }
    }
    let path = fetch::local_model_path(element, &spec.path)?;
    let stream = open(element, settings, path)?;
    gst::info!(
        crate::voxtral::LOG_CAT,
        obj = element,
        "model loaded, running on {}",
        stream.backend_name()
    );
    Ok(Loaded::Ready(wrapped(wrapper, Box::new(stream))))
}

fn backend(choice: BackendChoice) -> Backend {
    match choice {
        BackendChoice::Auto => Backend::Auto,
        BackendChoice::Cpu => Backend::Cpu,
        BackendChoice::Cuda => Backend::Cuda,
        BackendChoice::Vulkan => Backend::Vulkan,
    }
}

/// The model file the settings name, or why there is none: `model-path`
/// wins; a name stands for its `hf://` reference. The name is checked here,
/// when the element starts, not when `model` is set: with engine=vllm it
/// names a served model, and `engine` may be set after it.
fn model_spec(settings: &Settings) -> Result<ModelSpec, gst::ErrorMessage> {
    let path = match settings
        .model_path
        .clone()
        .filter(|p| !p.as_os_str().is_empty())
    {
        Some(path) => path,
        None => model_by_name(settings.model.as_deref())?,
    };
    Ok(ModelSpec {
        backend: backend(settings.backend),
        device: u32::try_from(settings.device).ok(),
        ..ModelSpec::new(path)
    })
}

/// The file `model` names (a preset or an `hf://` reference).
fn model_by_name(model: Option<&str>) -> Result<PathBuf, gst::ErrorMessage> {
    let Some(name) = model.filter(|m| !m.is_empty()) else {
        return Err(gst::error_msg!(
            gst::ResourceError::NotFound,
            ("{}", crate::engine::Error::NoModelPath)
        ));
    };
    match ModelRef::from_model_name(name) {
        Ok(ModelRef::Hub(file)) => Ok(PathBuf::from(file.to_string())),
        Ok(ModelRef::Path(path)) => Ok(path),
        Err(e) => Err(gst::error_msg!(
            gst::ResourceError::NotFound,
            ("{e} (engine=local; for a vLLM server's model, set engine=vllm)")
        )),
    }
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
