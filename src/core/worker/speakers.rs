// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Who speaks: a `voxtralrt/speaker` event marks a change where it sits in
//! the audio; each word is told the speaker in force where it starts, and a
//! line is cut at the change, whatever the model's delay.

use super::Worker;
use crate::speakers::SPEAKER_EVENT;

/// The speaker an event names, if it is a (checked) speaker event.
pub(super) fn speaker_of(event: &gst::Event) -> Option<String> {
    let gst::EventView::CustomDownstream(e) = event.view() else {
        return None;
    };
    let s = e.structure()?;
    (s.name() == SPEAKER_EVENT)
        .then(|| s.get::<String>("speaker").ok())
        .flatten()
}

impl Worker {
    /// `speaker` speaks from where the audio received so far ends.
    pub(super) fn change_speaker(&mut self, speaker: String) {
        let at = self
            .input_position()
            .or_else(|| self.gate.as_ref().and_then(|g| g.kept_until()))
            .or(self.audio_end)
            .or_else(|| self.timeline.segment.start().map(|t| t.nseconds()))
            .unwrap_or(0);
        gst::debug!(crate::voxtral::LOG_CAT, "speaker {speaker:?} from {at} ns");
        self.speakers.change_at(at, speaker);
        if let Some(active) = &mut self.active {
            if at > active.base {
                active.transcript.turn_at(at - active.base);
            }
        }
    }

    /// The changes of speaker inside a stream that starts at `base`.
    pub(super) fn turns_from(&self, base: u64) -> Vec<u64> {
        self.speakers
            .changes_after(base)
            .map(|t| t - base)
            .collect()
    }

    /// Who said a word that starts at `t` (input time); older changes are
    /// forgotten.
    pub(super) fn speaker_at(&mut self, t: u64) -> Option<String> {
        let speaker = self.speakers.speaker_at(t).map(str::to_owned);
        self.speakers.forget_before(t);
        speaker
    }
}
