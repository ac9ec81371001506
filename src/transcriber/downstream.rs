// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What the text goes into, where that changes what the stream must do.

use gst::glib;
use gst::prelude::*;

/// The most elements followed downstream (queues, capsfilters, bins).
const MAX_HOPS: usize = 16;

/// Whether the src pad feeds, through one-in one-out elements and bins, an
/// MP4/QuickTime muxer (GstBaseQTMux: mp4mux, qtmux, ...). Such a muxer
/// interleaves a sparse track by the start of its last buffer and drops
/// GAPs, so a quiet text stream holds its other inputs back until the next
/// buffer: more than default queues hold while no one speaks.
pub fn feeds_iso_muxer(srcpad: &gst::Pad) -> bool {
    let Some(muxer_type) = glib::Type::from_name("GstBaseQTMux") else {
        return false;
    };
    let mut pad = srcpad.peer();
    for _ in 0..MAX_HOPS {
        let Some(sinkpad) = pad else {
            return false;
        };
        // Into a bin: follow its ghost pad to what it stands for. Out of
        // our own bin: from the ghost pad's inner side to its peer outside.
        if let Some(ghost) = sinkpad.downcast_ref::<gst::GhostPad>() {
            pad = ghost.target();
            continue;
        }
        if let Some(inner) = sinkpad.downcast_ref::<gst::ProxyPad>() {
            pad = inner.internal().and_then(|ghost| ghost.peer());
            continue;
        }
        let Some(element) = sinkpad.parent_element() else {
            return false;
        };
        if element.type_().is_a(muxer_type) {
            return true;
        }
        let srcpads = element.src_pads();
        if element.sink_pads().len() != 1 || srcpads.len() != 1 {
            return false;
        }
        pad = srcpads[0].peer();
    }
    false
}
