// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A `model-path` that names a Hub file (`hf://OWNER/REPO[@REVISION]/FILE`
//! or `hf://OWNER/REPO:TAG`) becomes a file in the Hugging Face cache
//! before the model loads, with GStreamer Progress messages while it
//! downloads.

use std::path::{Path, PathBuf};

use gst::prelude::*;

use crate::models::ModelRef;

/// The local file `path` stands for: itself, or the cached (downloaded if
/// need be) Hub file it names.
pub fn local_model_path(element: &gst::Element, path: &Path) -> Result<PathBuf, gst::ErrorMessage> {
    let Some(value) = path.to_str().filter(|p| p.starts_with("hf://")) else {
        return Ok(path.to_owned());
    };
    match ModelRef::from_model_path(value) {
        Ok(ModelRef::Hub(file)) => fetch(element, &file),
        Ok(ModelRef::Path(path)) => Ok(path),
        Err(msg) => Err(gst::error_msg!(gst::ResourceError::Settings, ("{}", msg))),
    }
}

#[cfg(not(feature = "download"))]
fn fetch(
    _element: &gst::Element,
    file: &crate::models::HubFile,
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

#[cfg(feature = "download")]
fn fetch(
    element: &gst::Element,
    file: &crate::models::HubFile,
) -> Result<PathBuf, gst::ErrorMessage> {
    use crate::models::hub::{FetchError, Hub};
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
    // The load runs in the NULL->READY state change, which nothing else can
    // interrupt: there is no one to cancel it.
    let never = std::sync::atomic::AtomicBool::new(false);
    match hub.fetch(file, &mut report, &never) {
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
