// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What the src output hands to the `translate_src_%u` pads' threads
//! (none in a build without the `translate` feature).

use std::sync::mpsc::Sender;

use crate::core::TimedCue;

/// What the src pad hands to a translate pad, in order.
#[cfg_attr(not(feature = "translate"), allow(dead_code))]
pub(in crate::transcriber) enum Item {
    Word(TimedCue),
    /// Nothing is said up to here.
    Gap(gst::ClockTime),
    /// STREAM_START or SEGMENT.
    Event(gst::Event),
    Eos(gst::Seqnum),
    Flush,
    /// A translation request's answer came (it waits in the pad's answers).
    Answered,
}

/// The src pad's side: every translate pad's inbox.
#[derive(Default)]
pub(in crate::transcriber) struct Taps(Vec<Sender<Item>>);

impl Taps {
    #[cfg_attr(not(feature = "translate"), allow(dead_code))]
    pub(in crate::transcriber) fn add(&mut self, sender: Sender<Item>) {
        self.0.push(sender);
    }

    /// Hands `item` to every pad (made once per pad).
    pub(in crate::transcriber) fn send(&self, item: impl Fn() -> Item) {
        for sender in &self.0 {
            let _ = sender.send(item());
        }
    }
}
