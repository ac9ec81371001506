// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Connections: to one server (checked to serve the model), a round over
//! the rack's servers, and what a round that found none says.

use std::time::{Duration, Instant};

use super::{
    Dropped, Interrupted, VllmRecognizer, FIRST_BACKOFF, MAX_BACKOFF, POLL, START_RETRY_FOR,
};
use crate::recognizer::Notice;
use crate::remote::protocol::{self, Event};
use crate::remote::socket::{Read, Socket};
use crate::remote::Error;

/// What `server` said, without the URL the error names.
pub(super) fn server_detail(why: &Error) -> String {
    match why {
        Error::Unreachable { detail, .. } => detail.clone(),
        Error::Unauthorized { status, .. } => format!("refused the API key (HTTP {status})"),
        Error::Refused { status, .. } => format!("refused the connection (HTTP {status})"),
        Error::ModelNotServed { model, .. } => format!("does not serve model '{model}'"),
        other => other.to_string(),
    }
}

/// A server of the list that could not be used, in one round over them.
pub(super) struct Failure {
    pub(super) url: String,
    pub(super) why: Error,
}

impl Failure {
    pub(super) fn refused_the_key(&self) -> bool {
        matches!(self.why, Error::Unauthorized { .. })
    }
}

impl VllmRecognizer {
    /// Before a new utterance: whether the server closed the session while
    /// none was in flight (an idle watchdog, or a server that cleans up).
    /// Nothing was lost and the server did nothing wrong, so the socket is
    /// let go without a failure, and the utterance opens a new session.
    pub(super) fn let_go_of_idle_close(&mut self) {
        let Some(socket) = self.socket.as_mut() else {
            return;
        };
        let reason = loop {
            match socket.read(Duration::from_millis(1)) {
                Read::Nothing => return,
                Read::Closed(why) => break why,
                Read::Event(e) if e.closes_idle_session() => {
                    let Event::Error { message, .. } = e else {
                        unreachable!()
                    };
                    break format!("idle_timeout: {message}");
                }
                Read::Event(Event::Garbage) => self.ignored += 1,
                Read::Event(_) => {}
            }
        };
        gst::info!(
            crate::voxtral::LOG_CAT,
            "vLLM: {} closed the session while no utterance was in flight ({reason}); the next \
             one opens a new session",
            self.url()
        );
        if let Some(socket) = self.socket.take() {
            socket.close();
        }
    }

    /// Connects to `server`, and checks that it serves the model: it
    /// answers the probe after `session.update`, with `model_not_found`
    /// first if it does not.
    pub(super) fn open_socket(&mut self, server: usize) -> Result<Socket, Interrupted> {
        let url = self.rack.url(server).to_owned();
        gst::debug!(crate::voxtral::LOG_CAT, "vLLM: connecting to {url}");
        let key = self.config.api_key.as_deref();
        let mut socket = Socket::connect(&url, key, self.config.server_timeout)?;
        let sent = socket
            .send(protocol::session_update(&self.config.model))
            .and_then(|()| socket.send(protocol::probe()));
        if let Err(why) = sent {
            return Err(Interrupted::Dropped(Dropped(why)));
        }
        let deadline = Instant::now() + self.config.server_timeout;
        loop {
            self.check_abort()?;
            if Instant::now() > deadline {
                return Err(Interrupted::Dropped(Dropped(format!(
                    "no answer to session.update within {} ms",
                    self.config.server_timeout.as_millis()
                ))));
            }
            match socket.read(POLL) {
                Read::Event(e) if e.answers_probe() => return Ok(socket),
                Read::Event(Event::Error { code, message }) if code == "model_not_found" => {
                    return Err(Error::ModelNotServed {
                        url,
                        model: self.config.model.clone(),
                        answer: message,
                    }
                    .into())
                }
                Read::Event(Event::Garbage) => self.ignored += 1,
                Read::Event(_) | Read::Nothing => {}
                Read::Closed(why) => return Err(Interrupted::Dropped(Dropped(why))),
            }
        }
    }

    /// One round over the servers, each once, from `from` on (see
    /// [`Rack::order`]): connected to the first that answers (`true`), or
    /// every failure in `failures`. Errors that no other server would mend
    /// end the round.
    pub(super) fn connect_round(
        &mut self,
        from: Option<usize>,
        failures: &mut Vec<Failure>,
    ) -> Result<bool, Error> {
        for server in self.rack.order(from) {
            let url = self.rack.url(server).to_owned();
            let why = match self.open_socket(server) {
                Ok(socket) => {
                    self.socket = Some(socket);
                    self.server = Some(server);
                    self.rack.joined(server);
                    self.notices.push(Notice::ServerJoined { url });
                    return Ok(true);
                }
                Err(Interrupted::Dropped(Dropped(detail))) => Error::Unreachable {
                    url: url.clone(),
                    detail,
                },
                Err(Interrupted::Failed(
                    e @ (Error::Unreachable { .. }
                    | Error::Refused { .. }
                    | Error::Unauthorized { .. }
                    | Error::ModelNotServed { .. }),
                )) => e,
                Err(Interrupted::Failed(e)) => return Err(e),
            };
            self.server_failed(server, &server_detail(&why));
            failures.push(Failure { url, why });
        }
        Ok(false)
    }

    /// `server` failed: it rests, and the element hears of it when a list
    /// has others to go on with.
    pub(super) fn server_failed(&mut self, server: usize, why: &str) {
        let first = self.rack.failed(server);
        self.notices.push(Notice::ServerFailed {
            url: self.rack.url(server).to_owned(),
            reason: why.to_owned(),
            warn: first && self.rack.len() > 1,
        });
    }

    /// The error for a round in which no server could be used.
    pub(super) fn no_server(&self, mut failures: Vec<Failure>) -> Error {
        if failures.len() == 1 {
            return failures.remove(0).why;
        }
        if failures.iter().all(Failure::refused_the_key) {
            return Error::KeyRefusedEverywhere {
                urls: failures.into_iter().map(|f| f.url).collect(),
            };
        }
        if failures
            .iter()
            .all(|f| matches!(f.why, Error::ModelNotServed { .. }))
        {
            return failures.remove(0).why;
        }
        Error::NoServer {
            failures: failures
                .into_iter()
                .map(|f| (f.url, server_detail(&f.why)))
                .collect(),
        }
    }

    /// The first connection: a list none of whose servers can be reached
    /// is an error soon (they are tried again for a few seconds, for one
    /// still starting). Refused keys and a model served nowhere are errors
    /// at once.
    pub(super) fn connect_first(&mut self) -> Result<(), Error> {
        let started = Instant::now();
        let mut backoff = FIRST_BACKOFF;
        loop {
            let mut failures = Vec::new();
            if self.connect_round(None, &mut failures)? {
                self.connected_once = true;
                return Ok(());
            }
            let configured_wrong = failures.iter().all(|f| {
                matches!(
                    f.why,
                    Error::Unauthorized { .. } | Error::ModelNotServed { .. }
                )
            });
            if configured_wrong || started.elapsed() + backoff > START_RETRY_FOR {
                return Err(self.no_server(failures));
            }
            self.sleep(backoff)?;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Goes on from sample `from` on a new connection, to the same server
    /// if it answers: after a reset closed the last one, or after the
    /// server ended a session on its own (not a new commit on that one:
    /// appends already on their way would otherwise start the next
    /// utterance, since vLLM clears its queue once, at the end).
    pub(super) fn renew_session(&mut self, from: u64) -> Result<(), Dropped> {
        if let Some(socket) = self.socket.take() {
            socket.close();
        }
        let mut failures = Vec::new();
        match self.connect_round(self.server, &mut failures) {
            Ok(true) => {}
            Ok(false) => {
                let why = failures.first().map(|f| f.why.to_string());
                return Err(Dropped(why.unwrap_or_default()));
            }
            Err(e) => return Err(Dropped(e.to_string())),
        }
        self.start_utterance(from)
    }
}
