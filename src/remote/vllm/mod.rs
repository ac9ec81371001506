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

mod answers;
mod connect;
mod delay;
mod recovery;
mod utterance;

use std::time::{Duration, Instant};

use delay::DelayCheck;
use recovery::Reconnection;

use super::protocol;
use super::rack::Rack;
use super::socket::Socket;
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
/// Reconnection backoff.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Why the connection was given up, to go on in a new one.
struct Dropped(String);

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
        self.let_go_of_idle_close();
        // A stream that was reset (or a session the server closed while
        // idle) left no connection: a new one, which is no outage unless
        // it fails.
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
