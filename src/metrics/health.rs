// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Readiness, as `/readyz` and `voxtralrt_ready` tell it: an element is
//! ready when it is PLAYING and, for each model stream, its model loaded
//! (engine=vllm: connected to a server), no model call hung, the watchdog
//! not restarting a silent model and no caption alarm on (a translate
//! pad's included). An element without a model is ready when PLAYING.

use super::snapshot::{ElementFigures, StreamFigures};

/// A model call (a decode; engine=vllm, a wait for the server) longer than
/// this means the model or its server has stopped answering: a decode of
/// one interval takes far less, and a vLLM wait ends at `server-timeout`.
const HUNG_CALL_NS: u64 = 5_000_000_000;

/// Why `element` is not ready; none when it is.
pub(super) fn problems(element: &ElementFigures) -> Vec<String> {
    let mut problems = Vec::new();
    if element.state != gst::State::Playing {
        let state = format!("{:?}", element.state).to_uppercase();
        problems.push(format!("it is {state}, not PLAYING"));
    }
    for stream in &element.streams {
        problems.extend(stream_problems(stream));
    }
    for t in &element.translations {
        if let Some(reason) = &t.caption_alarm {
            problems.push(format!(
                "{} ({}): caption alarm: {reason}",
                t.pad, t.language
            ));
        }
    }
    problems
}

/// Why one model stream is not ready, each said with its request pad.
fn stream_problems(stream: &StreamFigures) -> Vec<String> {
    let mut problems = Vec::new();
    match stream.engine.as_str() {
        "vllm" if !stream.server_connected => problems.push("no server connected".to_owned()),
        "local" if !stream.model_loaded => problems.push("the model is not loaded yet".to_owned()),
        _ => {}
    }
    if stream.model_call_ns > HUNG_CALL_NS {
        problems.push(format!(
            "the model has not answered for {} s",
            stream.model_call_ns / 1_000_000_000
        ));
    }
    if stream.stalled {
        problems
            .push("the watchdog is restarting a model that writes nothing over speech".to_owned());
    }
    if let Some(reason) = &stream.caption_alarm {
        problems.push(format!("caption alarm: {reason}"));
    }
    match &stream.pad {
        Some(pad) => problems.iter().map(|p| format!("{pad}: {p}")).collect(),
        None => problems,
    }
}

/// `/readyz`: ready or not, and a line per element saying why.
pub(super) fn readyz(elements: &[ElementFigures]) -> (bool, String) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::snapshot::TranslationFigures;

    fn element(state: gst::State, streams: Vec<StreamFigures>) -> ElementFigures {
        ElementFigures {
            name: "t".into(),
            pad: "src".into(),
            state,
            streams,
            translations: Vec::new(),
            subtitles: None,
            caption_words_dropped: None,
            invalid_utf8_buffers: None,
        }
    }

    fn loaded() -> StreamFigures {
        StreamFigures {
            engine: "local".into(),
            model_loaded: true,
            ..StreamFigures::default()
        }
    }

    #[test]
    fn an_element_without_a_model_is_ready_when_playing() {
        let encoder = element(gst::State::Playing, Vec::new());
        assert_eq!(readyz(&[encoder]), (true, "t: ready\n".to_owned()));
        let paused = element(gst::State::Paused, Vec::new());
        assert_eq!(problems(&paused), ["it is PAUSED, not PLAYING"]);
    }

    #[test]
    fn each_reason_is_said_with_its_pad() {
        let participant = StreamFigures {
            pad: Some("sink_1".into()),
            model_call_ns: 7_000_000_000,
            caption_alarm: Some("the machine is overloaded".into()),
            ..loaded()
        };
        let mut t = element(gst::State::Playing, vec![loaded(), participant]);
        t.translations.push(TranslationFigures {
            pad: "translate_src_0".into(),
            language: "es".into(),
            caption_alarm: Some("the server is unreachable or failing".into()),
            ..TranslationFigures::default()
        });
        assert_eq!(
            readyz(&[t]),
            (
                false,
                "t: not ready: sink_1: the model has not answered for 7 s; sink_1: caption \
                 alarm: the machine is overloaded; translate_src_0 (es): caption alarm: the \
                 server is unreachable or failing\n"
                    .to_owned()
            )
        );
    }

    #[test]
    fn no_element_is_not_ready() {
        let (ready, body) = readyz(&[]);
        assert!(!ready);
        assert!(body.contains("no voxtralrt element"), "{body}");
    }
}
