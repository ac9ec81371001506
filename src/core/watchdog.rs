// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The stall watchdog: a model that writes nothing while people talk
//! (Voxtral Realtime servings have been seen emitting only blanks over
//! speech for minutes) is restarted from the current audio. Speech is heard
//! with a voice activity detector, and time is audio time, so a file
//! behaves as live input does. The rule: speech heard since the model last
//! wrote, however long the pauses between it, reaching the timeout; a long
//! stretch without speech starts the count afresh. Restarts back off while
//! the model stays silent, so one that never speaks again causes no restart
//! storm.

use super::speech::SustainedSpeech;
use super::voice::{Frame, VAD_FRAME};
use crate::voxtral::samples_to_ns;

/// The longest wait between restarts, as a multiple of the timeout.
const MAX_BACKOFF: u64 = 16;
/// This long without speech starts the count of speech without text
/// afresh: longer than the pauses of sparse talk (radio calls, a quiet
/// meeting), so that those add up, while the odd stretch of music or noise
/// taken for a voice cannot add up over hours.
const FORGET_AFTER_QUIET_NS: u64 = 30_000_000_000;

/// What a feed showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    Fine,
    /// Speech for this long without text: restart. `first` on an
    /// episode's first restart (one WARNING per episode).
    Stalled {
        speech_ns: u64,
        first: bool,
    },
}

pub(super) struct Watchdog {
    speech: SustainedSpeech,
    timeout_ns: u64,
    /// Speech heard since the model last wrote (or since the last long
    /// quiet).
    speech_without_text_ns: u64,
    /// Audio without speech since the last speech.
    quiet_ns: u64,
    /// Restarts in this episode (since the model last wrote).
    restarts: u32,
}

impl Watchdog {
    /// `None` when `timeout` is zero (off).
    pub(super) fn new(timeout: gst::ClockTime) -> Option<Watchdog> {
        (timeout.nseconds() > 0).then(|| Watchdog {
            speech: SustainedSpeech::default(),
            timeout_ns: timeout.nseconds(),
            speech_without_text_ns: 0,
            quiet_ns: 0,
            restarts: 0,
        })
    }

    /// Speech needed for the next restart: the timeout, doubled for each
    /// restart of the episode, up to `MAX_BACKOFF` times.
    fn threshold(&self) -> u64 {
        self.timeout_ns * (1u64 << self.restarts.min(4)).min(MAX_BACKOFF)
    }

    /// Counts the speech in frames heard (whatever was fed to the model).
    pub(super) fn hear(&mut self, frames: &[Frame]) {
        self.speech_without_text_ns += self.speech_in(frames);
    }

    /// After a feed: whether the model wrote text for it.
    pub(super) fn after_feed(&mut self, wrote: bool) -> Verdict {
        if wrote {
            self.speech_without_text_ns = 0;
            self.restarts = 0;
            return Verdict::Fine;
        }
        if self.speech_without_text_ns < self.threshold() {
            return Verdict::Fine;
        }
        let speech_ns = std::mem::take(&mut self.speech_without_text_ns);
        self.restarts += 1;
        Verdict::Stalled {
            speech_ns,
            first: self.restarts == 1,
        }
    }

    /// Nanoseconds of speech in `frames`. A long quiet forgets the speech
    /// counted so far.
    fn speech_in(&mut self, frames: &[Frame]) -> u64 {
        let mut speech = 0;
        let frame = samples_to_ns(VAD_FRAME as u64);
        for f in frames {
            let counted = self.speech.judge(f);
            if counted > 0 {
                speech += frame * u64::from(counted);
                self.quiet_ns = 0;
            } else {
                self.quiet_ns += frame;
                if self.quiet_ns >= FORGET_AFTER_QUIET_NS {
                    self.speech_without_text_ns = 0;
                    speech = 0;
                }
            }
        }
        speech
    }
}
