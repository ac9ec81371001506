// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The transcriber's `translate_src_%u` pads: each language's pad, its
//! thread while the element runs, and its counts.
//!
//! Translation problems are WARNINGs, never ERRORs: the transcript on the
//! src pad goes on whatever the chat server does. A pad that cannot
//! translate (no server, no model, a bad language code) still gets the
//! stream's events and GAPs, so that downstream never waits for it.

use std::sync::{Arc, Mutex};

use gst::prelude::*;

use crate::core::report::{Cause, Reporter};
use crate::core::stats::field;
use crate::subtitles::Style;
use crate::translation::{ApiKey, ChatClient, ChatConfig, Language, UnitLimits};

use super::counts::PadCounts;
use super::output::{self, PadTranslator};
use super::pad::TranslatePad;
use super::requests::Servers;
use super::settings::TranslateSettings;
use super::taps::Taps;
use crate::transcriber::caption_output::{CaptionTrack, OutputLosses};
use crate::transcriber::captions::CaptionSettings;

struct Entry {
    pad: TranslatePad,
    counts: Arc<PadCounts>,
}

#[derive(Default)]
pub(in crate::transcriber) struct TranslatePads {
    list: Mutex<Vec<Entry>>,
}

impl TranslatePads {
    pub(in crate::transcriber) fn add(&self, pad: &TranslatePad) {
        self.list.lock().unwrap().push(Entry {
            pad: pad.clone(),
            counts: Arc::default(),
        });
    }

    /// Forgets `pad`; false if it is not one of these.
    pub(in crate::transcriber) fn remove(&self, pad: &gst::Pad) -> bool {
        let mut list = self.list.lock().unwrap();
        let before = list.len();
        list.retain(|e| e.pad.upcast_ref::<gst::Pad>() != pad);
        list.len() != before
    }

    pub(in crate::transcriber) fn pads(&self) -> Vec<gst::Pad> {
        let list = self.list.lock().unwrap();
        list.iter().map(|e| e.pad.clone().upcast()).collect()
    }

    /// The lowest free `translate_src_N`.
    pub(in crate::transcriber) fn free_name(&self) -> String {
        let taken: Vec<String> = self.pads().iter().map(|p| p.name().to_string()).collect();
        (0..)
            .map(|n| format!("translate_src_{n}"))
            .find(|name| !taken.contains(name))
            .expect("a free name")
    }

    /// READY->PAUSED: a thread per pad; what the src output hands them to.
    pub(in crate::transcriber) fn start(
        &self,
        element: &gst::Element,
        settings: &TranslateSettings,
        captions: &CaptionSettings,
        losses: &Arc<OutputLosses>,
        style: &Style,
        alarm: gst::ClockTime,
    ) -> Taps {
        let mut taps = Taps::default();
        let list = self.list.lock().unwrap();
        if list.is_empty() {
            return taps;
        }
        let report = Reporter::new(element);
        let servers = client(settings, &report).map(|c| Arc::new(Servers::new(c)));
        let limits = UnitLimits {
            lookahead: std::time::Duration::from_millis(u64::from(settings.lookahead_ms)),
            ..UnitLimits::default()
        };
        for (who, entry) in list.iter().enumerate() {
            let translator = PadTranslator {
                pad: entry.pad.clone().upcast(),
                language: language(&entry.pad, &report),
                servers: servers.clone(),
                who,
                limits,
                max_requests: settings.max_requests as usize,
                counts: entry.counts.clone(),
                captions: CaptionTrack::new(
                    entry.pad.caption_settings(captions),
                    losses.clone(),
                    report.clone(),
                ),
                report: report.clone(),
                style: style.for_language(entry.pad.language_code().as_deref()),
                alarm,
            };
            match output::spawn(translator) {
                Ok(sender) => taps.add(sender),
                Err(e) => report.warning(
                    Cause::Settings,
                    &format!("{}: no thread for its translations: {e}", entry.pad.name()),
                ),
            }
        }
        taps
    }

    /// `translations`: each pad's counts, if there are pads.
    pub(in crate::transcriber) fn add_stats(&self, stats: &mut gst::Structure) {
        let list = self.list.lock().unwrap();
        if list.is_empty() {
            return;
        }
        let pads = list.iter().map(|e| {
            let language = e.pad.language_code().unwrap_or_default();
            e.counts
                .to_structure(&e.pad.name(), &language)
                .to_send_value()
        });
        stats.set(field::TRANSLATIONS, gst::Array::from_values(pads));
    }
}

/// The chat client of `translate-url`, or why there is none.
fn client(settings: &TranslateSettings, report: &Reporter) -> Option<ChatClient> {
    let refuse = |why: &str| {
        report.warning(
            Cause::Settings,
            &format!("translate_src pads give no text: {why}; the transcript goes on"),
        );
        None
    };
    if settings.url.trim().is_empty() {
        return refuse(
            "translate-url is not set (an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1)",
        );
    }
    if settings.model.trim().is_empty() {
        return refuse("translate-model is not set (the model the server serves)");
    }
    let mut config = ChatConfig::new(settings.model.trim());
    if let Some(key) = &settings.api_key {
        config.key = ApiKey::given(key);
    }
    match ChatClient::new(&settings.url, config) {
        Ok(client) => Some(client),
        Err(e) => refuse(&e.to_string()),
    }
}

/// The pad's `language-code`, checked; a WARNING names a bad one.
fn language(pad: &TranslatePad, report: &Reporter) -> Option<Language> {
    let code = pad.language_code().unwrap_or_default();
    match Language::parse(&code) {
        Ok(language) => Some(language),
        Err(e) => {
            report.warning(
                Cause::Settings,
                &format!(
                    "{}: language-code {code:?} cannot be used: {e}; this pad gives no text",
                    pad.name()
                ),
            );
            None
        }
    }
}
