// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What a translate pad tells of its text, for `stats` and the metrics:
//! each translation's lag (from when its last source word reached the pad
//! to when it went out), when the last one went out, and the caption alarm
//! of its language.
//!
//! The alarm is judged on the source words' time, as the src pad's is on
//! the audio's: it is raised when the source words have gone on for
//! `caption-alarm` past the point from which this language owes text.
//! Failed translations owe it from their start, whatever the pipeline;
//! live, a unit not yet answered owes it from its end (its translation
//! cannot come sooner). Not live, every unit waits for its answer by
//! design, so only failures count. The next translation ends the alarm.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use gst::prelude::*;

use crate::core::lag::Arrivals;
use crate::core::report::{Cause, Reporter};
use crate::core::{running_ns, TimedCue, CAPTION_ALARM_MESSAGE};
use crate::translation::{Error, Request, Unit};

use super::counts::PadCounts;

pub(super) struct PadWatch {
    pad: String,
    /// The language's tag and English name, for messages.
    tag: String,
    name: String,
    /// The window (ns); 0: the alarm is off.
    window_ns: u64,
    counts: Arc<PadCounts>,
    report: Reporter,
    arrivals: Arrivals,
    /// Where the source words given so far end.
    heard_until: Option<u64>,
    /// The ends of units closed and not yet delivered, in order.
    pending: VecDeque<u64>,
    /// Where the first failed unit since the last translation starts, and
    /// the last failure.
    failing_since: Option<u64>,
    failure: String,
    /// While the alarm is on: where the text stopped.
    alarm_since: Option<u64>,
}

impl PadWatch {
    pub(super) fn new(
        pad: &gst::Pad,
        language: Option<(String, String)>,
        window: gst::ClockTime,
        counts: Arc<PadCounts>,
        report: Reporter,
    ) -> PadWatch {
        counts.watched.lock().unwrap().started_at = Some(Instant::now());
        let (tag, name) = language.unwrap_or_default();
        PadWatch {
            pad: pad.name().to_string(),
            tag,
            name,
            window_ns: window.nseconds(),
            counts,
            report,
            arrivals: Arrivals::default(),
            heard_until: None,
            pending: VecDeque::new(),
            failing_since: None,
            failure: String::new(),
            alarm_since: None,
        }
    }

    /// A source word reached the pad.
    pub(super) fn word(&mut self, cue: &TimedCue) {
        let end = cue.end().nseconds();
        self.arrivals.arrived(end, Instant::now());
        self.heard_until = Some(self.heard_until.map_or(end, |h| h.max(end)));
    }

    pub(super) fn closed(&mut self, unit: &Unit) {
        self.pending.push_back(unit.end_ns);
    }

    /// `request`'s translation, of `words` words, went out.
    pub(super) fn translated(&mut self, request: &Request, words: u64, segment: Option<&Segment>) {
        self.delivered(request);
        let now = Instant::now();
        let lag = self.arrivals.lag_of(request.end_ns(), now);
        {
            let mut watched = self.counts.watched.lock().unwrap();
            watched.words += words;
            watched.last_out_at = Some(now);
            if let Some(lag) = lag {
                watched.lag.observe(lag);
            }
        }
        self.failing_since = None;
        if let Some(since) = self.alarm_since {
            self.clear(
                since,
                request.start_ns(),
                "translations flow again",
                segment,
            );
        }
    }

    /// `request` failed with `error`: its speech has no translation.
    pub(super) fn failed(&mut self, request: &Request, error: &Error) {
        self.delivered(request);
        self.failing_since.get_or_insert(request.start_ns());
        self.failure = error.to_string();
    }

    fn delivered(&mut self, request: &Request) {
        for _ in &request.units {
            self.pending.pop_front();
        }
    }

    /// Raises the alarm if the source words have gone on for the window
    /// past what this language owes (`live`: unanswered units count).
    pub(super) fn judge(&mut self, live: bool, segment: Option<&Segment>) {
        if self.window_ns == 0 || self.alarm_since.is_some() {
            return;
        }
        let unanswered = self.pending.front().copied().filter(|_| live);
        let owed = [self.failing_since, unanswered].into_iter().flatten().min();
        let (Some(owed), Some(heard)) = (owed, self.heard_until) else {
            return;
        };
        if heard.saturating_sub(owed) < self.window_ns {
            return;
        }
        let reason = if self.failing_since == Some(owed) {
            format!("translations into {} fail: {}", self.name, self.failure)
        } else {
            format!(
                "the chat server has not answered: the oldest unit has waited {} s of speech \
                 for its translation ({} units waiting)",
                (heard - owed) / 1_000_000_000,
                self.pending.len()
            )
        };
        self.alarm_since = Some(owed);
        self.counts.watched.lock().unwrap().alarm = Some(reason.clone());
        self.report.warning(
            Cause::Alarm,
            &format!(
                "{}: captions in {} are missing: the source words went on for {} s with no \
                 translation out: {reason} (caption-alarm)",
                self.pad,
                self.name,
                (heard - owed) / 1_000_000_000
            ),
        );
        self.post(true, owed, heard, &reason, segment);
    }

    /// A flush: what was owed is gone.
    pub(super) fn reset(&mut self, segment: Option<&Segment>) {
        self.arrivals.clear();
        self.heard_until = None;
        self.pending.clear();
        self.failing_since = None;
        if let Some(since) = self.alarm_since {
            self.clear(since, since, "a flush", segment);
        }
    }

    fn clear(&mut self, since: u64, at: u64, why: &str, segment: Option<&Segment>) {
        self.alarm_since = None;
        self.counts.watched.lock().unwrap().alarm = None;
        self.report.info(&format!(
            "{}: captions in {} are back after {} s without: {why} (caption-alarm)",
            self.pad,
            self.name,
            at.saturating_sub(since) / 1_000_000_000
        ));
        self.post(false, since, at, why, segment);
    }

    /// The `voxtralrt-caption-alarm` message of this pad.
    fn post(&self, active: bool, since: u64, at: u64, reason: &str, segment: Option<&Segment>) {
        let running = |t: u64| {
            let t = gst::ClockTime::from_nseconds(t);
            segment.map_or(t.nseconds(), |s| running_ns(s, t))
        };
        self.report.message(
            gst::Structure::builder(CAPTION_ALARM_MESSAGE)
                .field("pad", &self.pad)
                .field("language-code", &self.tag)
                .field("active", active)
                .field("since", running(since))
                .field("pts", at)
                .field("running-time", running(at))
                .field("reason", reason)
                .build(),
        );
    }
}

type Segment = gst::FormattedSegment<gst::ClockTime>;
