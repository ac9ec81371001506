// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The tracer: its one parameter (`address=HOST:PORT`), the voxtralrt
//! elements it finds as they are made, and what it does when it cannot
//! serve (a WARNING that names the address, from GLib at once and from
//! each voxtralrt element as it starts; the pipeline runs on).

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use super::snapshot::Elements;
use super::{server, CAT, DEFAULT_ADDRESS};

#[derive(Default)]
pub struct Metrics {
    elements: Arc<Elements>,
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
        let served = address(params.as_deref().unwrap_or_default())
            .and_then(|address| server::start(&address, self.elements.clone()));
        match served {
            Ok(at) => gst::info!(CAT, imp = self, "serving http://{at}/metrics"),
            Err(problem) => {
                glib::g_warning!("voxtralrtmetrics", "{problem}");
                gst::warning!(CAT, imp = self, "{problem}");
                *self.problem.lock().unwrap() = Some(problem);
                self.register_hook(TracerHook::ElementChangeStatePost);
            }
        }
    }
}

impl GstObjectImpl for Metrics {}

impl TracerImpl for Metrics {
    fn element_new(&self, _ts: u64, element: &gst::Element) {
        self.elements.add_if_ours(element);
    }

    /// Registered only when nothing is served: each voxtralrt element says
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

/// The address the parameters name (the default without one).
fn address(params: &str) -> Result<String, String> {
    let params = params.trim();
    if params.is_empty() {
        return Ok(DEFAULT_ADDRESS.to_owned());
    }
    let usage = "write GST_TRACERS=\"voxtralrtmetrics(address=HOST:PORT)\"; no metrics are served";
    let settings = gst::Structure::from_str(&format!("voxtralrtmetrics,{params}"))
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
