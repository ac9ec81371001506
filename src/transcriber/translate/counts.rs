// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What a translate pad counts, for the element's `stats`.

use std::sync::atomic::{AtomicU64, Ordering};

/// One translate pad's counts, for `stats`.
#[derive(Debug, Default)]
pub(super) struct PadCounts {
    pub units: AtomicU64,
    pub translated: AtomicU64,
    pub failures: AtomicU64,
    pub retimed: AtomicU64,
    pub requests: AtomicU64,
    pub catch_ups: AtomicU64,
}

impl PadCounts {
    pub(super) fn to_structure(&self, pad: &str, language: &str) -> gst::Structure {
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        gst::Structure::builder("translation")
            .field("pad", pad)
            .field("language-code", language)
            .field("units", count(&self.units))
            .field("translated", count(&self.translated))
            .field("failures", count(&self.failures))
            .field("retimed", count(&self.retimed))
            .field("requests", count(&self.requests))
            .field("catch-ups", count(&self.catch_ups))
            .build()
    }
}
