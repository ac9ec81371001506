// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The translation properties, which only voxtralrttranscriber has (its
//! `translate_src_%u` pads give the transcript in other languages).

use gst::glib;
use gst::prelude::*;

/// transcriberbin sets `translate-latency` on its transcriber, 500 ms
/// unless told otherwise; the same here.
pub const DEFAULT_TRANSLATE_LATENCY_MS: u32 = 500;
pub const DEFAULT_TRANSLATE_LOOKAHEAD_MS: u32 = 3000;
pub const DEFAULT_TRANSLATE_MAX_REQUESTS: u32 =
    crate::translation::pacing::DEFAULT_MAX_REQUESTS as u32;

#[derive(Debug, Clone)]
pub struct TranslateSettings {
    /// Base URLs of OpenAI-compatible servers, comma-separated.
    pub url: String,
    pub model: String,
    /// `None`: the environment's (VOXTRALRT_TRANSLATE_API_KEY, then
    /// OPENAI_API_KEY).
    pub api_key: Option<String>,
    pub latency_ms: u32,
    pub lookahead_ms: u32,
    /// The most requests of one language in flight at once (live).
    pub max_requests: u32,
}

impl Default for TranslateSettings {
    fn default() -> Self {
        TranslateSettings {
            url: String::new(),
            model: String::new(),
            api_key: None,
            latency_ms: DEFAULT_TRANSLATE_LATENCY_MS,
            lookahead_ms: DEFAULT_TRANSLATE_LOOKAHEAD_MS,
            max_requests: DEFAULT_TRANSLATE_MAX_REQUESTS,
        }
    }
}

impl TranslateSettings {
    pub fn latency(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.latency_ms))
    }

    pub fn param_specs() -> Vec<glib::ParamSpec> {
        vec![
            glib::ParamSpecString::builder("translate-url")
                .nick("Translation servers")
                .blurb("Base URL of an OpenAI-compatible chat server (vLLM, llama.cpp, Ollama: http://host:8000/v1); several, comma-separated, share the requests and fail over to each other")
                .mutable_ready()
                .build(),
            glib::ParamSpecString::builder("translate-model")
                .nick("Translation model")
                .blurb("The chat model the server serves (its name in /v1/models); needed for translate_src pads")
                .mutable_ready()
                .build(),
            glib::ParamSpecString::builder("translate-api-key")
                .nick("Translation API key")
                .blurb("Write-only. Bearer key for the chat server; default: VOXTRALRT_TRANSLATE_API_KEY, else OPENAI_API_KEY")
                .write_only()
                .mutable_ready()
                .build(),
            glib::ParamSpecUInt::builder("translate-latency")
                .nick("Translation latency")
                .blurb("ms a translate pad adds to the latency; a translation later than that goes out re-timed (live)")
                .default_value(DEFAULT_TRANSLATE_LATENCY_MS)
                .mutable_ready()
                .build(),
            glib::ParamSpecUInt::builder("translate-lookahead")
                .nick("Translation lookahead")
                .blurb("Most ms of speech gathered into one unit to translate (a sentence end, a pause or a speaker change closes one sooner)")
                .minimum(100)
                .default_value(DEFAULT_TRANSLATE_LOOKAHEAD_MS)
                .mutable_ready()
                .build(),
            glib::ParamSpecUInt::builder("translate-max-requests")
                .nick("Translation requests at once")
                .blurb("Live: the most requests of one language in flight at once, each unit sent as it closes; past that (or past what the servers answer side by side, learnt), the waiting units go out merged in one request")
                .minimum(1)
                .maximum(64)
                .default_value(DEFAULT_TRANSLATE_MAX_REQUESTS)
                .mutable_ready()
                .build(),
        ]
    }

    /// Sets the property `name`; false if it is not one of these.
    pub fn set(&mut self, name: &str, value: &glib::Value) -> bool {
        match name {
            "translate-url" => {
                self.url = value
                    .get::<Option<String>>()
                    .ok()
                    .flatten()
                    .unwrap_or_default()
            }
            "translate-model" => {
                self.model = value
                    .get::<Option<String>>()
                    .ok()
                    .flatten()
                    .unwrap_or_default()
            }
            "translate-api-key" => self.api_key = value.get::<Option<String>>().ok().flatten(),
            "translate-latency" => self.latency_ms = value.get().expect("type checked"),
            "translate-lookahead" => self.lookahead_ms = value.get().expect("type checked"),
            "translate-max-requests" => self.max_requests = value.get().expect("type checked"),
            _ => return false,
        }
        true
    }

    pub fn get(&self, name: &str) -> Option<glib::Value> {
        Some(match name {
            "translate-url" => unset_if_empty(&self.url).to_value(),
            "translate-model" => unset_if_empty(&self.model).to_value(),
            "translate-latency" => self.latency_ms.to_value(),
            "translate-lookahead" => self.lookahead_ms.to_value(),
            "translate-max-requests" => self.max_requests.to_value(),
            _ => return None,
        })
    }
}

/// A string property not set (or set empty) reads as NULL, as the others do.
fn unset_if_empty(value: &str) -> Option<&str> {
    Some(value).filter(|v| !v.is_empty())
}
