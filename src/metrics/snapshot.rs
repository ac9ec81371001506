// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The voxtralrt elements the tracer found, and what a request reads of
//! them: each one's name, state and `stats`, taken without holding the
//! list's lock (reading `stats` takes the element's own locks briefly).

use std::sync::Mutex;

use gst::glib;
use gst::prelude::*;

use crate::sink::VoxtralRtSink;
use crate::transcriber::VoxtralRtTranscriber;

/// The elements, as weak references: the tracer keeps none alive.
#[derive(Default)]
pub(super) struct Elements(Mutex<Vec<glib::WeakRef<gst::Element>>>);

impl Elements {
    /// Keeps `element` if it is a transcriber or a sink of this plugin.
    pub(super) fn add_if_ours(&self, element: &gst::Element) {
        if output_pad(element).is_none() {
            return;
        }
        let mut list = self.0.lock().unwrap();
        list.retain(|weak| weak.upgrade().is_some());
        list.push(element.downgrade());
    }

    pub(super) fn contains(&self, element: &gst::Element) -> bool {
        let list = self.0.lock().unwrap();
        list.iter()
            .any(|weak| weak.upgrade().as_ref() == Some(element))
    }

    /// What each element that still exists says now.
    pub(super) fn read(&self) -> Vec<ElementView> {
        let elements: Vec<gst::Element> = {
            let mut list = self.0.lock().unwrap();
            list.retain(|weak| weak.upgrade().is_some());
            list.iter().filter_map(glib::WeakRef::upgrade).collect()
        };
        elements.iter().filter_map(ElementView::read).collect()
    }
}

/// The pad that carries an element's words: `src` for the transcriber,
/// `sink` for the sink (its words leave as messages); `None` for any other.
fn output_pad(element: &gst::Element) -> Option<&'static str> {
    let type_ = element.type_();
    if type_.is_a(VoxtralRtTranscriber::static_type()) {
        Some("src")
    } else if type_.is_a(VoxtralRtSink::static_type()) {
        Some("sink")
    } else {
        None
    }
}

/// One element as a request found it.
pub(super) struct ElementView {
    pub name: String,
    pub pad: &'static str,
    pub state: gst::State,
    pub stats: gst::Structure,
}

impl ElementView {
    fn read(element: &gst::Element) -> Option<ElementView> {
        Some(ElementView {
            name: element.name().to_string(),
            pad: output_pad(element)?,
            state: element.current_state(),
            stats: element.property::<gst::Structure>("stats"),
        })
    }

    /// The statistics of each model stream: the element's own, then each
    /// request pad's (`participants`).
    pub(super) fn cores(&self) -> Vec<&gst::StructureRef> {
        let mut cores = vec![self.stats.as_ref()];
        cores.extend(structures(&self.stats, "participants"));
        cores
    }

    /// `field` added over the model streams (0 where it is missing).
    pub(super) fn sum(&self, field: &str) -> u64 {
        self.cores().iter().map(|s| u64_of(s, field)).sum()
    }

    /// The translate pads' structures.
    pub(super) fn translations(&self) -> Vec<&gst::StructureRef> {
        structures(&self.stats, "translations")
    }
}

pub(super) fn u64_of(s: &gst::StructureRef, field: &str) -> u64 {
    s.get::<u64>(field).unwrap_or(0)
}

pub(super) fn bool_of(s: &gst::StructureRef, field: &str) -> bool {
    s.get::<bool>(field).unwrap_or(false)
}

pub(super) fn str_of<'a>(s: &'a gst::StructureRef, field: &str) -> &'a str {
    s.get::<&str>(field).unwrap_or("")
}

/// The structures of the array `field` (none if it is missing).
pub(super) fn structures<'a>(s: &'a gst::StructureRef, field: &str) -> Vec<&'a gst::StructureRef> {
    s.get::<gst::ArrayRef>(field)
        .map(|a| {
            a.as_slice()
                .iter()
                .filter_map(|v| v.get::<&gst::StructureRef>().ok())
                .collect()
        })
        .unwrap_or_default()
}
