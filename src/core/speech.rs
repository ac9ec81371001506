// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Sustained speech, judged from the voice detector's frame scores: what
//! the stall watchdog and the caption alarm count as people talking. Each
//! keeps its own judge over the one detector's frames.

use super::voice::Frame;

/// A frame with a voice score from this on is speech. Above earshot's
/// default 0.5, which held every frame of a sustained synthetic chord for a
/// voice; at 0.8, 85 % of espeak-ng speech frames count and 20 % of the
/// chord's, which the sustained-speech window then drops (measured here).
const VOICE_SCORE: f32 = 0.8;
/// A stretch counts only with a frame this sure of a voice in the window:
/// espeak-ng words reach it (86 % of their time counted still), a
/// synthetic chord taken for a voice 17 % of the time at 0.8 never did
/// (measured here on 40 s and 20 s).
const STRONG_SCORE: f32 = 0.95;
/// Speech is sustained: a frame counts when at least `SUSTAINED` of the
/// last `WINDOW` frames (320 ms) sound like a voice, so that the odd frame
/// of noise or music that does adds nothing up over minutes.
const WINDOW: usize = 20;
const SUSTAINED: u32 = 12;

#[derive(Debug, Default)]
pub(super) struct SustainedSpeech {
    /// The last `WINDOW` frames' decisions, a bit each (newest lowest).
    recent: u32,
    /// Which of those were counted as speech: once speech is sustained, the
    /// voiced frames that led up to it count too (a short word's onset).
    counted: u32,
    /// Which of those scored at least `STRONG_SCORE`.
    strong: u32,
}

impl SustainedSpeech {
    /// For one frame heard: how many frames (this one and the onset that
    /// led up to it) now count as speech; 0 when it is not speech.
    pub(super) fn judge(&mut self, frame: &Frame) -> u32 {
        let window = (1 << WINDOW) - 1;
        let voiced = frame.score >= VOICE_SCORE;
        self.recent = ((self.recent << 1) | u32::from(voiced)) & window;
        self.strong = ((self.strong << 1) | u32::from(frame.score >= STRONG_SCORE)) & window;
        self.counted = (self.counted << 1) & window;
        if voiced && self.recent.count_ones() >= SUSTAINED && self.strong != 0 {
            let new = self.recent & !self.counted;
            self.counted |= new;
            new.count_ones()
        } else {
            0
        }
    }
}
