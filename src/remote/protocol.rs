// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The JSON events of vLLM's realtime API (vLLM 0.32,
//! `entrypoints/speech_to_text/realtime/protocol.py`). Text frames only: a
//! binary frame makes the server close the socket.

use base64::Engine as _;
use serde_json::{json, Value};

/// The event the client sends to learn that everything before it was
/// handled: the server answers any unknown type with an `unknown_event`
/// error naming it, in order with its other answers.
pub const PROBE_TYPE: &str = "voxtralrt.probe";

pub fn session_update(model: &str) -> String {
    json!({"type": "session.update", "model": model}).to_string()
}

pub fn commit(final_: bool) -> String {
    if final_ {
        json!({"type": "input_audio_buffer.commit", "final": true}).to_string()
    } else {
        json!({"type": "input_audio_buffer.commit"}).to_string()
    }
}

pub fn probe() -> String {
    json!({ "type": PROBE_TYPE }).to_string()
}

/// `input_audio_buffer.append` with f32 samples as base64 PCM16 LE.
pub fn append(samples: &[f32]) -> String {
    let mut pcm = Vec::with_capacity(samples.len() * 2);
    for &s in samples {
        let v = (s.clamp(-1.0, 1.0) * 32767.0).round() as i16;
        pcm.extend_from_slice(&v.to_le_bytes());
    }
    let audio = base64::engine::general_purpose::STANDARD.encode(pcm);
    format!(r#"{{"type":"input_audio_buffer.append","audio":"{audio}"}}"#)
}

/// What the server can say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    SessionCreated,
    /// The text of one model step (empty for special tokens).
    Delta(String),
    /// The utterance ended: after a final commit, or when the session
    /// reached the server's `max_model_len`.
    Done(String),
    Error {
        code: String,
        message: String,
    },
    /// Not an event of the protocol: counted and ignored.
    Garbage,
}

impl Event {
    pub fn parse(text: &str) -> Event {
        let Ok(Value::Object(v)) = serde_json::from_str::<Value>(text) else {
            return Event::Garbage;
        };
        let field = |name: &str| v.get(name).and_then(Value::as_str).map(str::to_owned);
        match v.get("type").and_then(Value::as_str) {
            Some("session.created") => Event::SessionCreated,
            Some("transcription.delta") => field("delta").map_or(Event::Garbage, Event::Delta),
            Some("transcription.done") => Event::Done(field("text").unwrap_or_default()),
            Some("error") => Event::Error {
                code: field("code").unwrap_or_default(),
                message: field("error").unwrap_or_default(),
            },
            _ => Event::Garbage,
        }
    }

    /// Whether the server is closing the session for want of audio (vLLM's
    /// idle watchdog, `VLLM_REALTIME_IDLE_TIMEOUT_S`, PR 46926).
    pub fn closes_idle_session(&self) -> bool {
        matches!(self, Event::Error { code, .. } if code == "idle_timeout")
    }

    /// Whether this is the server's answer to [`probe`].
    pub fn answers_probe(&self) -> bool {
        matches!(self, Event::Error { code, message } if code == "unknown_event" && message.contains(PROBE_TYPE))
    }
}

/// Error codes that blame the client: the same audio sent again would be
/// refused again.
pub fn blames_the_client(code: &str) -> bool {
    matches!(
        code,
        "invalid_json"
            | "unknown_event"
            | "model_not_validated"
            | "invalid_event"
            | "model_not_found"
            | "invalid_audio"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_goes_as_base64_pcm16() {
        let msg: Value = serde_json::from_str(&append(&[0.0, 1.0, -1.0, 2.0])).unwrap();
        let pcm = base64::engine::general_purpose::STANDARD
            .decode(msg["audio"].as_str().unwrap())
            .unwrap();
        assert_eq!(pcm, [0, 0, 0xff, 0x7f, 0x01, 0x80, 0xff, 0x7f]);
    }

    #[test]
    fn events_are_read_and_garbage_is_told_apart() {
        assert_eq!(
            Event::parse(r#"{"type":"transcription.delta","delta":" he"}"#),
            Event::Delta(" he".into())
        );
        assert_eq!(
            Event::parse(r#"{"type":"transcription.done","text":"he","usage":{}}"#),
            Event::Done("he".into())
        );
        assert_eq!(
            Event::parse(r#"{"type":"error","error":"bad","code":"invalid_audio"}"#),
            Event::Error {
                code: "invalid_audio".into(),
                message: "bad".into()
            }
        );
        for garbage in [
            "",
            "nonsense",
            "[1,2]",
            r#"{"type":"x"}"#,
            r#"{"type":"transcription.delta"}"#,
        ] {
            assert_eq!(Event::parse(garbage), Event::Garbage, "{garbage}");
        }
    }

    #[test]
    fn the_probe_is_recognised_by_its_answer() {
        let answer = Event::Error {
            code: "unknown_event".into(),
            message: format!("Unknown event type: {PROBE_TYPE}"),
        };
        assert!(answer.answers_probe());
        assert!(!Event::Delta(String::new()).answers_probe());
    }
}
