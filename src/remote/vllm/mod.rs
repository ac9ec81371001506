// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The vLLM realtime client as a recognizer.
//!
//! One stream is one or more utterances on one WebSocket: `commit` starts
//! one, audio goes in `append`s, `commit {final}` ends it and the server
//! answers with a `transcription.delta` per 80 ms model step, then
//! `transcription.done`. Delta `k` of an utterance is about its audio frame
//! `k`; the server sends it once the frame, the delay and 2.5 ms of
//! look-ahead are in. A feed waits for the deltas its audio makes due, so a
//! server slower than real time holds the worker back, and the overload
//! policy sees the lag, as with a local model.
//!
//! When the connection drops, the server errs or goes quiet, or a session
//! ends on its own (`max_model_len`), the stream goes on in a new utterance
//! from the first frame not answered for, with that audio sent again.

use std::time::{Duration, Instant};

use super::protocol::{self, Event};
use super::rack::Rack;
use super::socket::{Read, Socket};
use super::{Error, ServerConfig};
use crate::recognizer::{self, AbortHandle, Notice, Recognizer, StreamConfig, TextUpdate};
use crate::voxtral::{FRAME_SAMPLES as FRAME, SAMPLE_RATE};

/// Audio past a frame's end, beyond the delay, after which a feed waits for
/// the frame's delta: vLLM decodes a frame once 2.5 ms of look-ahead are in
/// (the model's tekken.json), and the local engine once the frame's last mel
/// window is, 15 ms; waiting from the later point tolerates a server on
/// either measure (a delta that comes sooner is taken all the same).
const LOOKAHEAD: u64 = 240;
/// How long one wait for the server lasts before the abort flag is looked
/// at again.
const POLL: Duration = Duration::from_millis(50);
/// At start, a server that cannot be reached is tried again for this long.
const START_RETRY_FOR: Duration = Duration::from_secs(8);
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
/// Reconnection backoff.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// What `server` said, without the URL the error names.
fn server_detail(why: &Error) -> String {
    match why {
        Error::Unreachable { detail, .. } => detail.clone(),
        Error::Unauthorized { status, .. } => format!("refused the API key (HTTP {status})"),
        Error::Refused { status, .. } => format!("refused the connection (HTTP {status})"),
        Error::ModelNotServed { model, .. } => format!("does not serve model '{model}'"),
        other => other.to_string(),
    }
}

/// Why the connection was given up, to go on in a new one.
struct Dropped(String);

/// A server of the list that could not be used, in one round over them.
struct Failure {
    url: String,
    why: Error,
}

impl Failure {
    fn refused_the_key(&self) -> bool {
        matches!(self.why, Error::Unauthorized { .. })
    }
}

/// How a wait for the server ended, other than with what was waited for.
enum Interrupted {
    Dropped(Dropped),
    Failed(Error),
}

impl From<Error> for Interrupted {
    fn from(e: Error) -> Self {
        Interrupted::Failed(e)
    }
}

/// The utterance running on the server, in samples since `begin`.
#[derive(Debug, Default)]
struct Utterance {
    /// Where its audio starts.
    start: u64,
    /// Deltas received: it has answered for this many frames.
    answered: u64,
    /// A final commit was sent.
    finishing: bool,
}

pub struct VllmRecognizer {
    config: ServerConfig,
    rack: Rack,
    /// The server of the connection (the last one, when there is none).
    server: Option<usize>,
    abort: AbortHandle,
    socket: Option<Socket>,
    stream: StreamConfig,
    /// An utterance is running on the server (committed, not done).
    utterance: Option<Utterance>,
    /// Samples sent in this stream (since `begin`).
    sent: u64,
    /// The audio from the first frame not answered for, to send again in a
    /// new utterance; starts at sample `unanswered_start`.
    unanswered: Vec<f32>,
    unanswered_start: u64,
    /// When the oldest unanswered due frame became due.
    waiting_since: Option<Instant>,
    /// Text was returned in this stream: a new utterance's first word needs
    /// the space a fresh model does not write.
    wrote: bool,
    space_owed: bool,
    connected_once: bool,
    notices: Vec<Notice>,
    /// Frames that were not events of the protocol, since the last report
    /// (a count, so that a flooding server costs no memory).
    ignored: u64,
    /// What is known of the server's delay against `delay`.
    delay_check: DelayCheck,
    /// A reconnection, reported once the server that took the stream on
    /// answers (or the stream ends first): its outage lasts until then.
    reconnection: Option<Reconnection>,
}

struct Reconnection {
    cause: String,
    started: Instant,
    resent_samples: u64,
    left: String,
}

/// A server that serves a longer delay than `delay` answers each frame
/// later than the feeds wait for: told apart from a slow server by letting
/// the audio run on until its first delta, and measured from that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DelayCheck {
    /// No delta yet on this recognizer.
    Unknown,
    /// The first delta is late: the feeds go on without waiting for it.
    Probing,
    /// A delta came in time, or the measure found the delays agree.
    Agreed,
}

impl VllmRecognizer {
    pub fn new(config: ServerConfig) -> Result<VllmRecognizer, Error> {
        let rack = Rack::from_list(&config.url, config.api_key.is_some(), config.spread)?;
        Ok(VllmRecognizer {
            config,
            rack,
            server: None,
            abort: AbortHandle::default(),
            socket: None,
            stream: StreamConfig::default(),
            utterance: None,
            sent: 0,
            unanswered: Vec::new(),
            unanswered_start: 0,
            waiting_since: None,
            wrote: false,
            space_owed: false,
            connected_once: false,
            notices: Vec::new(),
            ignored: 0,
            delay_check: DelayCheck::Unknown,
            reconnection: None,
        })
    }

    fn delay_samples(&self) -> u64 {
        u64::from(self.stream.delay_ms) * u64::from(SAMPLE_RATE) / 1000
    }

    /// Frames the running utterance has answered for.
    fn answered(&self) -> u64 {
        self.utterance.as_ref().map_or(0, |u| u.answered)
    }

    /// Frames of the running utterance the server owes an answer for.
    fn frames_due(&self) -> u64 {
        let Some(u) = &self.utterance else { return 0 };
        let audio = self.sent - u.start;
        audio.saturating_sub(self.delay_samples() + LOOKAHEAD) / FRAME
    }

    fn check_abort(&self) -> Result<(), Error> {
        if self.abort.is_aborted() {
            Err(Error::Aborted)
        } else {
            Ok(())
        }
    }

    /// Sleeps for `d`, waking for an abort.
    fn sleep(&self, d: Duration) -> Result<(), Error> {
        let until = Instant::now() + d;
        while Instant::now() < until {
            self.check_abort()?;
            std::thread::sleep(POLL.min(until - Instant::now()));
        }
        Ok(())
    }

    /// The URL of the server in use (or last used, or first to try).
    fn url(&self) -> &str {
        self.rack.url(self.server.unwrap_or(0))
    }

    /// Connects to `server`, and checks that it serves the model: it
    /// answers the probe after `session.update`, with `model_not_found`
    /// first if it does not.
    fn open_socket(&mut self, server: usize) -> Result<Socket, Interrupted> {
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
    fn connect_round(
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
    fn server_failed(&mut self, server: usize, why: &str) {
        let first = self.rack.failed(server);
        self.notices.push(Notice::ServerFailed {
            url: self.rack.url(server).to_owned(),
            reason: why.to_owned(),
            warn: first && self.rack.len() > 1,
        });
    }

    /// The error for a round in which no server could be used.
    fn no_server(&self, mut failures: Vec<Failure>) -> Error {
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
    fn connect_first(&mut self) -> Result<(), Error> {
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

    fn socket(&mut self) -> Result<&mut Socket, Dropped> {
        self.socket
            .as_mut()
            .ok_or_else(|| Dropped("not connected".into()))
    }

    fn send(&mut self, text: String) -> Result<(), Dropped> {
        self.socket()?.send(text).map_err(Dropped)
    }

    /// Starts an utterance at sample `start` and sends the audio kept from
    /// there on.
    fn start_utterance(&mut self, start: u64) -> Result<(), Dropped> {
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
    fn first_unanswered(&self) -> u64 {
        self.utterance
            .as_ref()
            .map_or(self.sent, |u| u.start + u.answered * FRAME)
            .min(self.sent)
    }

    /// Goes on after a drop: connects to the next server of the list at
    /// once (the same one, if it is the only one), starts a new utterance
    /// from the first frame not answered for and sends that audio again.
    /// Backs off only after every server has failed in turn; gives up
    /// after `give_up_after`.
    fn recover(&mut self, dropped: Dropped) -> Result<(), Error> {
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
    fn report_reconnection(&mut self) {
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

    /// Goes on from sample `from` on a new connection, to the same server
    /// if it answers: after a reset closed the last one, or after the
    /// server ended a session on its own (not a new commit on that one:
    /// appends already on their way would otherwise start the next
    /// utterance, since vLLM clears its queue once, at the end).
    fn renew_session(&mut self, from: u64) -> Result<(), Dropped> {
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

    fn finish_utterance(&mut self) -> Result<(), Dropped> {
        self.send(protocol::commit(true))?;
        if let Some(u) = &mut self.utterance {
            u.finishing = true;
        }
        Ok(())
    }

    /// Keeps audio for a new utterance: from the first frame not answered.
    fn forget_answered(&mut self) {
        let first = self.first_unanswered();
        if first > self.unanswered_start {
            let n = ((first - self.unanswered_start) as usize).min(self.unanswered.len());
            self.unanswered.drain(..n);
            self.unanswered_start += n as u64;
        }
    }

    /// Takes one delta: an update about the frame it answers.
    fn take_delta(&mut self, mut text: String) -> TextUpdate {
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
    fn read_until(
        &mut self,
        updates: &mut Vec<TextUpdate>,
        enough: impl Fn(&Self) -> bool,
    ) -> Result<bool, Interrupted> {
        self.read_until_or(updates, enough, None)
    }

    /// The same, giving up (`Ok(false)`) at `until`.
    fn read_until_or(
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
    fn collect_due(&mut self, updates: &mut Vec<TextUpdate>) -> Result<(), Error> {
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

impl VllmRecognizer {
    /// Until the server's first delta: how long a feed waits for the due
    /// frames before it goes on without them.
    fn patience(&self) -> Option<Instant> {
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
    fn check_delay(&mut self, updates: &mut Vec<TextUpdate>) -> Result<(), Error> {
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
    fn measured_delay_ms(&self) -> u32 {
        let Some(u) = &self.utterance else { return 0 };
        let audio = self.sent - u.start;
        let room = audio.saturating_sub(SERVER_LOOKAHEAD + u.answered * FRAME);
        let frame_ms = FRAME * 1000 / u64::from(SAMPLE_RATE);
        (room * 1000 / u64::from(SAMPLE_RATE) / frame_ms * frame_ms) as u32
    }
}

impl Recognizer for VllmRecognizer {
    fn backend_name(&self) -> String {
        format!("vllm {}", self.config.url)
    }

    fn abort_handle(&self) -> AbortHandle {
        self.abort.clone()
    }

    fn prepare(&mut self) -> Result<(), recognizer::Error> {
        if self.socket.is_none() {
            self.connect_first()?;
        }
        Ok(())
    }

    fn begin(&mut self, config: StreamConfig) -> Result<(), recognizer::Error> {
        crate::voxtral::validate_delay(config.delay_ms)?;
        self.reset();
        self.stream = config;
        if !self.connected_once {
            self.connect_first()?;
        }
        // A stream that was reset closed its connection: a new one, which
        // is no outage unless it fails.
        let started = match self.socket.is_some() {
            true => self.start_utterance(0),
            false => self.renew_session(0),
        };
        if let Err(dropped) = started {
            self.recover(dropped)?;
        }
        Ok(())
    }

    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, recognizer::Error> {
        self.check_abort()?;
        if self.utterance.is_none() {
            return Err(recognizer::Error::Other {
                operation: "feeding the stream",
                reason: "no stream was begun".into(),
            });
        }
        self.unanswered.extend_from_slice(samples);
        self.sent += samples.len() as u64;
        if let Err(dropped) = self.send(protocol::append(samples)) {
            self.recover(dropped)?;
        }
        let mut updates = Vec::new();
        self.collect_due(&mut updates)?;
        self.take_ignored();
        Ok(updates)
    }

    fn finalize(&mut self) -> Result<Vec<TextUpdate>, recognizer::Error> {
        self.check_abort()?;
        let mut updates = Vec::new();
        if self.utterance.is_none() {
            return Ok(vec![self.final_update(String::new())]);
        }
        if let Err(dropped) = self.finish_utterance() {
            self.recover(dropped)?;
        }
        // Deltas about the audio are placed on their frames; those of the
        // padding after it make the final update.
        let mut tail = String::new();
        loop {
            let mut got = Vec::new();
            let result = self.read_until(&mut got, |_| false);
            for update in got {
                if update.heard_until < self.sent {
                    updates.push(update);
                } else {
                    tail.push_str(&update.text);
                }
            }
            match result {
                Ok(_) => break,
                Err(Interrupted::Failed(e)) => return Err(e.into()),
                Err(Interrupted::Dropped(dropped)) => self.recover(dropped)?,
            }
        }
        self.utterance = None;
        self.report_reconnection();
        self.take_ignored();
        updates.push(self.final_update(tail));
        Ok(updates)
    }

    fn reset(&mut self) {
        self.report_reconnection();
        // An utterance the server still runs can only be stopped by closing
        // its connection (the server then aborts the request).
        if self.utterance.take().is_some() {
            if let Some(socket) = self.socket.take() {
                socket.close();
            }
        }
        self.sent = 0;
        self.unanswered.clear();
        self.unanswered_start = 0;
        self.waiting_since = None;
        self.wrote = false;
        self.space_owed = false;
        self.abort.clear();
    }

    fn samples_received(&self) -> u64 {
        self.sent
    }

    fn slowness_advice(&self) -> String {
        format!(
            "The vLLM server at {} answers slower than real time: give it more GPU capacity \
             (another replica behind the load balancer, or another server in url) or fewer \
             streams",
            self.url()
        )
    }

    fn take_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }
}

impl VllmRecognizer {
    fn final_update(&self, text: String) -> TextUpdate {
        TextUpdate {
            text,
            audio_end: self.sent,
            heard_until: self.sent,
            is_final: true,
            resumed_from: Vec::new(),
        }
    }

    /// Reports the frames ignored since the last report.
    fn take_ignored(&mut self) {
        let ignored = std::mem::take(&mut self.ignored);
        if ignored > 0 {
            self.notices.push(Notice::IgnoredFrames(ignored));
        }
    }
}

impl Drop for VllmRecognizer {
    fn drop(&mut self) {
        if let Some(socket) = self.socket.take() {
            socket.close();
        }
    }
}
