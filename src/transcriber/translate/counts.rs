// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What a translate pad counts, for the element's `stats`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::core::lag::LagHistogram;
use crate::core::stats::{elapsed_ns, field};

/// One translate pad's counts, for `stats`.
#[derive(Debug, Default)]
pub(super) struct PadCounts {
    pub units: AtomicU64,
    pub translated: AtomicU64,
    pub failures: AtomicU64,
    pub retimed: AtomicU64,
    pub requests: AtomicU64,
    pub catch_ups: AtomicU64,
    pub watched: Mutex<Watched>,
}

/// How the pad's text keeps up (see `watch.rs`).
#[derive(Debug, Default)]
pub(super) struct Watched {
    /// Words in the translations that went out.
    pub words: u64,
    /// Each translation's lag behind its source words.
    pub lag: LagHistogram,
    /// When the pad's thread started, and when the last translation left.
    pub started_at: Option<Instant>,
    pub last_out_at: Option<Instant>,
    /// The caption alarm's reason while it is on.
    pub alarm: Option<String>,
}

impl PadCounts {
    pub(super) fn to_structure(&self, pad: &str, language: &str) -> gst::Structure {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let watched = self.watched.lock().unwrap();
        gst::Structure::builder("translation")
            .field(field::PAD, pad)
            .field(field::LANGUAGE_CODE, language)
            .field("units", count(&self.units))
            .field("translated", count(&self.translated))
            .field(field::FAILURES, count(&self.failures))
            .field("retimed", count(&self.retimed))
            .field(field::REQUESTS, count(&self.requests))
            .field(field::CATCH_UPS, count(&self.catch_ups))
            .field(field::WORDS, watched.words)
            .field(field::LAG, watched.lag.to_structure())
            .field(
                field::LAST_TRANSLATION_AGE,
                elapsed_ns(watched.last_out_at.or(watched.started_at)),
            )
            .field(field::CAPTION_ALARM, watched.alarm.is_some())
            .field(
                field::CAPTION_ALARM_REASON,
                watched.alarm.clone().unwrap_or_default(),
            )
            .build()
    }
}
