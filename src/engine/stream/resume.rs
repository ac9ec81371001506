// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Going on after the model ends its stream on its own: the latest audio
//! kept, and replayed into a new library stream from the token it ended on.

use transcribe_cpp_sys as ffi;

use super::super::decoder_position::Verdict;
use super::super::{log, Error};
use super::Stream;
use crate::voxtral::{FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, TOKEN_LOOKAHEAD_SAMPLES};

impl Stream {
    /// If the model ended its stream, goes on in a new one from the token it
    /// ended on (again, if it ends that one too), adding the text to `text`.
    /// Returns where the new streams started. An end token in the
    /// padding after the audio needs no new stream: nothing is left there.
    pub(super) fn take_up_where_the_model_ended(
        &mut self,
        mut verdict: Verdict,
        text: &mut String,
    ) -> Result<Vec<u64>, Error> {
        let mut resumed_from = Vec::new();
        while let Verdict::Ended { token } = verdict {
            text.push_str(&self.take_text(true));
            let from = self.library_start + token * FRAME_SAMPLES;
            if from >= self.fed {
                break;
            }
            verdict = self.resume_from(from)?;
            text.push_str(&self.take_text(false));
            resumed_from.push(from);
        }
        Ok(resumed_from)
    }

    /// Keeps the latest audio, enough to replay what the model had not yet
    /// transcribed when it ended a stream: its delay, up to two decode
    /// intervals and the look-ahead of a token.
    pub(super) fn remember(&mut self, chunk: &[f32]) {
        let keep = (u64::from(self.config.delay_ms / FRAME_MS) + 3) * FRAME_SAMPLES
            + TOKEN_LOOKAHEAD_SAMPLES
            + 2 * self.config.interval_samples() as u64;
        self.recent.extend_from_slice(chunk);
        let keep = keep as usize;
        if self.recent.len() > 2 * keep {
            let drop = self.recent.len() - keep;
            self.recent.drain(..drop);
            self.recent_start += drop as u64;
        }
    }

    /// Starts a new library stream at sample `from` and replays the audio
    /// since then into it.
    fn resume_from(&mut self, from: u64) -> Result<Verdict, Error> {
        let from = if from < self.recent_start {
            gst::warning!(
                log::CAT,
                "the model ended its stream {} ms further back than the audio kept; that audio \
                 is not transcribed",
                (self.recent_start - from) * 1000 / u64::from(SAMPLE_RATE)
            );
            self.recent_start
        } else {
            from
        };
        gst::info!(
            log::CAT,
            "the model ended its stream at {} ms; going on in a new stream from there",
            from * 1000 / u64::from(SAMPLE_RATE)
        );
        self.space_owed = self.space_owed || self.consumed > 0;
        let session = self.session();
        // SAFETY: valid session, not used by another thread.
        unsafe { ffi::transcribe_stream_reset(session) };
        self.begin_library_stream(self.config)?;
        self.library_start = from;
        let replay = self.recent[(from - self.recent_start) as usize..].to_vec();
        if replay.is_empty() {
            return Ok(Verdict::Decoding);
        }
        self.feed_library(&replay)
    }
}
