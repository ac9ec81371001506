// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! With request pads and its `sink` pad unlinked, the sink feeds that pad
//! itself, so that BaseSink prerolls, waits for PLAYING and posts EOS as
//! any sink does. (A sink that does without preroll, `async=false`, leaves
//! GStreamer 1.22's gst-launch-1.0 hanging at EOS now and then under load:
//! `decodebin ! fakesink async=false` twice in one pipeline hung 8 of 40
//! runs here.)
//!
//! Like a mixer, it prerolls once every linked request pad has brought
//! something (a buffer, a gap or EOS), and posts EOS once the words of
//! every pad are out. Its events go from a thread of their own: BaseSink
//! holds them in PAUSED until PLAYING.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use gst::prelude::*;

#[derive(Debug, Default)]
pub(super) struct OwnPad {
    /// This run feeds the sink pad.
    active: AtomicBool,
    /// The request pads that have brought something.
    started: Mutex<Vec<String>>,
    prerolled: AtomicBool,
}

impl OwnPad {
    /// At start: whether this run feeds the sink pad.
    pub(super) fn set_active(&self, active: bool) {
        self.active.store(active, Ordering::SeqCst);
    }

    pub(super) fn is_active(&self) -> bool {
        self.active.load(Ordering::SeqCst)
    }

    /// READY->PAUSED: a new preroll.
    pub(super) fn reset(&self) {
        self.started.lock().unwrap().clear();
        self.prerolled.store(false, Ordering::SeqCst);
    }

    /// Request pad `pad` of `element` has brought something: prerolls
    /// once every linked request pad has.
    pub(super) fn pad_started(&self, element: &gst::Element, pad: &gst::Pad) {
        if !self.is_active() || self.prerolled.load(Ordering::SeqCst) {
            return;
        }
        let all = {
            let mut started = self.started.lock().unwrap();
            let name = pad.name().to_string();
            if !started.contains(&name) {
                started.push(name);
            }
            element
                .sink_pads()
                .iter()
                .filter(|p| p.name() != "sink" && p.is_linked())
                .all(|p| started.iter().any(|s| *s == p.name()))
        };
        if all && !self.prerolled.swap(true, Ordering::SeqCst) {
            let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
            segment.set_start(gst::ClockTime::ZERO);
            send(
                element,
                vec![
                    gst::event::StreamStart::new("voxtralrtsink-participants"),
                    gst::event::Segment::new(&segment),
                    gst::event::Gap::builder(gst::ClockTime::ZERO)
                        .duration(gst::ClockTime::ZERO)
                        .build(),
                ],
            );
        }
    }

    /// Every pad's words are out: EOS on the sink pad.
    pub(super) fn end(&self, element: &gst::Element, seqnum: gst::Seqnum) {
        if self.is_active() {
            send(
                element,
                vec![gst::event::Eos::builder().seqnum(seqnum).build()],
            );
        }
    }
}

/// Sends `events` to `element`'s sink pad from a thread of their own.
fn send(element: &gst::Element, events: Vec<gst::Event>) {
    let Some(pad) = element.static_pad("sink") else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("voxtralrt-own-pad".into())
        .spawn(move || {
            for event in events {
                pad.send_event(event);
            }
        });
    if let Err(e) = spawned {
        gst::element_error!(
            element,
            gst::CoreError::Thread,
            ("Could not start a thread for the sink pad's events: {}", e)
        );
    }
}
