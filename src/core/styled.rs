// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `output=lines` in a subtitle style: the worker's words become cues of
//! the style ([`crate::subtitles::cues`]) before the element's output sees
//! them, as lines are. A cue goes out once its end is decided; GAPs go on
//! only up to the first word held, so that nothing goes out after a later
//! time (live, the element's LATENCY counts the style's hold).

use std::sync::{Arc, Mutex};

use super::stats::field;
use super::{Output, TimedCue};
use crate::settings::Settings;
use crate::subtitles::{Counts, Cue, CueBuilder, Style};
use crate::transcript::Word;

/// The counts of a style's cues, shared with the element's `stats`.
pub type SharedCounts = Arc<Mutex<Counts>>;

/// Adds the counts to a `stats` structure.
pub fn add_subtitle_stats(stats: &mut gst::StructureRef, counts: Counts) {
    stats.set(field::SUBTITLE_CUES, counts.cues);
    stats.set(field::SUBTITLE_CUES_TOO_FAST, counts.too_fast);
    stats.set(field::SUBTITLE_CUES_SHORT, counts.short);
    stats.set(field::SUBTITLE_CHARS_REPLACED, counts.chars_replaced);
}

/// `output`, or with output=lines in a subtitle style, `output` behind a
/// [`StyledOutput`] (counting into `counts`, which start again at zero).
pub fn style_lines(
    output: Box<dyn Output>,
    settings: &Settings,
    counts: &SharedCounts,
    release_on_stall: bool,
) -> Box<dyn Output> {
    *counts.lock().unwrap() = Counts::default();
    if !settings.styles_lines() {
        return output;
    }
    let style = settings.style();
    Box::new(StyledOutput::new(
        output,
        style,
        counts.clone(),
        release_on_stall,
    ))
}

/// An [`Output`] that takes words and hands cues of a style to `inner`.
pub struct StyledOutput {
    inner: Box<dyn Output>,
    builder: CueBuilder,
    counts: SharedCounts,
    /// The segment of the last word (the cues' times are in it).
    segment: gst::FormattedSegment<gst::ClockTime>,
    /// Nothing is said before this (the worker's gaps).
    silent_until: u64,
    /// Where what went to `inner` ends.
    sent_until: u64,
    /// A stall of the input lets what is held go (a muxer may wait for
    /// the text before it takes more input).
    release_on_stall: bool,
}

impl StyledOutput {
    pub fn new(
        inner: Box<dyn Output>,
        style: Style,
        counts: SharedCounts,
        release_on_stall: bool,
    ) -> StyledOutput {
        StyledOutput {
            release_on_stall,
            inner,
            builder: CueBuilder::new(style),
            counts,
            segment: gst::FormattedSegment::new(),
            silent_until: 0,
            sent_until: 0,
        }
    }

    fn deliver(&mut self, cues: Vec<Cue>) -> Result<gst::FlowSuccess, gst::FlowError> {
        {
            // The characters a file replaced are the file's to count.
            let mut counts = self.counts.lock().unwrap();
            *counts = Counts {
                chars_replaced: counts.chars_replaced,
                ..self.builder.counts()
            };
        }
        let mut flow = Ok(gst::FlowSuccess::Ok);
        for cue in cues {
            self.sent_until = self.sent_until.max(cue.end_ns);
            let timed = TimedCue {
                text: cue.text(),
                pts: gst::ClockTime::from_nseconds(cue.start_ns),
                duration: gst::ClockTime::from_nseconds(cue.end_ns - cue.start_ns),
                segment: self.segment.clone(),
                speaker: cue.speaker,
            };
            flow = flow.and(self.inner.cue(timed));
        }
        flow
    }

    /// The silence known before the first word held goes on.
    fn pass_silence(&mut self, seqnum: Option<gst::Seqnum>) {
        let until = self
            .builder
            .horizon()
            .map_or(self.silent_until, |h| h.min(self.silent_until));
        if until > self.sent_until {
            let from = gst::ClockTime::from_nseconds(self.sent_until);
            let duration = gst::ClockTime::from_nseconds(until - self.sent_until);
            self.sent_until = until;
            self.inner.gap(from, duration, seqnum);
        }
    }

    /// Everything held goes out, the last cue ending at `until` at the
    /// latest (none: where it wants to; a word that comes before that
    /// starts its cue after it and the gap).
    fn release(&mut self, until: Option<u64>) {
        let cues = self.builder.finish(until);
        let _ = self.deliver(cues);
    }
}

impl Output for StyledOutput {
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.segment = cue.segment.clone();
        let mut word = Word::new(&cue.text, cue.pts.nseconds(), cue.end().nseconds());
        word.speaker = cue.speaker;
        let cues = self.builder.push(word);
        self.deliver(cues)
    }

    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, seqnum: Option<gst::Seqnum>) {
        let end = (pts + duration).nseconds();
        if duration.is_zero() {
            // The input stalled (or a segment starts): where the text
            // stands, once what is held went out.
            self.silent_until = self.silent_until.max(end);
            if self.release_on_stall {
                self.release(None);
            }
            if self.builder.horizon().is_none() {
                self.sent_until = self.sent_until.max(end);
                let at = gst::ClockTime::from_nseconds(self.sent_until);
                self.inner.gap(at, duration, seqnum);
            }
            return;
        }
        self.silent_until = self.silent_until.max(end);
        let cues = self.builder.silence_until(end);
        let _ = self.deliver(cues);
        self.pass_silence(seqnum);
    }

    fn event(&mut self, event: gst::Event) {
        if matches!(
            event.type_(),
            gst::EventType::Segment | gst::EventType::SegmentDone | gst::EventType::StreamStart
        ) {
            self.release(None);
            if event.type_() == gst::EventType::Segment {
                self.silent_until = 0;
                self.sent_until = 0;
            }
        }
        self.inner.event(event);
    }

    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>) {
        self.release(end.map(|e| e.nseconds()));
        self.inner.eos(seqnum, end);
    }

    fn flushed(&mut self) {
        self.builder.reset();
        self.silent_until = 0;
        self.sent_until = 0;
        self.inner.flushed();
    }

    fn resume(&mut self) {
        self.inner.resume();
    }

    fn failed(&mut self) {
        // What is held goes out: no word is lost.
        self.release(None);
        self.inner.failed();
    }
}
