// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

#![allow(clippy::non_send_fields_in_send_ty)]
#![doc = include_str!("../README.md")]

pub mod caption;
pub mod core;
pub mod engine;
pub mod models;
pub mod settings;
pub mod sink;
pub mod transcriber;
pub mod transcript;

fn plugin_init(plugin: &gst::Plugin) -> Result<(), gst::glib::BoolError> {
    transcriber::register(plugin)?;
    sink::register(plugin)?;
    Ok(())
}

gst::plugin_define!(
    voxtralrt,
    env!("CARGO_PKG_DESCRIPTION"),
    plugin_init,
    concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID")),
    "MPL",
    env!("CARGO_PKG_NAME"),
    env!("CARGO_PKG_NAME"),
    env!("CARGO_PKG_REPOSITORY"),
    env!("BUILD_REL_DATE")
);
