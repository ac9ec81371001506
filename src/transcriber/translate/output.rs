// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What one `translate_src_%u` pad outputs: the src pad's words gathered
//! into units, each translated and pushed with the time of its source
//! words (the first word's start to the last one's end), followed by
//! `rstranscribe/final-transcript`. The src pad hands its words over and
//! never waits for this.
//!
//! A unit's request goes out when the unit closes, beside those in flight,
//! paced by [`crate::translation::pacing`] (the bound, catch-ups, order)
//! over the servers' room ([`super::requests`]); translations go out in
//! unit order.
//!
//! With caption caps downstream (CEA-608/708, as on the src pad) each
//! translation's words go into a caption track on the pad's channel and
//! service, and frames go out as time passes instead of GAPs.
//!
//! Not live, units are sent one at a time and every one waits for its
//! translation, so a file gives them all, the same run after run. Live,
//! GAPs keep downstream moving up to the clock's edge (the pad's latency)
//! while units are in flight, and a translation that comes after that goes
//! out where the pad stands, never earlier.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::Duration;

use gst::prelude::*;

use crate::core::report::{Cause, Reporter};
use crate::core::TimedCue;
use crate::subtitles::{split_text, Style};
use crate::transcript::Word;
use crate::translation::{
    Error, History, Language, PaceLimits, Pacer, Released, Request, Unit, UnitBuilder, UnitLimits,
};

use super::counts::PadCounts;
use super::requests::{self, Answer, Servers};
use super::taps::Item;
use super::watch::PadWatch;
use crate::transcriber::caps::{choose_caps, offered_caps, text_caps};
use crate::transcriber::caption_output::{CaptionTrack, PackedFrame};
use crate::transcriber::output::{final_transcript_event, timed_buffer};
use crate::transcriber::CAT;

/// How many earlier units and their translations go with a request.
const CONTEXT_UNITS: usize = 3;
/// A frame at 24000/1001 fps, the slowest caption frame rate.
const LONGEST_CAPTION_FRAME: gst::ClockTime = gst::ClockTime::from_nseconds(41_708_334);
/// How often a pad with units waiting or in flight looks at the clock and
/// the servers' room.
const TICK: Duration = Duration::from_millis(40);

/// What a translate pad's thread needs.
pub(super) struct PadTranslator {
    pub pad: gst::Pad,
    /// `None`: the pad cannot translate (a WARNING said why); it gets the
    /// stream's events and GAPs alone.
    pub language: Option<Language>,
    pub servers: Option<Arc<Servers>>,
    /// This pad's place in the line for the servers' slots.
    pub who: usize,
    pub limits: UnitLimits,
    pub max_requests: usize,
    pub counts: Arc<PadCounts>,
    /// Captions, when downstream takes them; text otherwise.
    pub captions: CaptionTrack,
    pub report: Reporter,
    /// Splits a translation into cues (broadcast: one buffer a unit).
    pub style: Style,
    /// `caption-alarm` (zero: off).
    pub alarm: gst::ClockTime,
}

/// Starts the pad's thread; its inbox is returned.
pub(super) fn spawn(translator: PadTranslator) -> std::io::Result<Sender<Item>> {
    let (sender, inbox) = mpsc::channel();
    let (answers_in, answers) = mpsc::channel();
    let worker = Worker::new(translator, sender.clone(), answers_in);
    std::thread::Builder::new()
        .name("voxtralrt-translate".into())
        .spawn(move || worker.run(inbox, answers))?;
    Ok(sender)
}

struct Worker {
    t: PadTranslator,
    units: UnitBuilder,
    pacer: Pacer<Error>,
    history: History,
    /// Where requests' answers come back, and how they wake this thread.
    answers: Sender<Answer>,
    wake: Sender<Item>,
    segment: Option<gst::FormattedSegment<gst::ClockTime>>,
    /// Where what went out last ends.
    position: Option<gst::ClockTime>,
    /// Live: the pad's latency (upstream's, the element's, translate-latency).
    live: Option<Option<gst::ClockTime>>,
    speaker: Option<String>,
    discont: bool,
    /// EOS came: it goes out once every unit has.
    eos: Option<gst::Seqnum>,
    /// In a run of re-timed translations, or of failed ones (warned once).
    retiming: bool,
    failing: bool,
    watch: PadWatch,
}

impl Worker {
    fn new(t: PadTranslator, wake: Sender<Item>, answers: Sender<Answer>) -> Worker {
        let language = t
            .language
            .as_ref()
            .map(|l| (l.tag().to_owned(), l.to_string()));
        let watch = PadWatch::new(
            &t.pad,
            language,
            t.alarm,
            t.counts.clone(),
            t.report.clone(),
        );
        Worker {
            units: UnitBuilder::new(t.limits),
            pacer: Pacer::new(PaceLimits {
                max_requests: t.max_requests,
                merge: false,
            }),
            t,
            history: History::new(CONTEXT_UNITS),
            answers,
            wake,
            segment: None,
            position: None,
            live: None,
            speaker: None,
            discont: true,
            eos: None,
            retiming: false,
            failing: false,
            watch,
        }
    }

    fn run(mut self, inbox: Receiver<Item>, answers: Receiver<Answer>) {
        loop {
            let item = if self.pacer.is_idle() {
                inbox.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                inbox.recv_timeout(TICK)
            };
            match item {
                Ok(item) => self.take(item),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            for answer in answers.try_iter() {
                self.answered(answer);
            }
            self.send_due();
            self.release();
            let live = self.live.flatten().is_some();
            self.watch.judge(live, self.segment.as_ref());
            self.keep_live_pace();
            self.end_if_done();
        }
        if let Some(servers) = &self.t.servers {
            servers.leave(self.t.who);
        }
    }

    fn take(&mut self, item: Item) {
        match item {
            Item::Word(cue) => self.word(cue),
            Item::Gap(end) => self.gap(end),
            Item::Event(event) => self.event(event),
            Item::Eos(seqnum) => {
                if let Some(unit) = self.units.flush() {
                    self.close(unit);
                }
                self.eos = Some(seqnum);
            }
            Item::Flush => {
                self.units = UnitBuilder::new(self.t.limits);
                self.pacer.clear();
                self.history.clear();
                self.position = None;
                self.speaker = None;
                self.discont = true;
                self.eos = None;
                self.watch.reset(self.segment.as_ref());
                if let Some(servers) = &self.t.servers {
                    servers.leave(self.t.who);
                }
            }
            Item::Answered => {}
        }
    }

    /// EOS goes out after the last unit's translation (or failure).
    fn end_if_done(&mut self) {
        if !self.pacer.is_idle() {
            return;
        }
        let Some(seqnum) = self.eos.take() else {
            return;
        };
        let frames = self.t.captions.finish();
        self.push_frames(frames);
        self.t
            .pad
            .push_event(gst::event::Eos::builder().seqnum(seqnum).build());
    }

    fn word(&mut self, cue: TimedCue) {
        if self.t.language.is_none() || self.t.servers.is_none() {
            self.gap_to(cue.end());
            return;
        }
        self.watch.word(&cue);
        let mut word = Word::new(&cue.text, cue.pts.nseconds(), cue.end().nseconds());
        if let Some(speaker) = &cue.speaker {
            word = word.by(speaker);
        }
        for unit in self.units.push(word) {
            self.close(unit);
        }
    }

    fn gap(&mut self, end: gst::ClockTime) {
        if let Some(unit) = self.units.close_if_due(end.nseconds()) {
            self.close(unit);
        }
        // A unit still open, or one not out yet, starts where the next
        // buffer will.
        let held = [
            self.units.open().map(|u| u.start_ns),
            self.pacer.holds_from(),
        ];
        let until = held
            .into_iter()
            .flatten()
            .min()
            .map_or(end, |ns| end.min(gst::ClockTime::from_nseconds(ns)));
        self.gap_to(until);
    }

    fn event(&mut self, event: gst::Event) {
        if let gst::EventView::StreamStart(_) = event.view() {
            self.t.captions.new_stream();
        }
        if let gst::EventView::Segment(e) = event.view() {
            self.segment = e.segment().downcast_ref::<gst::ClockTime>().cloned();
            self.position = None;
            self.discont = true;
            let caps = self.negotiate();
            self.t.pad.push_event(gst::event::Caps::new(&caps));
            self.t.pad.push_event(event);
            self.send_language_tag();
            self.preroll();
            return;
        }
        self.t.pad.push_event(event);
    }

    /// A zero-length GAP where the segment starts: downstream prerolls on
    /// it while the first unit is still being said (the src pad's sink
    /// holds the pipeline in PAUSED until every sink has).
    fn preroll(&self) {
        let start = self.segment_start();
        self.t.pad.push_event(
            gst::event::Gap::builder(start)
                .duration(gst::ClockTime::ZERO)
                .build(),
        );
    }

    /// Text, or captions when downstream takes only those (our
    /// template's order, as on the src pad), on a grid from the segment's
    /// start.
    fn negotiate(&mut self) -> gst::Caps {
        let start = self.segment_start();
        let channel = self.t.captions.settings().channel.into();
        let template = offered_caps(&self.t.pad.pad_template_caps(), channel);
        let caps = choose_caps(&self.t.pad.peer_query_caps(Some(&template))).unwrap_or_else(|| {
            self.t.report.warning(
                Cause::Settings,
                &format!(
                    "{}: downstream takes none of {template}; it gets text",
                    self.t.pad.name()
                ),
            );
            text_caps()
        });
        gst::debug!(CAT, obj = self.t.pad, "output caps {caps}");
        let _ = self.t.captions.set_caps(&caps, start);
        self.t.captions.restart(start);
        caps
    }

    fn segment_start(&self) -> gst::ClockTime {
        self.segment
            .as_ref()
            .and_then(|s| s.start())
            .unwrap_or(gst::ClockTime::ZERO)
    }

    fn send_language_tag(&self) {
        let Some(language) = &self.t.language else {
            return;
        };
        let mut tags = gst::TagList::new();
        tags.get_mut()
            .expect("new tag list")
            .add::<gst::tags::LanguageCode>(&language.tag(), gst::TagMergeMode::Replace);
        self.t.pad.push_event(gst::event::Tag::new(tags));
    }

    /// A unit closed: it is sent as soon as the pacing allows.
    fn close(&mut self, unit: Unit) {
        self.t.counts.units.fetch_add(1, Ordering::Relaxed);
        if self.pacer.is_idle() {
            // Live or not is known once the stream runs; it decides
            // whether units may go out side by side and merged.
            let live = self.live_latency().is_some();
            self.pacer.set_limits(PaceLimits {
                max_requests: self.t.max_requests,
                merge: live,
            });
        }
        self.watch.closed(&unit);
        self.pacer.close(unit);
    }

    /// Sends what the pacing and the servers' room allow now.
    fn send_due(&mut self) {
        let (Some(servers), Some(language)) = (self.t.servers.clone(), self.t.language.clone())
        else {
            return;
        };
        if self.pacer.waiting() == 0 || self.pacer.room() == 0 {
            return;
        }
        let room = servers.room_for(self.t.who);
        for request in self.pacer.requests(room) {
            // What was sent before it, answered or not, is its context.
            let context = self.history.clone();
            self.history.sent(request.id, &request.text());
            self.count_request(&request, &servers);
            let sent = requests::send(
                &servers,
                self.t.who,
                &language,
                context,
                &request,
                &self.answers,
                &self.wake,
            );
            if !matches!(sent, Ok(true)) {
                let detail = match sent {
                    Err(e) => format!("no thread for the request: {e}"),
                    _ => "no slot on the servers".to_owned(),
                };
                self.pacer.answer(
                    request.id,
                    Err(Error::Unreachable {
                        server: "(none)".into(),
                        detail,
                    }),
                );
            }
        }
    }

    fn count_request(&self, request: &Request, servers: &Servers) {
        self.t.counts.requests.fetch_add(1, Ordering::Relaxed);
        if request.is_catch_up() {
            self.t.counts.catch_ups.fetch_add(1, Ordering::Relaxed);
            gst::debug!(
                CAT,
                obj = self.t.pad,
                "catch-up: {} units in one request (servers' limits {:?})",
                request.units.len(),
                servers.limits()
            );
        }
    }

    fn answered(&mut self, answer: Answer) {
        if let Ok(text) = &answer.result {
            self.history.answered(answer.id, text);
        }
        self.pacer.answer(answer.id, answer.result);
    }

    /// Pushes the translations (or the failures' GAPs) that may go out, in
    /// unit order.
    fn release(&mut self) {
        for released in self.pacer.release() {
            self.deliver(released);
        }
    }

    fn deliver(&mut self, released: Released<Error>) {
        let Released { request, outcome } = released;
        let start = gst::ClockTime::from_nseconds(request.start_ns());
        self.gap_to(start);
        let n = request.units.len() as u64;
        match outcome {
            Ok(text) => {
                self.failing = false;
                self.t.counts.translated.fetch_add(n, Ordering::Relaxed);
                let words = text.split_whitespace().count() as u64;
                self.push_translation(&request, text);
                self.t.pad.push_event(final_transcript_event());
                self.watch
                    .translated(&request, words, self.segment.as_ref());
            }
            Err(e) => {
                self.t.counts.failures.fetch_add(n, Ordering::Relaxed);
                self.watch.failed(&request, &e);
                if !std::mem::replace(&mut self.failing, true) {
                    self.t.report.warning(
                        Cause::Connection,
                        &format!(
                            "translation into {} failed: {e}; its captions get a gap for this \
                             speech (counted in stats as translations' failures)",
                            self.language_name()
                        ),
                    );
                }
                self.gap_to(gst::ClockTime::from_nseconds(request.end_ns()));
            }
        }
    }

    /// Live, while units wait or are in flight: GAPs up to the clock's
    /// edge keep downstream moving.
    fn keep_live_pace(&mut self) {
        if self.pacer.is_idle() {
            return;
        }
        if let Some(servers) = &self.t.servers {
            servers.tick();
        }
        if let Some(latency) = self.live_latency() {
            self.gap_to_live_edge(latency);
        }
    }

    /// Live: the pad's latency, asked once the stream runs.
    fn live_latency(&mut self) -> Option<gst::ClockTime> {
        if let Some(known) = self.live {
            return known;
        }
        let mut query = gst::query::Latency::new();
        if !self.t.pad.query(&mut query) {
            return None;
        }
        let (live, min, _) = query.result();
        let latency = live.then_some(min);
        self.live = Some(latency);
        latency
    }

    /// Live: a GAP up to where the clock has passed the pad's latency.
    fn gap_to_live_edge(&mut self, latency: gst::ClockTime) {
        let Some(now) = self.t.report.running_time() else {
            return;
        };
        let Some(edge) = now.checked_sub(latency) else {
            return;
        };
        let edge = self
            .segment
            .as_ref()
            .and_then(|s| s.position_from_running_time(edge))
            .unwrap_or(edge);
        self.gap_to(edge);
    }

    fn push_translation(&mut self, request: &Request, text: String) {
        let start = gst::ClockTime::from_nseconds(request.start_ns());
        let end = gst::ClockTime::from_nseconds(request.end_ns().max(request.start_ns()));
        let pts = self.place(start);
        let speaker = request.units.first().and_then(|u| u.speaker.clone());
        if speaker.is_some() && speaker != self.speaker {
            self.speaker = speaker;
            let s = gst::Structure::builder(crate::speakers::SPEAKER_CHANGE_EVENT)
                .field("speaker", self.speaker.as_deref().unwrap_or_default())
                .build();
            self.t.pad.push_event(gst::event::CustomDownstream::new(s));
            self.t.captions.speaker_change();
        }
        let duration = end.saturating_sub(start);
        if !self.t.captions.is_text() {
            self.caption_translation(&text, pts, duration);
            return;
        }
        gst::debug!(CAT, obj = self.t.pad, "translation at {pts}: {text}");
        let (from, to, late) = (start.nseconds(), end.nseconds(), pts - start);
        for cue in split_text(&self.t.style, &text, from, to, self.speaker.as_deref()) {
            let at = gst::ClockTime::from_nseconds(cue.start_ns) + late;
            let length = gst::ClockTime::from_nseconds(cue.end_ns - cue.start_ns);
            self.push_timed(cue.text().into_bytes(), at, length);
        }
    }

    /// Where a translation of speech from `start` goes: there, or where
    /// the pad stands when it has already passed it (live, late).
    fn place(&mut self, start: gst::ClockTime) -> gst::ClockTime {
        // Caption frames go out whole: the one under `start` may end after
        // it without the translation being late.
        let slack = if self.t.captions.is_text() {
            gst::ClockTime::ZERO
        } else {
            LONGEST_CAPTION_FRAME
        };
        let Some(position) = self.position.filter(|p| *p > start + slack) else {
            self.retiming = false;
            return start;
        };
        self.t.counts.retimed.fetch_add(1, Ordering::Relaxed);
        if !std::mem::replace(&mut self.retiming, true) {
            self.t.report.warning(
                Cause::Order,
                &format!(
                    "a translation into {} came {} ms after its time had passed: it goes out \
                     where the pad stands; consider increasing translate-latency (counted in \
                     stats as translations' retimed)",
                    self.language_name(),
                    (position - start).mseconds()
                ),
            );
        }
        position
    }

    fn language_name(&self) -> String {
        self.t
            .language
            .as_ref()
            .map_or_else(String::new, ToString::to_string)
    }

    fn gap_to(&mut self, until: gst::ClockTime) {
        if self.segment.is_none() {
            return;
        }
        let from = self.position.unwrap_or_else(|| self.segment_start());
        if until <= from {
            return;
        }
        if !self.t.captions.is_text() {
            let frames = self.t.captions.frames_until(until);
            self.push_frames(frames);
            return;
        }
        self.advance_to(until);
        self.t.pad.push_event(
            gst::event::Gap::builder(from)
                .duration(until - from)
                .build(),
        );
    }

    /// A translation as captions: its words spread evenly over its
    /// source's time, so that long ones roll on as speech would.
    fn caption_translation(&mut self, text: &str, pts: gst::ClockTime, duration: gst::ClockTime) {
        let frames = self.t.captions.frames_until(pts);
        self.push_frames(frames);
        let words: Vec<&str> = text.split_whitespace().collect();
        let n = words.len().max(1) as u64;
        let at = |i: u64| pts + duration.mul_div_floor(i, n).unwrap_or(gst::ClockTime::ZERO);
        for (i, word) in (0u64..).zip(&words) {
            self.t.captions.push_cue(word, at(i), at(i + 1));
        }
    }

    fn push_frames(&mut self, frames: Vec<PackedFrame>) {
        for frame in frames {
            self.push_timed(frame.data, frame.pts, frame.duration);
        }
    }

    /// One buffer from `pts` for `duration`, DISCONT if it starts a run.
    fn push_timed(&mut self, data: Vec<u8>, pts: gst::ClockTime, duration: gst::ClockTime) {
        let buffer = timed_buffer(data, pts, duration, std::mem::take(&mut self.discont));
        self.advance_to(pts + duration);
        let _ = self.t.pad.push(buffer);
    }

    fn advance_to(&mut self, end: gst::ClockTime) {
        self.position = Some(self.position.map_or(end, |p| p.max(end)));
    }
}
