// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The tracer: its one parameter (`address=HOST:PORT`), the elements it
//! finds as they are made, its server's start and stop, and what it does
//! when it cannot serve: a warning on its debug category at once, and a
//! WARNING message from each of its elements as it starts (a tracer has no
//! bus of its own); the pipeline runs on. Never GLib's `g_warning`, which
//! `G_DEBUG=fatal-warnings` turns into an abort.

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use super::elements::Elements;
use super::server::{self, Server};
use super::{CAT, DEFAULT_ADDRESS, NAME};

#[derive(Default)]
pub struct Metrics {
    elements: Arc<Elements>,
    server: Mutex<Option<Server>>,
    /// Why nothing is served, when the tracer could not start.
    problem: Mutex<Option<String>>,
}

#[glib::object_subclass]
impl ObjectSubclass for Metrics {
    const NAME: &'static str = "GstVoxtralRtMetrics";
    type Type = super::VoxtralRtMetrics;
    type ParentType = gst::Tracer;
}

impl ObjectImpl for Metrics {
    fn constructed(&self) {
        self.parent_constructed();
        self.register_hook(TracerHook::ElementNew);
        let params = self.obj().property::<Option<String>>("params");
        let started = address(params.as_deref().unwrap_or_default())
            .and_then(|address| server::start(&address, self.elements.clone()));
        match started {
            Ok(server) => {
                gst::info!(
                    CAT,
                    imp = self,
                    "serving http://{}/metrics",
                    server.address()
                );
                *self.server.lock().unwrap() = Some(server);
            }
            Err(problem) => self.cannot_serve(problem),
        }
    }

    /// GStreamer lets its tracers go at `gst_deinit()`: the server stops
    /// there and its port is free for another.
    fn dispose(&self) {
        if let Some(server) = self.server.lock().unwrap().take() {
            let address = server.address();
            drop(server);
            gst::info!(CAT, imp = self, "stopped serving on {address}");
        }
    }
}

impl GstObjectImpl for Metrics {}

impl TracerImpl for Metrics {
    fn element_new(&self, _ts: u64, element: &gst::Element) {
        self.elements.add_if_ours(element);
    }

    /// Registered only when nothing is served: each of our elements says
    /// so on its bus as it starts, where an application (and gst-launch)
    /// sees it.
    fn element_change_state_post(
        &self,
        _ts: u64,
        element: &gst::Element,
        change: gst::StateChange,
        _result: Result<gst::StateChangeSuccess, gst::StateChangeError>,
    ) {
        if change != gst::StateChange::NullToReady || !self.elements.contains(element) {
            return;
        }
        if let Some(problem) = self.problem.lock().unwrap().clone() {
            gst::element_warning!(element, gst::ResourceError::OpenReadWrite, ("{}", problem));
        }
    }
}

impl Metrics {
    fn cannot_serve(&self, problem: String) {
        gst::warning!(CAT, imp = self, "{problem}");
        *self.problem.lock().unwrap() = Some(problem);
        self.register_hook(TracerHook::ElementChangeStatePost);
    }
}

/// The address the parameters name (the default without one).
fn address(params: &str) -> Result<String, String> {
    let params = params.trim();
    if params.is_empty() {
        return Ok(DEFAULT_ADDRESS.to_owned());
    }
    let usage = "write GST_TRACERS=\"voxtralrtmetrics(address=HOST:PORT)\"; no metrics are served";
    let settings = gst::Structure::from_str(&format!("{NAME},{params}"))
        .map_err(|_| format!("voxtralrtmetrics: cannot read the parameters {params:?}: {usage}"))?;
    let mut address = DEFAULT_ADDRESS.to_owned();
    for (name, value) in settings.iter() {
        match name.as_str() {
            "address" => {
                address = value.get::<String>().map_err(|_| {
                    format!("voxtralrtmetrics: address {value:?} is not HOST:PORT: {usage}")
                })?
            }
            other => {
                return Err(format!(
                    "voxtralrtmetrics: no parameter {other:?} (its one parameter is address): \
                     {usage}"
                ))
            }
        }
    }
    Ok(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_the_one_parameter() {
        gst::init().unwrap();
        assert_eq!(address("").unwrap(), DEFAULT_ADDRESS);
        assert_eq!(address("address=127.0.0.1:9999").unwrap(), "127.0.0.1:9999");
        assert_eq!(address("address=\"[::1]:9999\"").unwrap(), "[::1]:9999");
        let unknown = address("adress=127.0.0.1:9999").unwrap_err();
        assert!(unknown.contains("no parameter \"adress\""), "{unknown}");
        let number = address("address=9999").unwrap_err();
        assert!(number.contains("is not HOST:PORT"), "{number}");
    }
}
