// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Several cores, one output: the words of every input (one per speaker)
//! go out as one stream in time order. A word waits until every other
//! input has said, by a word or a gap, that nothing earlier can come from
//! it; each input's own cues and gaps come in order, so that is enough.
//!
//! An input whose pad is linked but whose data has not come yet holds the
//! output back, as GstAggregator does: not live, until its first data or
//! its EOS; live, for at most the latency, then the others go on without
//! it. A word that still comes after later words went out is re-timed to
//! the output's position (never earlier), counted and warned about once
//! per run of such words: the output's time never goes back.
//!
//! An element with its sink pad alone does without it (its core delivers
//! to the src pad itself); with one input taking part, each word goes out
//! as soon as it comes.

use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

use gst::glib;
use gst::prelude::*;

use super::report::{Cause, Reporter};
use super::{Output, TimedCue};

/// How often a live merge that waits for an input looks at the clock.
const LIVE_WAIT_TICK: Duration = Duration::from_millis(20);

/// One input's progress, in running time (ns).
#[derive(Debug, Default)]
struct Input {
    /// Its pad, while it may still bring data; `None`: data is expected.
    pad: Option<glib::WeakRef<gst::Pad>>,
    /// Its first data (a segment) came.
    started: bool,
    /// Its segment came: it takes part in the ordering.
    active: bool,
    /// EOS, a failure or its release: it holds nothing back any more.
    done: bool,
    segment: Option<gst::FormattedSegment<gst::ClockTime>>,
    /// Nothing earlier than this can come from it.
    watermark: u64,
    /// Its EOS's seqnum, for the EOS that ends the output.
    eos: Option<(gst::Seqnum, Option<u64>)>,
    /// Its pad is being released: its EOS only ends it.
    leaving: bool,
}

impl Input {
    /// Linked, nothing come yet: what it will bring is unknown.
    fn awaited(&self) -> bool {
        !self.started && !self.done && self.pad_linked()
    }

    fn pad_linked(&self) -> bool {
        self.pad
            .as_ref()
            .is_none_or(|pad| pad.upgrade().is_some_and(|p| p.is_linked()))
    }

    fn pad_name(&self) -> String {
        self.pad
            .as_ref()
            .and_then(|pad| pad.upgrade())
            .map_or_else(|| "a sink pad".to_owned(), |p| p.name().to_string())
    }
}

/// Whether the input is live, and with which latency (upstream's and the
/// element's, ns): how long an awaited input may hold the output back.
pub type LiveProbe = Box<dyn Fn() -> Option<gst::ClockTime> + Send>;

enum Liveness {
    /// Asked again until an input's data flows (before, upstream may not
    /// answer yet).
    Unknown(LiveProbe),
    Known(Option<u64>),
}

struct Inner {
    out: Box<dyn Output>,
    /// By input id; `None` once released.
    inputs: Vec<Option<Input>>,
    /// The output's segment: the first input's.
    segment: Option<gst::FormattedSegment<gst::ClockTime>>,
    stream_started: bool,
    /// Cues waiting for the other inputs: running time, input, cue.
    waiting: Vec<(u64, usize, TimedCue)>,
    /// How far the output has gone (running time): the end of its last
    /// cue or gap.
    position: u64,
    /// No cue may start before this (the last one's start, a gap's end).
    floor: u64,
    ended: bool,
    live: Liveness,
    report: Reporter,
    /// For the live wait's thread.
    me: Weak<Merge>,
    /// Words that came after later words went out, re-timed.
    retimed: u64,
    /// In a run of re-timed words (warned about at its start).
    retiming: bool,
    /// The live wait's thread should end.
    stopping: bool,
}

/// The merge of several inputs into one [`Output`].
pub struct Merge {
    inner: Mutex<Inner>,
    /// An input that was leaving has ended.
    left: Condvar,
    /// Wakes the live wait's thread.
    tick: Condvar,
}

impl Merge {
    /// A merge into `out`; `live` tells whether the input is live, and its
    /// latency.
    pub fn new(out: Box<dyn Output>, report: Reporter, live: LiveProbe) -> Arc<Merge> {
        Arc::new_cyclic(|me| Merge {
            inner: Mutex::new(Inner {
                out,
                inputs: Vec::new(),
                segment: None,
                stream_started: false,
                waiting: Vec::new(),
                position: 0,
                floor: 0,
                ended: false,
                live: Liveness::Unknown(live),
                report,
                me: me.clone(),
                retimed: 0,
                retiming: false,
                stopping: false,
            }),
            left: Condvar::new(),
            tick: Condvar::new(),
        })
    }

    /// A new input fed through `pad`; its [`MergeInput`] is the Output its
    /// core delivers to. Until its first data comes it holds the output
    /// back while `pad` is linked.
    pub fn input(self: &Arc<Merge>, pad: &gst::Pad) -> MergeInput {
        let mut inner = self.inner.lock().unwrap();
        inner.inputs.push(Some(Input {
            pad: Some(pad.downgrade()),
            ..Input::default()
        }));
        MergeInput {
            merge: self.clone(),
            id: inner.inputs.len() - 1,
        }
    }

    /// Ends the live wait's thread (the element stops).
    pub fn stop(&self) {
        self.inner.lock().unwrap().stopping = true;
        self.tick.notify_all();
    }

    /// Words re-timed so far (they came after later words went out).
    pub fn retimed(&self) -> u64 {
        self.inner.lock().unwrap().retimed
    }

    /// The input is gone (its pad released): it holds nothing back.
    pub fn remove(&self, id: usize) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(slot) = inner.inputs.get_mut(id) {
            *slot = None;
        }
        inner.release();
        inner.end_if_all_done();
    }

    /// The input's pad is being released: its EOS (sent to finish its
    /// stream) ends it alone. Waits up to `timeout` for that; then it is
    /// gone either way.
    pub fn finish_leaving(&self, id: usize, send_eos: impl FnOnce(), timeout: Duration) {
        if let Some(input) = self.inner.lock().unwrap().input(id) {
            input.leaving = true;
        }
        send_eos();
        let inner = self.inner.lock().unwrap();
        // The lock is given back before `remove` takes it again.
        drop(
            self.left
                .wait_timeout_while(inner, timeout, |inner| {
                    inner.inputs.get(id).is_some_and(Option::is_some)
                })
                .unwrap(),
        );
        self.remove(id);
    }
}

impl Inner {
    fn taking_part(&self) -> impl Iterator<Item = &Input> {
        self.inputs.iter().flatten().filter(|i| i.active && !i.done)
    }

    fn input(&mut self, id: usize) -> Option<&mut Input> {
        self.inputs.get_mut(id)?.as_mut()
    }

    /// `cue`'s running time, in the segment of the input it came from.
    fn running(&self, id: usize, t: gst::ClockTime) -> u64 {
        let segment = self.inputs[id].as_ref().and_then(|i| i.segment.as_ref());
        segment.map_or(t.nseconds(), |s| super::running_ns(s, t))
    }

    /// Running time `rt` on the output's timeline.
    fn output_time(&self, rt: u64) -> gst::ClockTime {
        let rt = gst::ClockTime::from_nseconds(rt);
        self.segment
            .as_ref()
            .and_then(|s| s.position_from_running_time(rt))
            .unwrap_or(rt)
    }

    fn awaits_any(&self) -> bool {
        self.inputs.iter().flatten().any(Input::awaited)
    }

    /// Where every input has come to: no cue up to here can be preceded by
    /// one still to come. `None`: nothing holds the output back.
    fn horizon(&mut self) -> Option<u64> {
        let taking_part = self.taking_part().map(|i| i.watermark).min();
        if !self.awaits_any() {
            return taking_part;
        }
        // An awaited input may bring anything from the output's position
        // on; live, only until the clock has passed a time's latency.
        let waived_until = self
            .live_edge()
            .map_or(self.position, |e| e.max(self.position));
        Some(taking_part.map_or(waived_until, |h| h.min(waived_until)))
    }

    /// Live: the running time up to which the clock has passed the
    /// latency, so an awaited input is no longer waited for.
    fn live_edge(&mut self) -> Option<u64> {
        let latency = self.live_latency()?;
        let now = self.report.running_time()?;
        Some(now.nseconds().saturating_sub(latency))
    }

    /// The latency, if the input is live; found out once data flows, and
    /// then the live wait's thread starts.
    fn live_latency(&mut self) -> Option<u64> {
        let found = match &self.live {
            Liveness::Known(latency) => return *latency,
            Liveness::Unknown(probe) => probe().map(gst::ClockTime::nseconds),
        };
        let flowing = self.inputs.iter().flatten().any(|i| i.started);
        if found.is_some() || flowing {
            self.live = Liveness::Known(found);
            if found.is_some() {
                self.start_live_wait();
            }
        }
        found
    }

    fn start_live_wait(&self) {
        let merge = self.me.clone();
        // Without the thread, an awaited input's words go out when another
        // input next brings something: later, never lost.
        let _ = std::thread::Builder::new()
            .name("voxtralrt-merge".into())
            .spawn(move || run_live_wait(merge));
    }

    /// Where a cue of input `id` at `rt` goes out: at `rt`, or, when later
    /// words or a gap already went out, where the output stands.
    fn place(&mut self, rt: u64, id: usize) -> u64 {
        if rt >= self.floor {
            self.retiming = false;
            self.floor = rt;
            return rt;
        }
        self.retimed += 1;
        if !std::mem::replace(&mut self.retiming, true) {
            let pad = self.inputs[id]
                .as_ref()
                .map_or_else(|| "a released pad".to_owned(), Input::pad_name);
            self.report.warning(
                Cause::Order,
                &format!(
                    "words of {pad} came {} ms after later words had gone out (its data started \
                     late): they go out at the output's position instead, never earlier \
                     (counted in stats as words-retimed)",
                    (self.floor - rt) / 1_000_000
                ),
            );
        }
        self.floor
    }

    /// Hands on the waiting cues no input can precede any more, in time
    /// order, then a gap up to where every input has come.
    fn release(&mut self) {
        let horizon = self.horizon();
        self.waiting.sort_by_key(|(rt, _, _)| *rt);
        let due = self
            .waiting
            .iter()
            .take_while(|(rt, _, _)| horizon.is_none_or(|h| *rt <= h))
            .count();
        for (rt, id, mut cue) in self.waiting.drain(..due).collect::<Vec<_>>() {
            let rt = self.place(rt, id);
            let pts = self.output_time(rt);
            cue.pts = pts;
            if let Some(segment) = &self.segment {
                cue.segment = segment.clone();
            }
            self.position = self.position.max(rt + cue.duration.nseconds());
            let _ = self.out.cue(cue);
        }
        let Some(horizon) = horizon else {
            return;
        };
        let held_from = self.waiting.first().map(|(rt, _, _)| *rt);
        let until = held_from.map_or(horizon, |h| h.min(horizon));
        if until > self.position && self.segment.is_some() {
            let start = self.output_time(self.position);
            let end = self.output_time(until);
            self.position = until;
            self.floor = self.floor.max(until);
            self.out.gap(start, end.saturating_sub(start), None);
        }
    }

    fn end_if_all_done(&mut self) {
        if self.ended {
            return;
        }
        // Every input must have ended: one whose stream has not begun (its
        // pad linked, its data not there yet) may still bring words.
        let inputs: Vec<&Input> = self.inputs.iter().flatten().collect();
        if inputs.is_empty()
            || inputs
                .iter()
                .any(|i| !i.done && (i.started || i.pad_linked()))
        {
            return;
        }
        let Some((seqnum, end)) = inputs.iter().filter_map(|i| i.eos).max_by_key(|e| e.1) else {
            return;
        };
        self.release();
        self.ended = true;
        let end = end.map(|rt| self.output_time(rt));
        self.out.eos(seqnum, end);
    }
}

/// What one input's core delivers to.
pub struct MergeInput {
    merge: Arc<Merge>,
    id: usize,
}

impl MergeInput {
    pub fn id(&self) -> usize {
        self.id
    }
}

impl Output for MergeInput {
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut inner = self.merge.inner.lock().unwrap();
        let rt = inner.running(self.id, cue.pts);
        if let Some(input) = inner.input(self.id) {
            input.watermark = input.watermark.max(rt);
        }
        inner.waiting.push((rt, self.id, cue));
        inner.release();
        Ok(gst::FlowSuccess::Ok)
    }

    // The gap that goes out covers every input's: none's seqnum is its own.
    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, _seqnum: Option<gst::Seqnum>) {
        let mut inner = self.merge.inner.lock().unwrap();
        let rt = inner.running(self.id, pts + duration);
        if let Some(input) = inner.input(self.id) {
            input.watermark = input.watermark.max(rt);
        }
        inner.release();
    }

    fn event(&mut self, event: gst::Event) {
        let mut inner = self.merge.inner.lock().unwrap();
        match event.view() {
            gst::EventView::StreamStart(_) => {
                if !std::mem::replace(&mut inner.stream_started, true) {
                    inner.out.event(event);
                }
            }
            gst::EventView::Segment(e) => {
                let Some(segment) = e.segment().downcast_ref::<gst::ClockTime>().cloned() else {
                    return inner.out.event(event);
                };
                let rt = super::running_ns(&segment, segment.start().unwrap_or_default());
                if let Some(input) = inner.input(self.id) {
                    input.started = true;
                    input.active = true;
                    input.done = false;
                    input.watermark = rt;
                    input.segment = Some(segment.clone());
                }
                if inner.segment.is_none() {
                    inner.segment = Some(segment);
                    inner.position = rt;
                    inner.floor = rt;
                    inner.out.event(event);
                }
                inner.release();
            }
            // One input's stream events do not end or redefine the others'.
            gst::EventView::Caps(_)
            | gst::EventView::Tag(_)
            | gst::EventView::SegmentDone(_)
            | gst::EventView::StreamGroupDone(_) => {}
            _ => inner.out.event(event),
        }
    }

    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>) {
        let mut inner = self.merge.inner.lock().unwrap();
        if inner.input(self.id).is_some_and(|i| i.leaving) {
            inner.inputs[self.id] = None;
            inner.release();
            self.merge.left.notify_all();
            return;
        }
        let end_rt = end.map(|t| inner.running(self.id, t));
        if let Some(input) = inner.input(self.id) {
            input.done = true;
            input.eos = Some((seqnum, end_rt));
        }
        inner.release();
        inner.end_if_all_done();
    }

    fn flushed(&mut self) {
        let mut inner = self.merge.inner.lock().unwrap();
        let id = self.id;
        // Until its new segment, the input holds nothing back.
        if let Some(input) = inner.input(id) {
            input.active = false;
            input.done = false;
            input.eos = None;
        }
        inner.waiting.retain(|(_, from, _)| *from != id);
        inner.release();
    }

    fn resume(&mut self) {
        let mut inner = self.merge.inner.lock().unwrap();
        inner.out.resume();
    }

    fn failed(&mut self) {
        let mut inner = self.merge.inner.lock().unwrap();
        if let Some(input) = inner.input(self.id) {
            input.done = true;
        }
        inner.release();
    }
}

/// Live: releases what an awaited input held back once the clock has
/// passed its latency, while no other input brings anything.
fn run_live_wait(merge: Weak<Merge>) {
    loop {
        let Some(merge) = merge.upgrade() else {
            return;
        };
        let inner = merge.inner.lock().unwrap();
        if inner.stopping || inner.ended {
            return;
        }
        let (mut inner, _) = merge.tick.wait_timeout(inner, LIVE_WAIT_TICK).unwrap();
        if inner.awaits_any() && !inner.ended {
            inner.release();
        }
    }
}
