// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Readiness, as `/readyz` and `voxtralrt_ready` tell it: an element is
//! ready when it is PLAYING with its model loaded (engine=vllm: connected to
//! a server), no model call has hung, the watchdog is not restarting a
//! silent model and no caption alarm is on.

use super::snapshot::{bool_of, str_of, u64_of, ElementView};

/// A model call (a decode; engine=vllm, a wait for the server) longer than
/// this means the model or its server has stopped answering: a decode of
/// one interval takes far less, and a vLLM wait ends at `server-timeout`.
const HUNG_CALL_NS: u64 = 5_000_000_000;

/// Why `element` is not ready; none when it is.
pub(super) fn problems(element: &ElementView) -> Vec<String> {
    let mut problems = Vec::new();
    if element.state != gst::State::Playing {
        let state = format!("{:?}", element.state).to_uppercase();
        problems.push(format!("it is {state}, not PLAYING"));
    }
    for core in element.cores() {
        let pad = core
            .get::<&str>("pad")
            .map_or_else(|_| String::new(), |p| format!("{p}: "));
        match str_of(core, "engine") {
            "vllm" if !bool_of(core, "server-connected") => {
                problems.push(format!("{pad}no server connected"))
            }
            "local" if !bool_of(core, "model-loaded") => {
                problems.push(format!("{pad}the model is not loaded yet"))
            }
            _ => {}
        }
        let call = u64_of(core, "model-call");
        if call > HUNG_CALL_NS {
            problems.push(format!(
                "{pad}the model has not answered for {} s",
                call / 1_000_000_000
            ));
        }
        if bool_of(core, "stalled") {
            problems.push(format!(
                "{pad}the watchdog is restarting a model that writes nothing over speech"
            ));
        }
        if bool_of(core, "caption-alarm") {
            problems.push(format!(
                "{pad}caption alarm: {}",
                str_of(core, "caption-alarm-reason")
            ));
        }
    }
    for t in element.translations() {
        if bool_of(t, "caption-alarm") {
            problems.push(format!(
                "{} ({}): caption alarm: {}",
                str_of(t, "pad"),
                str_of(t, "language-code"),
                str_of(t, "caption-alarm-reason")
            ));
        }
    }
    problems
}

/// `/readyz`: ready or not, and a line per element saying why.
pub(super) fn readyz(elements: &[ElementView]) -> (bool, String) {
    if elements.is_empty() {
        return (
            false,
            "not ready: no voxtralrt element in this process\n".into(),
        );
    }
    let mut ready = true;
    let mut body = String::new();
    for element in elements {
        let problems = problems(element);
        if problems.is_empty() {
            body.push_str(&format!("{}: ready\n", element.name));
        } else {
            ready = false;
            body.push_str(&format!(
                "{}: not ready: {}\n",
                element.name,
                problems.join("; ")
            ));
        }
    }
    (ready, body)
}
