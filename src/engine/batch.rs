// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The decoder steps of the streams of one model, run together.
//!
//! A decoder step of one stream is a matrix-vector product over all the
//! decoder's weights, bound by memory. The engine we carry can run one step
//! of several sessions as one graph (`transcribe_stream_decode_many`), which
//! reads the weights once for all of them. Each stream's worker feeds its
//! audio on its own thread (the encoder runs there), then asks the model's
//! batcher for its due steps. Whoever asks while nobody is decoding drives:
//! it runs one step of every stream waiting, then the next, streams joining
//! and leaving between steps, until its own are done, and hands over. A
//! stream is never held back longer than [`GATHER`] for others, and only
//! while another stream of the model is feeding audio.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use transcribe_cpp_sys as ffi;

use super::log;

/// The longest a driver waits for streams still feeding their audio before
/// a step: a few milliseconds, so that streams whose steps fall due together
/// share them without a word leaving later than alone.
pub const GATHER: Duration = Duration::from_millis(3);

/// A session whose steps are wanted, and what came of them.
struct Ticket {
    id: u64,
    session: SessionPtr,
    outcome: Option<(ffi::transcribe_status, String)>,
}

/// A session pointer handed to the driver's thread. The session's own
/// thread waits in [`DecodeBatcher::decode`] while it is used there.
#[derive(Clone, Copy)]
struct SessionPtr(*mut ffi::transcribe_session);

// SAFETY: see above; the library allows a session on any thread, one at a
// time.
unsafe impl Send for SessionPtr {}

#[derive(Default)]
struct State {
    tickets: Vec<Ticket>,
    driving: bool,
    /// Streams between the start of a feed and their request for steps.
    feeding: usize,
    next_id: u64,
}

/// How much was decoded together, for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    /// Decoder rounds run (one step of each stream in them).
    pub rounds: u64,
    /// Streams over all rounds: `streams / rounds` is the mean batch.
    pub streams: u64,
}

/// The batcher of one loaded model.
#[derive(Default)]
pub struct DecodeBatcher {
    state: Mutex<State>,
    turn: Condvar,
    rounds: AtomicU64,
    streams: AtomicU64,
}

impl DecodeBatcher {
    /// Says that a stream has started a feed: a driver may wait for its steps.
    pub(crate) fn feeding(&self) -> FeedingGuard<'_> {
        self.state.lock().unwrap().feeding += 1;
        FeedingGuard(self)
    }

    /// Runs the due decoder steps of `session`, with those of the other
    /// streams of this model that are due meanwhile. Returns the session's
    /// status and, on failure, what the library logged.
    pub(crate) fn decode(
        &self,
        session: *mut ffi::transcribe_session,
    ) -> (ffi::transcribe_status, String) {
        let mut state = self.state.lock().unwrap();
        let id = state.next_id;
        state.next_id += 1;
        state.tickets.push(Ticket {
            id,
            session: SessionPtr(session),
            outcome: None,
        });
        loop {
            if let Some(i) = state
                .tickets
                .iter()
                .position(|t| t.id == id && t.outcome.is_some())
            {
                let ticket = state.tickets.remove(i);
                self.turn.notify_all();
                return ticket.outcome.expect("checked above");
            }
            if state.driving {
                state = self.turn.wait(state).unwrap();
                continue;
            }
            state.driving = true;
            state = self.gather(state);
            let waiting: Vec<(u64, SessionPtr)> = state
                .tickets
                .iter()
                .filter(|t| t.outcome.is_none())
                .map(|t| (t.id, t.session))
                .collect();
            // Alone and nobody feeding: all the steps at once, on one graph.
            let max_steps = if waiting.len() == 1 && state.feeding == 0 {
                0
            } else {
                1
            };
            drop(state);
            let results = self.run_round(&waiting, max_steps);
            state = self.state.lock().unwrap();
            for ((id, _), result) in waiting.iter().zip(results) {
                if let Some(outcome) = result {
                    let ticket = state.tickets.iter_mut().find(|t| t.id == *id);
                    ticket.expect("a waiting ticket").outcome = Some(outcome);
                }
            }
            state.driving = false;
            self.turn.notify_all();
        }
    }

    /// Waits up to [`GATHER`] while other streams of the model are feeding,
    /// so that their steps join this round.
    fn gather<'a>(
        &self,
        mut state: std::sync::MutexGuard<'a, State>,
    ) -> std::sync::MutexGuard<'a, State> {
        let deadline = Instant::now() + GATHER;
        while state.feeding > 0 {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            state = self.turn.wait_timeout(state, deadline - now).unwrap().0;
        }
        state
    }

    /// One call of the library over `waiting`: `None` for a session that
    /// still has steps due, else its outcome.
    fn run_round(
        &self,
        waiting: &[(u64, SessionPtr)],
        max_steps: i32,
    ) -> Vec<Option<(ffi::transcribe_status, String)>> {
        let sessions: Vec<*mut ffi::transcribe_session> = waiting.iter().map(|w| w.1 .0).collect();
        let n = sessions.len();
        let mut status = vec![ffi::transcribe_status::TRANSCRIBE_OK; n];
        let mut left = vec![0i32; n];
        // SAFETY: distinct sessions with active streams, each of whose
        // threads waits in `decode` until its outcome is set; the arrays
        // hold `n` entries.
        let (call, detail) = log::capture(|| unsafe {
            ffi::transcribe_stream_decode_many(
                sessions.as_ptr(),
                n as i32,
                max_steps,
                std::ptr::null_mut(),
                status.as_mut_ptr(),
                left.as_mut_ptr(),
            )
        });
        self.rounds.fetch_add(1, Ordering::Relaxed);
        self.streams.fetch_add(n as u64, Ordering::Relaxed);
        gst::log!(
            log::CAT,
            "decoded {n} streams together, up to {max_steps} steps (0: all)"
        );
        (0..n)
            .map(|i| {
                if call != ffi::transcribe_status::TRANSCRIBE_OK {
                    Some((call, detail.clone()))
                } else if status[i] != ffi::transcribe_status::TRANSCRIBE_OK {
                    Some((status[i], detail.clone()))
                } else if left[i] == 0 {
                    Some((status[i], String::new()))
                } else {
                    None
                }
            })
            .collect()
    }

    /// What was decoded together so far.
    pub fn counts(&self) -> BatchCounts {
        BatchCounts {
            rounds: self.rounds.load(Ordering::Relaxed),
            streams: self.streams.load(Ordering::Relaxed),
        }
    }
}

/// Ends a stream's feeding when dropped.
pub(crate) struct FeedingGuard<'a>(&'a DecodeBatcher);

impl Drop for FeedingGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap();
        state.feeding -= 1;
        self.0.turn.notify_all();
    }
}
