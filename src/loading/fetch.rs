// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A `model-path` that names a Hub file (`hf://OWNER/REPO[@REVISION]/FILE`
//! or `hf://OWNER/REPO:TAG`) becomes a file in the Hugging Face cache
//! before the model loads, with GStreamer Progress messages while it
//! downloads.

use std::path::{Path, PathBuf};

use std::sync::atomic::AtomicBool;

use crate::models::{HubFile, ModelRef};

/// The Hub file `path` names, if it is an `hf://` reference.
pub(super) fn hub_file(path: &Path) -> Result<Option<HubFile>, gst::ErrorMessage> {
    let Some(value) = path.to_str().filter(|p| p.starts_with("hf://")) else {
        return Ok(None);
    };
    match ModelRef::from_model_path(value) {
        Ok(ModelRef::Hub(file)) => Ok(Some(file)),
        Ok(ModelRef::Path(_)) => Ok(None),
        Err(msg) => Err(gst::error_msg!(gst::ResourceError::Settings, ("{}", msg))),
    }
}

/// The local file `path` stands for: itself, or the cached (downloaded if
/// need be, without a way to cancel) Hub file it names.
pub(super) fn local_model_path(
    element: &gst::Element,
    path: &Path,
) -> Result<PathBuf, gst::ErrorMessage> {
    match hub_file(path)? {
        Some(file) => fetch(element, &file, &AtomicBool::new(false)),
        None => Ok(path.to_owned()),
    }
}

/// The Hub file `path` names when it is not in the cache yet: it must be
/// downloaded before the model loads.
pub(super) fn uncached_hub_file(path: &Path) -> Result<Option<HubFile>, gst::ErrorMessage> {
    Ok(hub_file(path)?.filter(|file| cached(file).is_none()))
}

#[cfg(feature = "download")]
fn cached(file: &HubFile) -> Option<PathBuf> {
    crate::models::hub::Hub::from_env().cached(file)
}

#[cfg(not(feature = "download"))]
fn cached(_file: &HubFile) -> Option<PathBuf> {
    None
}

#[cfg(not(feature = "download"))]
pub(super) fn fetch(
    _element: &gst::Element,
    file: &HubFile,
    _cancel: &AtomicBool,
) -> Result<PathBuf, gst::ErrorMessage> {
    Err(gst::error_msg!(
        gst::ResourceError::Settings,
        (
            "{} names a Hub file, but this build has no download support (cargo feature \
             \"download\"); download the file by hand and set model-path to it",
            file
        )
    ))
}

/// Downloads `file` into the cache with Progress messages; `cancel` stops
/// it within about a second, keeping what came for the next attempt.
#[cfg(feature = "download")]
pub(super) fn fetch(
    element: &gst::Element,
    file: &HubFile,
    cancel: &AtomicBool,
) -> Result<PathBuf, gst::ErrorMessage> {
    use crate::models::hub::{FetchError, Hub};
    use gst::prelude::*;
    let hub = Hub::from_env();
    if let Some(path) = hub.cached(file) {
        return Ok(path);
    }
    let post = |kind, text: String| {
        let _ = element.post_message(
            gst::message::Progress::builder(kind, "download-model", &text)
                .src(element)
                .build(),
        );
    };
    post(gst::ProgressType::Start, format!("Downloading {file}"));
    let mut report = |p: crate::models::hub::Progress| {
        post(
            gst::ProgressType::Continue,
            format!(
                "Downloading {file}: {:.1} of {:.1} MB at {:.1} MB/s",
                p.done as f64 / 1e6,
                p.total as f64 / 1e6,
                p.bytes_per_second / 1e6
            ),
        );
    };
    match hub.fetch(file, &mut report, cancel) {
        Ok(path) => {
            post(gst::ProgressType::Complete, format!("Downloaded {file}"));
            Ok(path)
        }
        Err(e) => {
            post(
                gst::ProgressType::Error,
                format!("Download of {file} failed"),
            );
            let kind = match e {
                FetchError::DiskFull { .. } => gst::ResourceError::NoSpaceLeft,
                FetchError::NotFound { .. } => gst::ResourceError::NotFound,
                FetchError::Unauthorized { .. } => gst::ResourceError::NotAuthorized,
                FetchError::Io { .. } => gst::ResourceError::Write,
                _ => gst::ResourceError::OpenRead,
            };
            Err(gst::error_msg!(kind, ("{}", e)))
        }
    }
}
