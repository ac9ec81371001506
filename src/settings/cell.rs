// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One element's settings behind a lock.

use gst::glib;
use gst::prelude::*;

use super::{Rejected, Settings};

/// The settings of one element, with the warnings about refused values that
/// could not be posted yet (an element has no bus before it is in a bin).
#[derive(Debug, Default)]
pub struct SettingsCell {
    settings: std::sync::Mutex<Settings>,
    pending_warnings: std::sync::Mutex<Vec<String>>,
}

impl SettingsCell {
    /// A cell that starts from `settings` (an element's own defaults).
    pub fn new(settings: Settings) -> SettingsCell {
        SettingsCell {
            settings: std::sync::Mutex::new(settings),
            pending_warnings: Default::default(),
        }
    }

    /// A copy to work with, so the lock is not held while it is used.
    pub fn snapshot(&self) -> Settings {
        self.settings.lock().unwrap().clone()
    }

    /// The latency to answer LATENCY queries with: `latency`, plus the
    /// longest the dictionary can hold a word.
    pub fn reported_latency(&self) -> gst::ClockTime {
        let settings = self.settings.lock().unwrap();
        let hold = settings.rules.current().max_hold_ns();
        settings.latency() + gst::ClockTime::from_nseconds(hold)
    }

    /// Live, what `output=lines` in a subtitle style adds to the latency.
    pub fn style_hold(&self) -> gst::ClockTime {
        self.settings.lock().unwrap().style_hold()
    }

    /// Sets a shared property; a refused value is kept out and warned about.
    pub fn set_property(
        &self,
        element: &gst::Element,
        value: &glib::Value,
        pspec: &glib::ParamSpec,
    ) {
        let result = self.settings.lock().unwrap().set_property(value, pspec);
        let warnings = match result {
            Ok(warnings) => warnings,
            Err(Rejected(message)) => vec![message],
        };
        if pspec.name() == "replacements" && element.parent().is_some() {
            // The dictionary's hold may have changed the latency.
            let _ = element.post_message(gst::message::Latency::builder().src(element).build());
        }
        for message in warnings {
            self.warn(element, message);
        }
    }

    /// A WARNING about a property value, posted now or once the element
    /// has a bus.
    pub fn warn(&self, element: &gst::Element, message: String) {
        gst::warning!(gst::CAT_DEFAULT, obj = element, "{}", message);
        if element.parent().is_some() {
            gst::element_warning!(element, gst::LibraryError::Settings, ("{}", message));
        } else {
            self.pending_warnings.lock().unwrap().push(message);
        }
    }

    pub fn property(&self, pspec: &glib::ParamSpec) -> glib::Value {
        self.settings.lock().unwrap().property(pspec)
    }

    /// Posts the warnings kept for when the element has a bus.
    pub fn post_pending_warnings(&self, element: &gst::Element) {
        for message in std::mem::take(&mut *self.pending_warnings.lock().unwrap()) {
            gst::element_warning!(element, gst::LibraryError::Settings, ("{}", message));
        }
    }
}
