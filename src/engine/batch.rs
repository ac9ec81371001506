// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The feeds of the streams of one model, run together.
//!
//! A decoder step of one stream is a matrix-vector product over all the
//! decoder's weights, and an encoder chunk of 160 ms is a product with 8
//! rows: both spend their time reading and unpacking weights, not using
//! them. The engine we carry runs the encoder chunks of several sessions as
//! one graph (`transcribe_stream_feed_audio_many`), the ends of their audio
//! likewise (`transcribe_stream_finish_audio_many`: streams that end at once,
//! as at an EOS, share their last steps too) and one decoder step of each as
//! one graph (`transcribe_stream_decode_many`), reading the weights once for
//! all. Each stream's worker hands its feed to the model's batcher;
//! whoever does so while nobody is feeding drives: it waits up to [`GATHER`]
//! for the model's other streams, then runs every feed waiting, with the
//! threads those streams would have used alone (theirs wait meanwhile), and
//! hands over.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use transcribe_cpp_sys as ffi;

use super::log;

/// The longest a driver waits for the model's other streams before it
/// feeds: a few milliseconds, so that feeds that fall due together run
/// together without a word leaving later than alone.
pub const GATHER: Duration = Duration::from_millis(3);

/// What the library said of one feed: its status and, on failure, what it
/// logged.
pub(crate) type Outcome = (ffi::transcribe_status, String);

/// What a stream hands the batcher.
#[derive(Clone, Copy)]
enum Work {
    /// Audio to feed.
    Feed { pcm: *const f32, samples: usize },
    /// The end of the stream's audio.
    Finish,
}

/// Work waiting: its session, its audio, and what came of it. The pointers
/// are the waiting worker's: it waits in [`Batcher::feed`] or
/// [`Batcher::finish`] while the driver's thread uses them, as the library
/// allows a session on any thread, one at a time.
struct Ticket {
    id: u64,
    session: *mut ffi::transcribe_session,
    work: Work,
    outcome: Option<Outcome>,
}

type Member = (u64, *mut ffi::transcribe_session, Work);

// SAFETY: see `Ticket`.
unsafe impl Send for Ticket {}

#[derive(Default)]
struct State {
    tickets: Vec<Ticket>,
    driving: bool,
    next_id: u64,
}

/// How much was run together, for `stats`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    /// Calls of the library, each running the feeds waiting then.
    pub rounds: u64,
    /// Feeds and stream ends over all rounds: `streams / rounds` is the
    /// mean batch.
    pub streams: u64,
}

/// The batcher of one loaded model.
#[derive(Default)]
pub struct Batcher {
    state: Mutex<State>,
    turn: Condvar,
    /// Streams open on the model: the most a round can hold.
    streams: AtomicUsize,
    rounds: AtomicU64,
    fed: AtomicU64,
}

impl Batcher {
    pub(crate) fn stream_opened(&self) {
        self.streams.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stream_closed(&self) {
        self.streams.fetch_sub(1, Ordering::Relaxed);
        // A driver gathering for this stream need not wait for it.
        self.turn.notify_all();
    }

    /// The streams open on the model.
    pub fn streams(&self) -> usize {
        self.streams.load(Ordering::Relaxed)
    }

    /// Feeds `pcm` to `session` and decodes the steps it makes due, with the
    /// work of the model's other streams that is waiting meanwhile.
    pub(crate) fn feed(&self, session: *mut ffi::transcribe_session, pcm: &[f32]) -> Outcome {
        let work = Work::Feed {
            pcm: pcm.as_ptr(),
            samples: pcm.len(),
        };
        self.run(session, work)
    }

    /// Ends the audio of `session`'s stream as `transcribe_stream_finalize`
    /// would and decodes the steps that makes due, with the work of the
    /// model's other streams that is waiting meanwhile; the finalize then
    /// has only the final text to give.
    pub(crate) fn finish(&self, session: *mut ffi::transcribe_session) -> Outcome {
        self.run(session, Work::Finish)
    }

    fn run(&self, session: *mut ffi::transcribe_session, work: Work) -> Outcome {
        let mut state = self.state.lock().unwrap();
        let id = state.next_id;
        state.next_id += 1;
        state.tickets.push(Ticket {
            id,
            session,
            work,
            outcome: None,
        });
        self.turn.notify_all();
        loop {
            if let Some(i) = state
                .tickets
                .iter()
                .position(|t| t.id == id && t.outcome.is_some())
            {
                let ticket = state.tickets.remove(i);
                return ticket.outcome.expect("checked above");
            }
            if state.driving {
                state = self.turn.wait(state).unwrap();
                continue;
            }
            state.driving = true;
            state = self.gather(state);
            let round: Vec<Member> = state
                .tickets
                .iter()
                .filter(|t| t.outcome.is_none())
                .map(|t| (t.id, t.session, t.work))
                .collect();
            drop(state);
            let outcomes = self.run_round(&round);
            state = self.state.lock().unwrap();
            for ((id, ..), outcome) in round.iter().zip(outcomes) {
                let ticket = state.tickets.iter_mut().find(|t| t.id == *id);
                ticket.expect("a waiting ticket").outcome = Some(outcome);
            }
            state.driving = false;
            self.turn.notify_all();
        }
    }

    /// Waits up to [`GATHER`] while fewer feeds wait than the model has
    /// streams, so that feeds falling due together share a round.
    fn gather<'a>(&self, mut state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        let deadline = Instant::now() + GATHER;
        loop {
            let waiting = state.tickets.iter().filter(|t| t.outcome.is_none()).count();
            let now = Instant::now();
            if waiting >= self.streams() || now >= deadline {
                return state;
            }
            state = self.turn.wait_timeout(state, deadline - now).unwrap().0;
        }
    }

    /// One round: the audio of every feed and the ends of the streams
    /// that finish, then every decoder step they made due, the library
    /// batching what it can.
    fn run_round(&self, round: &[Member]) -> Vec<Outcome> {
        let n = round.len();
        let mut outcomes = vec![(ffi::transcribe_status::TRANSCRIBE_OK, String::new()); n];
        let feeds: Vec<usize> = (0..n)
            .filter(|&i| matches!(round[i].2, Work::Feed { .. }))
            .collect();
        let ends: Vec<usize> = (0..n)
            .filter(|&i| matches!(round[i].2, Work::Finish))
            .collect();
        if !feeds.is_empty() {
            let (call, detail, status) = feed_audio(round, &feeds);
            settle(&mut outcomes, &feeds, call, &detail, &status);
        }
        if !ends.is_empty() {
            let (call, detail, status) = finish_audio(round, &ends);
            settle(&mut outcomes, &ends, call, &detail, &status);
        }
        self.rounds.fetch_add(1, Ordering::Relaxed);
        self.fed.fetch_add(n as u64, Ordering::Relaxed);
        gst::log!(
            log::CAT,
            "fed {} streams and ended {} together",
            feeds.len(),
            ends.len()
        );
        // Every fed session completes its feed, with or without steps due.
        let decoding: Vec<usize> = (0..n)
            .filter(|&i| outcomes[i].0 == ffi::transcribe_status::TRANSCRIBE_OK)
            .collect();
        if !decoding.is_empty() {
            let (call, detail, status) = decode(round, &decoding);
            settle(&mut outcomes, &decoding, call, &detail, &status);
        }
        outcomes
    }

    /// What was run together so far.
    pub fn counts(&self) -> BatchCounts {
        BatchCounts {
            rounds: self.rounds.load(Ordering::Relaxed),
            streams: self.fed.load(Ordering::Relaxed),
        }
    }
}

/// What one library call over some of a round's members said: the call's
/// status, what the library logged, and each member's status.
type Said = (ffi::transcribe_status, String, Vec<ffi::transcribe_status>);

/// Runs `call` on the sessions of `members` with a status for each, what
/// the library logs meanwhile captured.
fn call_on(
    round: &[Member],
    members: &[usize],
    call: impl FnOnce(
        &[*mut ffi::transcribe_session],
        &mut [ffi::transcribe_status],
    ) -> ffi::transcribe_status,
) -> Said {
    let sessions: Vec<*mut ffi::transcribe_session> = members.iter().map(|&i| round[i].1).collect();
    let mut status = vec![ffi::transcribe_status::TRANSCRIBE_OK; members.len()];
    let (call, detail) = log::capture(|| call(&sessions, &mut status));
    (call, detail, status)
}

fn feed_audio(round: &[Member], feeds: &[usize]) -> Said {
    let (pcm, samples): (Vec<*const f32>, Vec<i32>) = feeds
        .iter()
        .map(|&i| match round[i].2 {
            Work::Feed { pcm, samples } => (pcm, samples as i32),
            Work::Finish => unreachable!("only feeds are fed"),
        })
        .unzip();
    call_on(round, feeds, |sessions, status| {
        // SAFETY: distinct sessions with active streams and their audio,
        // each of whose threads waits in `run` until its outcome is set;
        // the arrays hold an entry for each.
        unsafe {
            ffi::transcribe_stream_feed_audio_many(
                sessions.as_ptr(),
                pcm.as_ptr(),
                samples.as_ptr(),
                sessions.len() as i32,
                status.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    })
}

fn finish_audio(round: &[Member], ends: &[usize]) -> Said {
    call_on(round, ends, |sessions, status| {
        // SAFETY: as in `feed_audio`, without audio.
        unsafe {
            ffi::transcribe_stream_finish_audio_many(
                sessions.as_ptr(),
                sessions.len() as i32,
                status.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    })
}

fn decode(round: &[Member], decoding: &[usize]) -> Said {
    call_on(round, decoding, |sessions, status| {
        // SAFETY: as in `feed_audio`: the sessions whose audio was taken.
        unsafe {
            ffi::transcribe_stream_decode_many(
                sessions.as_ptr(),
                sessions.len() as i32,
                0,
                std::ptr::null_mut(),
                status.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
    })
}

/// Sets the outcomes of `members` from a call over them: the call's status
/// where it failed as a whole, else each one's, with what the library
/// logged for those that failed.
fn settle(
    outcomes: &mut [Outcome],
    members: &[usize],
    call: ffi::transcribe_status,
    detail: &str,
    status: &[ffi::transcribe_status],
) {
    for (k, &i) in members.iter().enumerate() {
        let s = if call == ffi::transcribe_status::TRANSCRIBE_OK {
            status[k]
        } else {
            call
        };
        let failed = s != ffi::transcribe_status::TRANSCRIBE_OK;
        outcomes[i] = (
            s,
            if failed {
                detail.to_owned()
            } else {
                String::new()
            },
        );
    }
}
