// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Checking the server's delay against `delay`: a server that serves a
//! longer one is told apart from a slow one by its first delta.

use std::time::{Duration, Instant};

use super::{Interrupted, VllmRecognizer};
use crate::recognizer::TextUpdate;
use crate::remote::Error;
use crate::voxtral::{FRAME_SAMPLES as FRAME, SAMPLE_RATE};

/// How long past its due time the first delta of a recognizer is waited
/// for before the feeds go on without it, to measure the server's delay.
const DELAY_PROBE_GRACE: Duration = Duration::from_millis(1000);
/// While measuring: how long a feed waits for a delta.
const DELAY_PROBE_WAIT: Duration = Duration::from_millis(200);
/// How long without a delta, once one came, means the server has answered
/// all the audio it has: long against a step (about 20 ms here, less on a
/// GPU), since a slow server taken for a late one would be an error.
const DELAY_PROBE_QUIET: Duration = Duration::from_millis(1000);
/// vLLM decodes a frame once this much audio past it is in (2.5 ms).
const SERVER_LOOKAHEAD: u64 = 40;

/// A server that serves a longer delay than `delay` answers each frame
/// later than the feeds wait for: told apart from a slow server by letting
/// the audio run on until its first delta, and measured from that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DelayCheck {
    /// No delta yet on this recognizer.
    Unknown,
    /// The first delta is late: the feeds go on without waiting for it.
    Probing,
    /// A delta came in time, or the measure found the delays agree.
    Agreed,
}

impl VllmRecognizer {
    /// Until the server's first delta: how long a feed waits for the due
    /// frames before it goes on without them.
    pub(super) fn patience(&self) -> Option<Instant> {
        match self.delay_check {
            DelayCheck::Agreed => None,
            DelayCheck::Unknown => {
                Some(self.waiting_since.unwrap_or_else(Instant::now) + DELAY_PROBE_GRACE)
            }
            DelayCheck::Probing => Some(Instant::now() + DELAY_PROBE_WAIT),
        }
    }

    /// After a feed's wait: the first delta decides whether the server's
    /// delay is the one set. A longer one is an error: its deltas would
    /// always come later than the feeds wait for them.
    pub(super) fn check_delay(&mut self, updates: &mut Vec<TextUpdate>) -> Result<(), Error> {
        let answered = self.answered();
        match (self.delay_check, answered) {
            (DelayCheck::Agreed, _) => Ok(()),
            (DelayCheck::Unknown, 0) if self.frames_due() > 0 => {
                gst::debug!(
                    crate::voxtral::LOG_CAT,
                    "vLLM: no delta {} ms after the first was due; measuring the server's delay",
                    DELAY_PROBE_GRACE.as_millis()
                );
                self.delay_check = DelayCheck::Probing;
                Ok(())
            }
            (DelayCheck::Unknown, 0) | (DelayCheck::Probing, 0) => Ok(()),
            (DelayCheck::Unknown, _) => {
                self.delay_check = DelayCheck::Agreed;
                Ok(())
            }
            (DelayCheck::Probing, _) => {
                // Let the server answer all the audio it has, then count.
                loop {
                    let before = self.answered();
                    let quiet_until = Some(Instant::now() + DELAY_PROBE_QUIET);
                    match self.read_until_or(updates, |_| false, quiet_until) {
                        Ok(_) => {}
                        Err(Interrupted::Failed(e)) => return Err(e),
                        Err(Interrupted::Dropped(_)) => break,
                    }
                    if self.answered() == before {
                        break;
                    }
                }
                // Caught up and still short of the frames due: its delay is
                // longer. The measure itself may be a frame off, as the
                // server's look-ahead is not known exactly.
                let caught_up = self.answered();
                let ours = self.stream.delay_ms;
                let server = self.measured_delay_ms();
                gst::info!(
                    crate::voxtral::LOG_CAT,
                    "vLLM: the server's delay measures {server} ms, delay is {ours} ms"
                );
                if caught_up < self.frames_due() {
                    return Err(Error::DelayMismatch {
                        url: self.url().to_owned(),
                        ours,
                        server: server.max(ours + 80),
                    });
                }
                self.delay_check = DelayCheck::Agreed;
                Ok(())
            }
        }
    }

    /// The server's delay from the frames it answered for the audio of the
    /// running utterance, once it has answered all it can: the multiple of
    /// 80 ms that leaves its last answered frame complete and the next not.
    pub(super) fn measured_delay_ms(&self) -> u32 {
        let Some(u) = &self.utterance else { return 0 };
        let audio = self.sent - u.start;
        let room = audio.saturating_sub(SERVER_LOOKAHEAD + u.answered * FRAME);
        let frame_ms = FRAME * 1000 / u64::from(SAMPLE_RATE);
        (room * 1000 / u64::from(SAMPLE_RATE) / frame_ms * frame_ms) as u32
    }
}
