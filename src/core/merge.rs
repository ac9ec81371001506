// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Several cores, one output: the words of every input (one per speaker)
//! go out as one stream in time order. A word waits until every other
//! input has said, by a word or a gap, that nothing earlier can come from
//! it; each input's own cues and gaps come in order, so that is enough.
//!
//! An element with its sink pad alone does without it (its core delivers
//! to the src pad itself); with one input taking part, each word goes out
//! as soon as it comes.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::{Output, TimedCue};

/// One input's progress, in running time (ns).
#[derive(Debug, Default)]
struct Input {
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

struct Inner {
    out: Box<dyn Output>,
    /// By input id; `None` once released.
    inputs: Vec<Option<Input>>,
    /// The output's segment: the first input's.
    segment: Option<gst::FormattedSegment<gst::ClockTime>>,
    stream_started: bool,
    /// Cues waiting for the other inputs: running time, input, cue.
    waiting: Vec<(u64, usize, TimedCue)>,
    /// How far the output has gone (running time).
    position: u64,
    ended: bool,
}

/// The merge of several inputs into one [`Output`].
pub struct Merge {
    inner: Mutex<Inner>,
    /// An input that was leaving has ended.
    left: Condvar,
}

impl Merge {
    pub fn new(out: Box<dyn Output>) -> Arc<Merge> {
        Arc::new(Merge {
            inner: Mutex::new(Inner {
                out,
                inputs: Vec::new(),
                segment: None,
                stream_started: false,
                waiting: Vec::new(),
                position: 0,
                ended: false,
            }),
            left: Condvar::new(),
        })
    }

    /// A new input; its [`MergeInput`] is the Output its core delivers to.
    pub fn input(self: &Arc<Merge>) -> MergeInput {
        let mut inner = self.inner.lock().unwrap();
        inner.inputs.push(Some(Input::default()));
        MergeInput {
            merge: self.clone(),
            id: inner.inputs.len() - 1,
        }
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

    /// Hands on the waiting cues no input can precede any more, in time
    /// order, then a gap up to where every input has come.
    fn release(&mut self) {
        let horizon = self.taking_part().map(|i| i.watermark).min();
        self.waiting.sort_by_key(|(rt, _, _)| *rt);
        let due = self
            .waiting
            .iter()
            .take_while(|(rt, _, _)| horizon.is_none_or(|h| *rt <= h))
            .count();
        for (rt, _, mut cue) in self.waiting.drain(..due).collect::<Vec<_>>() {
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
        if inputs.is_empty() || inputs.iter().any(|i| !i.done) {
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
                    input.active = true;
                    input.done = false;
                    input.watermark = rt;
                    input.segment = Some(segment.clone());
                }
                if inner.segment.is_none() {
                    inner.segment = Some(segment);
                    inner.position = rt;
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
