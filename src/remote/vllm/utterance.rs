// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The utterance on the server: starting one (with the audio not answered
//! for), finishing it, and the audio kept for a new one.

use super::{Dropped, Utterance, VllmRecognizer};
use crate::remote::protocol;
use crate::remote::socket::Socket;
use crate::voxtral::{FRAME_SAMPLES as FRAME, SAMPLE_RATE};

impl VllmRecognizer {
    pub(super) fn socket(&mut self) -> Result<&mut Socket, Dropped> {
        self.socket
            .as_mut()
            .ok_or_else(|| Dropped("not connected".into()))
    }

    pub(super) fn send(&mut self, text: String) -> Result<(), Dropped> {
        self.socket()?.send(text).map_err(Dropped)
    }

    /// Starts an utterance at sample `start` and sends the audio kept from
    /// there on.
    pub(super) fn start_utterance(&mut self, start: u64) -> Result<(), Dropped> {
        gst::debug!(
            crate::voxtral::LOG_CAT,
            "vLLM: new utterance from {} ms, {} ms to send again",
            start * 1000 / u64::from(SAMPLE_RATE),
            (self.sent - start) * 1000 / u64::from(SAMPLE_RATE)
        );
        self.send(protocol::commit(false))?;
        self.utterance = Some(Utterance {
            start,
            answered: 0,
            finishing: false,
        });
        self.space_owed = self.wrote;
        let from = (start - self.unanswered_start) as usize;
        let replay = self.unanswered[from.min(self.unanswered.len())..].to_vec();
        for piece in replay.chunks(SAMPLE_RATE as usize) {
            self.send(protocol::append(piece))?;
        }
        self.waiting_since = None;
        Ok(())
    }

    /// The first frame not answered for, as a sample of the stream.
    pub(super) fn first_unanswered(&self) -> u64 {
        self.utterance
            .as_ref()
            .map_or(self.sent, |u| u.start + u.answered * FRAME)
            .min(self.sent)
    }

    pub(super) fn finish_utterance(&mut self) -> Result<(), Dropped> {
        self.send(protocol::commit(true))?;
        if let Some(u) = &mut self.utterance {
            u.finishing = true;
        }
        Ok(())
    }

    /// Keeps audio for a new utterance: from the first frame not answered.
    pub(super) fn forget_answered(&mut self) {
        let first = self.first_unanswered();
        if first > self.unanswered_start {
            let n = ((first - self.unanswered_start) as usize).min(self.unanswered.len());
            self.unanswered.drain(..n);
            self.unanswered_start += n as u64;
        }
    }
}
