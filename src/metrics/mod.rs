// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtmetrics`: a GStreamer tracer that serves the elements of this
//! plugin over HTTP, for any pipeline and with no application code
//! (`GST_TRACERS="voxtralrtmetrics(address=HOST:PORT)"`): `/metrics` in
//! Prometheus' text format, `/healthz` and `/readyz` for a supervisor.
//! Every figure is read from the elements' `stats` property, the one source
//! of truth, when a request comes.
//!
//! `imp.rs` the tracer (its parameter, its start and stop), `elements.rs`
//! the elements it finds through the `element-new` hook (those of this
//! plugin that have `stats`), `snapshot.rs` what a request reads of each
//! one, once, into plain figures, `exposition.rs` the text format (through
//! prometheus-client), `health.rs` readiness, `server.rs` the HTTP server
//! (tiny_http). docs/metrics.md lists the series.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

mod elements;
mod exposition;
mod health;
mod imp;
mod server;
mod snapshot;

/// The tracer's name, in `GST_TRACERS` and the registry.
const NAME: &str = "voxtralrtmetrics";

/// Where the tracer listens unless `address` says otherwise: this machine
/// only, on the port the OpenTelemetry Prometheus exporter uses.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:9464";

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        NAME,
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime metrics and health endpoints"),
    )
});

glib::wrapper! {
    pub struct VoxtralRtMetrics(ObjectSubclass<imp::Metrics>) @extends gst::Tracer, gst::Object;
}

/// GStreamer with this plugin registered, for the unit tests (once).
#[cfg(test)]
fn init_plugin() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gst::init().unwrap();
        crate::plugin_register_static().unwrap();
    });
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Tracer::register(Some(plugin), NAME, VoxtralRtMetrics::static_type())
}
