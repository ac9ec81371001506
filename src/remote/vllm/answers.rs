// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The server's answers: deltas placed on their frames, waits for the
//! deltas the audio made due, a session that ended on its own.

use std::time::Instant;

use super::{Dropped, Interrupted, VllmRecognizer, POLL};
use crate::recognizer::TextUpdate;
use crate::remote::protocol::{self, Event};
use crate::remote::socket::Read;
use crate::remote::Error;
use crate::voxtral::{FRAME_SAMPLES as FRAME, SAMPLE_RATE};

impl VllmRecognizer {
    /// Takes one delta: an update about the frame it answers.
    pub(super) fn take_delta(&mut self, mut text: String) -> TextUpdate {
        let u = self.utterance.as_mut().expect("an utterance answers");
        u.answered += 1;
        gst::trace!(
            crate::voxtral::LOG_CAT,
            "vLLM: delta {} {text:?} with {} samples sent",
            u.answered - 1,
            self.sent - u.start
        );
        let frame_end = u.start + u.answered * FRAME;
        if !text.is_empty() {
            if std::mem::take(&mut self.space_owed) && !text.starts_with(char::is_whitespace) {
                text.insert(0, ' ');
            }
            self.wrote = true;
        }
        self.waiting_since = None;
        self.forget_answered();
        self.report_reconnection();
        TextUpdate {
            text,
            audio_end: self.sent,
            heard_until: frame_end.min(self.sent),
            is_final: false,
            resumed_from: Vec::new(),
        }
    }

    /// Reads what the server says until `enough` holds. `Ok(true)`: the
    /// utterance is done (after a final commit, or on its own).
    pub(super) fn read_until(
        &mut self,
        updates: &mut Vec<TextUpdate>,
        enough: impl Fn(&Self) -> bool,
    ) -> Result<bool, Interrupted> {
        self.read_until_or(updates, enough, None)
    }

    /// The same, giving up (`Ok(false)`) at `until`.
    pub(super) fn read_until_or(
        &mut self,
        updates: &mut Vec<TextUpdate>,
        enough: impl Fn(&Self) -> bool,
        until: Option<Instant>,
    ) -> Result<bool, Interrupted> {
        while !enough(self) {
            self.check_abort()?;
            if until.is_some_and(|until| Instant::now() >= until) {
                return Ok(false);
            }
            let waiting = *self.waiting_since.get_or_insert_with(Instant::now);
            if waiting.elapsed() > self.config.server_timeout {
                return Err(Interrupted::Dropped(Dropped(format!(
                    "no answer for {} ms while audio waited (server-timeout; is delay the \
                     server's?)",
                    self.config.server_timeout.as_millis()
                ))));
            }
            let read = match self.socket() {
                Ok(socket) => socket.read(POLL),
                Err(dropped) => return Err(Interrupted::Dropped(dropped)),
            };
            match read {
                Read::Nothing => {}
                Read::Closed(why) => return Err(Interrupted::Dropped(Dropped(why))),
                Read::Event(Event::Delta(text)) if self.utterance.is_some() => {
                    updates.push(self.take_delta(text))
                }
                Read::Event(Event::Done(_)) if self.utterance.is_some() => {
                    self.waiting_since = None;
                    return Ok(true);
                }
                Read::Event(Event::Error { code, message }) => {
                    if protocol::blames_the_client(&code) {
                        return Err(Error::Rejected {
                            url: self.url().to_owned(),
                            code,
                            message,
                        }
                        .into());
                    }
                    return Err(Interrupted::Dropped(Dropped(format!(
                        "the server reported {code}: {message}"
                    ))));
                }
                Read::Event(Event::SessionCreated) => {}
                Read::Event(_) => self.ignored += 1,
            }
        }
        Ok(false)
    }

    /// Waits for the deltas the audio sent makes due. A session the server
    /// ended on its own goes on in a new utterance.
    pub(super) fn collect_due(&mut self, updates: &mut Vec<TextUpdate>) -> Result<(), Error> {
        loop {
            let patience = self.patience();
            let result = self.read_until_or(updates, |s| s.answered() >= s.frames_due(), patience);
            let dropped = match result {
                Ok(false) => return self.check_delay(updates),
                Ok(true) => {
                    // Done without a final commit: the session reached the
                    // server's max_model_len.
                    let from = self.first_unanswered();
                    gst::info!(
                        crate::voxtral::LOG_CAT,
                        "the vLLM session ended on its own at {} ms; going on in a new one",
                        from * 1000 / u64::from(SAMPLE_RATE)
                    );
                    match self.renew_session(from) {
                        Ok(()) => {
                            match updates.last_mut() {
                                Some(u) => u.resumed_from.push(from),
                                None => updates.push(TextUpdate {
                                    text: String::new(),
                                    audio_end: self.sent,
                                    heard_until: from,
                                    is_final: false,
                                    resumed_from: vec![from],
                                }),
                            }
                            continue;
                        }
                        Err(dropped) => dropped,
                    }
                }
                Err(Interrupted::Failed(e)) => return Err(e),
                Err(Interrupted::Dropped(dropped)) => dropped,
            };
            self.recover(dropped)?;
        }
    }
}
