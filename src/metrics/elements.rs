// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The elements the tracer serves: those made by a factory of the plugin
//! the tracer itself comes from, with a `stats` structure. Found by what
//! they are, not by their types, so that a new element of the plugin is
//! served without a change here.

use std::sync::{LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;

use super::NAME;

/// The elements, as weak references: the tracer keeps none alive.
#[derive(Default)]
pub(super) struct Elements(Mutex<Vec<glib::WeakRef<gst::Element>>>);

impl Elements {
    /// Keeps `element` if it is one of ours.
    pub(super) fn add_if_ours(&self, element: &gst::Element) {
        if !is_ours(element) {
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

    /// The elements that still exist, taken out of the list so that reading
    /// them holds no lock of ours (reading `stats` takes their own briefly).
    pub(super) fn alive(&self) -> Vec<gst::Element> {
        let mut list = self.0.lock().unwrap();
        list.retain(|weak| weak.upgrade().is_some());
        list.iter().filter_map(glib::WeakRef::upgrade).collect()
    }
}

/// The plugin this tracer was registered by (`voxtralrt`).
static OUR_PLUGIN: LazyLock<Option<glib::GString>> = LazyLock::new(|| {
    gst::Registry::get()
        .lookup_feature(NAME)
        .and_then(|feature| feature.plugin_name())
});

/// Whether `element` was made by a factory of our plugin and has `stats`.
pub(super) fn is_ours(element: &gst::Element) -> bool {
    let plugin = element.factory().and_then(|f| f.plugin_name());
    plugin.is_some() && plugin == *OUR_PLUGIN && has_stats(element)
}

fn has_stats(element: &gst::Element) -> bool {
    element
        .find_property("stats")
        .is_some_and(|p| p.value_type() == gst::Structure::static_type())
}

/// The pad an element's words leave by, the `pad` label of its series: a
/// sink's words leave as messages, so its always sink pad; any other
/// element's always src pad.
pub(super) fn output_pad(element: &gst::Element) -> String {
    let direction = if element.element_flags().contains(gst::ElementFlags::SINK) {
        gst::PadDirection::Sink
    } else {
        gst::PadDirection::Src
    };
    element
        .pad_template_list()
        .iter()
        .find(|t| t.direction() == direction && t.presence() == gst::PadPresence::Always)
        .map(|t| t.name_template().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(factory: &str) -> gst::Element {
        super::super::init_plugin();
        gst::ElementFactory::make(factory).build().unwrap()
    }

    #[test]
    fn the_elements_of_this_plugin_with_stats_are_ours() {
        for factory in ["voxtralrttranscriber", "voxtralrtsink", "voxtralrtsubenc"] {
            assert!(is_ours(&make(factory)), "{factory}");
        }
        assert!(!is_ours(&make("fakesink")));
        assert!(!is_ours(&make("identity")));
    }

    #[test]
    fn the_pad_label_is_where_the_words_leave() {
        assert_eq!(output_pad(&make("voxtralrttranscriber")), "src");
        assert_eq!(output_pad(&make("voxtralrtsink")), "sink");
        assert_eq!(output_pad(&make("voxtralrtsubenc")), "src");
    }

    #[test]
    fn elements_are_kept_only_while_they_exist() {
        let elements = Elements::default();
        let kept = make("voxtralrtsubenc");
        elements.add_if_ours(&kept);
        elements.add_if_ours(&make("voxtralrttranscriber"));
        elements.add_if_ours(&make("fakesink"));
        assert_eq!(elements.alive(), std::slice::from_ref(&kept));
        assert!(elements.contains(&kept));
    }
}
