// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `voxtralrtmetrics`: a GStreamer tracer that serves the voxtralrt
//! elements of its process over HTTP, for any pipeline and with no
//! application code (`GST_TRACERS="voxtralrtmetrics(address=HOST:PORT)"`):
//! `/metrics` in Prometheus' text format, `/healthz` and `/readyz` for a
//! supervisor. Every figure is read from the elements' `stats` property, the
//! one source of truth, when a request comes.
//!
//! `imp.rs` the tracer (its parameter, the elements it finds through the
//! `element-new` hook), `server.rs` the HTTP server (a thread per
//! connection, so a stalled client holds nothing an element needs),
//! `snapshot.rs` what is read of each element, `exposition.rs` the text
//! format, `health.rs` readiness. docs/metrics.md lists the series.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;

mod exposition;
mod health;
mod imp;
mod server;
mod snapshot;

/// Where the tracer listens unless `address` says otherwise: this machine
/// only, on the port the OpenTelemetry Prometheus exporter uses.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:9464";

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrtmetrics",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime metrics and health endpoints"),
    )
});

glib::wrapper! {
    pub struct VoxtralRtMetrics(ObjectSubclass<imp::Metrics>) @extends gst::Tracer, gst::Object;
}

pub fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Tracer::register(
        Some(plugin),
        "voxtralrtmetrics",
        VoxtralRtMetrics::static_type(),
    )
}
