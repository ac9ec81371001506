// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Going on after a lost connection: the next server, a new utterance from
//! the first frame not answered for, and the outage reported once it ends.

use std::time::Instant;

use super::connect::{server_detail, Failure};
use super::{Dropped, VllmRecognizer, FIRST_BACKOFF, MAX_BACKOFF};
use crate::recognizer::Notice;
use crate::remote::Error;

pub(super) struct Reconnection {
    pub(super) cause: String,
    pub(super) started: Instant,
    pub(super) resent_samples: u64,
    pub(super) left: String,
}

impl VllmRecognizer {
    /// Goes on after a drop: connects to the next server of the list at
    /// once (the same one, if it is the only one), starts a new utterance
    /// from the first frame not answered for and sends that audio again.
    /// Backs off only after every server has failed in turn; gives up
    /// after `give_up_after`.
    pub(super) fn recover(&mut self, dropped: Dropped) -> Result<(), Error> {
        let outage_started = Instant::now();
        let from = self.first_unanswered();
        let finishing = self.utterance.as_ref().is_some_and(|u| u.finishing);
        if let Some(socket) = self.socket.take() {
            socket.close();
        }
        let left = self.server;
        let left_url = self.url().to_owned();
        if let Some(server) = left {
            self.server_failed(server, &dropped.0);
        }
        gst::info!(
            crate::voxtral::LOG_CAT,
            "vLLM connection to {left_url} lost ({}); reconnecting",
            dropped.0
        );
        let next = left.map(|server| (server + 1) % self.rack.len());
        let mut backoff = FIRST_BACKOFF;
        let mut last;
        loop {
            self.check_abort()?;
            let mut failures = Vec::new();
            if self.connect_round(next, &mut failures)? {
                let started = self.start_utterance(from).and_then(|()| match finishing {
                    true => self.finish_utterance(),
                    false => Ok(()),
                });
                match started {
                    Ok(()) => break,
                    Err(Dropped(why)) => {
                        if let Some(server) = self.server {
                            self.server_failed(server, &why);
                        }
                        last = why;
                    }
                }
            } else if failures.len() > 1 && failures.iter().all(Failure::refused_the_key) {
                return Err(self.no_server(failures));
            } else {
                last = failures
                    .iter()
                    .map(|f| format!("{}: {}", f.url, server_detail(&f.why)))
                    .collect::<Vec<_>>()
                    .join("; ");
            }
            if let Some(socket) = self.socket.take() {
                socket.close();
            }
            if self
                .config
                .give_up_after
                .is_some_and(|limit| outage_started.elapsed() + backoff > limit)
            {
                return Err(Error::Unreachable {
                    url: self.config.url.clone(),
                    detail: format!(
                        "the connection was lost ({}) and could not be made again for {} s ({last})",
                        dropped.0,
                        outage_started.elapsed().as_secs()
                    ),
                });
            }
            self.sleep(backoff)?;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        // An outage within an outage (the new server failed before it
        // answered) counts from the first loss.
        let earlier = self.reconnection.take();
        self.reconnection = Some(Reconnection {
            cause: earlier.as_ref().map_or(dropped.0, |r| r.cause.clone()),
            started: earlier.as_ref().map_or(outage_started, |r| r.started),
            resent_samples: self.sent - from,
            left: earlier.map_or(left_url, |r| r.left),
        });
        Ok(())
    }

    /// Reports the reconnection: the server that took the stream on has
    /// answered, or the stream ended before it did.
    pub(super) fn report_reconnection(&mut self) {
        if let Some(r) = self.reconnection.take() {
            self.notices.push(Notice::Reconnected {
                cause: r.cause,
                outage: r.started.elapsed(),
                resent_samples: r.resent_samples,
                left: r.left,
                joined: self.url().to_owned(),
            });
        }
    }
}
