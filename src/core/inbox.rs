// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The queue between the streaming thread and the worker, with the flags
//! that flushes and state changes set.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::settings::Settings;
use crate::voxtral::{AbortHandle, SAMPLE_RATE};

use super::stats::SharedStats;

/// Non-live input waits once this much audio is queued (or four decode
/// intervals, if more), until half of it has been taken: hand-overs between
/// the threads then come in batches. Everything queued runs ahead of the
/// text, and a non-flushing seek's new segment starts after it in running
/// time, so more would make seeks slow to show.
const MAX_QUEUED_MS: u64 = 640;

/// While a non-flushing seek waits for upstream's stream lock, a full queue
/// lets one buffer in per this long (the audio is dropped when the seek's
/// SEGMENT comes).
const SEEK_PENDING_PACE: Duration = Duration::from_millis(40);

pub(crate) enum Item {
    Audio {
        samples: Vec<f32>,
        pts: Option<gst::ClockTime>,
        /// When it reached the element (for each word's lag).
        arrived: Instant,
    },
    Event(gst::Event),
    /// The SEGMENT of a non-flushing seek, which cuts the old segment short.
    SeekSegment(gst::Event),
    /// The element went to PLAYING.
    Resume,
}

impl Item {
    fn is_event(&self, type_: gst::EventType) -> bool {
        matches!(self, Item::Event(e) if e.type_() == type_)
    }
}

/// What the worker gets from [`Inbox::next`].
pub(crate) enum Next {
    Item(Queued),
    /// Nothing came for the idle time asked for.
    Idle,
    Stopped,
}

/// An item with the flush epoch it was queued in.
pub(crate) struct Queued {
    pub(crate) item: Item,
    pub(crate) epoch: u64,
    /// The worker had caught up: it waited for this item.
    pub(crate) waited: bool,
}

struct State {
    items: VecDeque<Queued>,
    queued_samples: u64,
    flushing: bool,
    stopping: bool,
    /// Bumped by every flush; items of an older epoch are stale.
    epoch: u64,
    /// What the next chain call returns: the worker's last flow problem.
    flow: Result<gst::FlowSuccess, gst::FlowError>,
    /// The worker is working on something it took from the inbox.
    busy: bool,
    /// The streaming thread waits for room.
    producer_waiting: bool,
    /// The seqnum of a non-flushing seek sent upstream, until its SEGMENT
    /// comes.
    seek_seqnum: Option<gst::Seqnum>,
    /// The model could not be had: nothing will take input, flushes or not.
    without_model: bool,
}

impl State {
    /// Whether `segment` is the one a non-flushing seek brings, cutting the
    /// old segment short. After a SEGMENT_DONE it is not: that is a
    /// seamless loop, and the old segment ended whole.
    fn cuts_the_segment_short(&mut self, segment: &gst::Event) -> bool {
        if self.seek_seqnum != Some(segment.seqnum()) {
            return false;
        }
        self.seek_seqnum = None;
        !self
            .items
            .iter()
            .any(|q| q.item.is_event(gst::EventType::SegmentDone))
    }

    /// The old segment's audio still waiting would only delay the seek (by
    /// up to the queue's length, played out in real time by a synchronising
    /// sink): it goes. Returns the samples dropped.
    /// Drops queued audio from the oldest on, keeping at least the newest
    /// `keep` samples; events stay, in order. Returns the samples dropped.
    fn drop_oldest_audio(&mut self, keep: u64) -> u64 {
        let mut to_drop = self.queued_samples.saturating_sub(keep);
        let mut dropped = 0;
        self.items.retain(|q| match &q.item {
            Item::Audio { samples, .. } if (samples.len() as u64) <= to_drop => {
                to_drop -= samples.len() as u64;
                dropped += samples.len() as u64;
                false
            }
            Item::Audio { .. } => {
                to_drop = 0;
                true
            }
            _ => true,
        });
        self.queued_samples -= dropped;
        dropped
    }

    fn drop_queued_audio(&mut self) -> u64 {
        let dropped = self.queued_samples;
        self.items.retain(|q| !matches!(q.item, Item::Audio { .. }));
        self.queued_samples = 0;
        dropped
    }
}

pub(crate) struct Inbox {
    state: Mutex<State>,
    /// For the worker: something to take, or a stop.
    work: Condvar,
    /// For a non-live streaming thread: room in the queue, or a refusal.
    room: Condvar,
    /// For `flush_stop`: the worker dropped what it was doing.
    idle: Condvar,
    /// Stops the running decode; set once the model is there.
    abort: Mutex<Option<AbortHandle>>,
    stats: SharedStats,
    max_queued_samples: u64,
    live: AtomicBool,
}

impl Inbox {
    pub(crate) fn new(abort: Option<AbortHandle>, settings: &Settings) -> Inbox {
        let interval = u64::from(settings.decode_interval_ms);
        let max_ms = MAX_QUEUED_MS.max(4 * interval);
        Inbox {
            state: Mutex::new(State {
                items: VecDeque::new(),
                queued_samples: 0,
                flushing: false,
                stopping: false,
                epoch: 0,
                flow: Ok(gst::FlowSuccess::Ok),
                busy: false,
                producer_waiting: false,
                seek_seqnum: None,
                without_model: false,
            }),
            work: Condvar::new(),
            room: Condvar::new(),
            idle: Condvar::new(),
            abort: Mutex::new(abort),
            stats: SharedStats::default(),
            max_queued_samples: max_ms * u64::from(SAMPLE_RATE) / 1000,
            live: AtomicBool::new(false),
        }
    }

    /// Whether the last audio came from a live source.
    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    /// The model arrived (after a download): flushes and stops can stop
    /// its decodes from now on.
    pub(crate) fn set_abort(&self, abort: AbortHandle) {
        *self.abort.lock().unwrap() = Some(abort);
    }

    fn abort_decode(&self) {
        if let Some(abort) = &*self.abort.lock().unwrap() {
            abort.abort();
        }
    }

    /// The model could not be had (the ERROR is posted): all input is
    /// refused from now on.
    pub(crate) fn refuse_for_good(&self) {
        let mut state = self.state.lock().unwrap();
        state.without_model = true;
        state.items.clear();
        state.queued_samples = 0;
        drop(state);
        self.notify_everyone();
    }

    /// The element is stopping the worker.
    pub(crate) fn is_stopping(&self) -> bool {
        self.state.lock().unwrap().stopping
    }

    pub(crate) fn stats(&self) -> &SharedStats {
        &self.stats
    }

    fn refusal(state: &State) -> Option<gst::FlowError> {
        if state.without_model {
            return Some(gst::FlowError::Error);
        }
        if state.flushing || state.stopping {
            return Some(gst::FlowError::Flushing);
        }
        state.flow.err()
    }

    pub(crate) fn push_audio(
        &self,
        samples: Vec<f32>,
        pts: Option<gst::ClockTime>,
        live: bool,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let n = samples.len() as u64;
        self.live.store(live, Ordering::Relaxed);
        let mut state = self.state.lock().unwrap();
        if !live && state.queued_samples >= self.max_queued_samples {
            state.producer_waiting = true;
            while state.queued_samples > self.max_queued_samples / 2
                && Self::refusal(&state).is_none()
            {
                if state.seek_seqnum.is_none() {
                    state = self.room.wait(state).unwrap();
                    continue;
                }
                // A pending non-flushing seek needs this thread's stream
                // lock upstream, so the thread must leave now and then; but
                // not at once: until the seek takes the lock, upstream would
                // run free through the file, and the seek's new segment
                // starts in running time after all it pushed.
                let (next, wait) = self.room.wait_timeout(state, SEEK_PENDING_PACE).unwrap();
                state = next;
                if wait.timed_out() {
                    break;
                }
            }
            state.producer_waiting = false;
        }
        if let Some(err) = Self::refusal(&state) {
            return Err(err);
        }
        state.queued_samples += n;
        let epoch = state.epoch;
        state.items.push_back(Queued {
            item: Item::Audio {
                samples,
                pts,
                arrived: Instant::now(),
            },
            epoch,
            waited: false,
        });
        let queued = state.queued_samples;
        drop(state);
        self.stats.update(|s| {
            s.received_samples += n;
            s.queued_samples = queued;
        });
        self.work.notify_one();
        Ok(gst::FlowSuccess::Ok)
    }

    pub(crate) fn push(&self, item: Item) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut state = self.state.lock().unwrap();
        if let Some(err) = Self::refusal(&state) {
            return Err(err);
        }
        let (item, dropped) = match item {
            Item::Event(e)
                if e.type_() == gst::EventType::Segment && state.cuts_the_segment_short(&e) =>
            {
                (Item::SeekSegment(e), state.drop_queued_audio())
            }
            item => (item, 0),
        };
        let epoch = state.epoch;
        state.items.push_back(Queued {
            item,
            epoch,
            waited: false,
        });
        let queued = state.queued_samples;
        drop(state);
        if dropped > 0 {
            gst::debug!(
                crate::voxtral::LOG_CAT,
                "a non-flushing seek replaced {dropped} samples of queued audio"
            );
            self.stats.update(|s| {
                s.seek_dropped_samples += dropped;
                s.queued_samples = queued;
            });
            self.room.notify_all();
        }
        self.work.notify_one();
        Ok(gst::FlowSuccess::Ok)
    }

    pub(crate) fn expect_seek_segment(&self, seqnum: gst::Seqnum) {
        self.state.lock().unwrap().seek_seqnum = Some(seqnum);
        self.room.notify_all();
    }

    pub(crate) fn seek_refused(&self, seqnum: gst::Seqnum) {
        let mut state = self.state.lock().unwrap();
        if state.seek_seqnum == Some(seqnum) {
            state.seek_seqnum = None;
        }
    }

    /// The next item, waiting for one at most `idle` (forever if `None`).
    pub(crate) fn next(&self, idle: Option<Duration>) -> Next {
        let deadline = idle.map(|d| Instant::now() + d);
        let mut state = self.state.lock().unwrap();
        state.busy = false;
        if state.flushing {
            self.idle.notify_all();
        }
        let mut waited = false;
        loop {
            if state.stopping {
                return Next::Stopped;
            }
            if !state.flushing {
                if let Some(mut queued) = state.items.pop_front() {
                    queued.waited = waited;
                    if let Item::Audio { samples, .. } = &queued.item {
                        state.queued_samples -= samples.len() as u64;
                    }
                    let queued_samples = state.queued_samples;
                    state.busy = true;
                    let wake_producer =
                        state.producer_waiting && queued_samples <= self.max_queued_samples / 2;
                    drop(state);
                    self.stats.update(|s| s.queued_samples = queued_samples);
                    if wake_producer {
                        self.room.notify_one();
                    }
                    return Next::Item(queued);
                }
            }
            waited = true;
            state = match deadline {
                None => self.work.wait(state).unwrap(),
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        state.busy = true;
                        return Next::Idle;
                    }
                    self.work.wait_timeout(state, deadline - now).unwrap().0
                }
            };
        }
    }

    /// The model fell behind live input: all queued audio but the newest
    /// `keep` samples goes (events stay, in order). Returns the samples
    /// dropped.
    pub(crate) fn skip_queued_audio(&self, keep: u64) -> u64 {
        let mut state = self.state.lock().unwrap();
        let dropped = state.drop_oldest_audio(keep);
        let queued = state.queued_samples;
        drop(state);
        self.stats.update(|s| s.queued_samples = queued);
        self.room.notify_all();
        dropped
    }

    /// True when work of `epoch` is to be dropped: a flush or stop came.
    pub(crate) fn is_stale(&self, epoch: u64) -> bool {
        let state = self.state.lock().unwrap();
        state.flushing || state.stopping || state.epoch != epoch
    }

    /// Records a flow problem for the streaming thread to return.
    pub(crate) fn set_flow(&self, epoch: u64, flow: gst::FlowError) {
        let mut state = self.state.lock().unwrap();
        if state.epoch == epoch && !state.flushing {
            state.flow = Err(flow);
            state.items.clear();
            state.queued_samples = 0;
        }
        drop(state);
        self.room.notify_all();
    }

    pub(crate) fn flush_start(&self) {
        let mut state = self.state.lock().unwrap();
        state.flushing = true;
        state.items.clear();
        state.queued_samples = 0;
        state.epoch += 1;
        self.abort_decode();
        drop(state);
        self.stats.update(|s| s.queued_samples = 0);
        self.notify_everyone();
    }

    /// Ends a flush once the worker has dropped what it was doing, so that
    /// nothing from before the flush can follow it downstream.
    pub(crate) fn flush_stop(&self) {
        let mut state = self.state.lock().unwrap();
        while state.busy && !state.stopping {
            state = self.idle.wait(state).unwrap();
        }
        state.flushing = false;
        state.flow = Ok(gst::FlowSuccess::Ok);
        state.epoch += 1;
        drop(state);
        self.work.notify_all();
    }

    pub(crate) fn stop(&self) {
        let mut state = self.state.lock().unwrap();
        state.stopping = true;
        state.items.clear();
        state.queued_samples = 0;
        self.abort_decode();
        drop(state);
        self.notify_everyone();
    }

    fn notify_everyone(&self) {
        self.work.notify_all();
        self.room.notify_all();
        self.idle.notify_all();
    }
}
