// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Models by name: what `model-path` and `model` may say (a file, a preset,
//! an `hf://` reference), the presets, and the Hugging Face cache and its
//! downloads. Pure: no GStreamer, no transcribe.cpp, so the settings check a
//! name and `crate::loading` finds the file without importing each other.

#[cfg(feature = "download")]
pub mod hub;
mod names;
mod presets;

pub use names::{FileChoice, HubFile, ModelRef};
pub use presets::{preset, preset_names, Preset, PRESETS, PRESET_REPO};
