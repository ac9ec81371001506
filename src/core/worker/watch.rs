// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What the worker tells of the words that leave, for `stats` and the
//! metrics: each word's lag, when the last one left, how long the model
//! call in progress has run, and the caption alarm with its messages.

use std::time::Instant;

use super::super::alarm::{Change, Counters};
use super::super::report::Cause;
use super::super::voice::Frame;
use super::Worker;
use crate::core::CAPTION_ALARM_MESSAGE;
use crate::voxtral::samples_to_ns;

impl Worker {
    /// A call into the model begins (`true`) or ends.
    pub(super) fn model_call(&self, begins: bool) {
        let since = begins.then(Instant::now);
        self.inbox.stats().update(|s| s.model_call_since = since);
    }

    /// `samples` of audio at `pts` reached the element at `at`.
    pub(super) fn audio_arrived(
        &mut self,
        pts: Option<gst::ClockTime>,
        samples: usize,
        at: Instant,
    ) {
        if let Some(pts) = pts {
            let end = pts.nseconds() + samples_to_ns(samples as u64);
            self.arrivals.arrived(end, at);
        }
    }

    /// The voice detector's frames of audio from `start` (input time).
    pub(super) fn alarm_hears(&mut self, start: Option<u64>, frames: &[Frame]) {
        let (Some(alarm), Some(start)) = (self.alarm.as_mut(), start) else {
            return;
        };
        if let Some(Change::Raised { since, at }) = alarm.hear(start, frames) {
            self.raise_alarm(since, at);
        }
    }

    /// A word from `start` to `end` (input time) went out.
    pub(super) fn word_left(&mut self, start: u64, end: u64) {
        let now = Instant::now();
        let lag = self.arrivals.lag_of(end, now);
        let mut counts = Counters::default();
        self.inbox.stats().update(|s| {
            s.cues += 1;
            s.last_word_at = Some(now);
            if let Some(lag) = lag {
                s.word_lag.observe(lag);
            }
            counts = Counters::of(s);
        });
        let Some(alarm) = self.alarm.as_mut() else {
            return;
        };
        if let Some(Change::Cleared { since, at }) = alarm.word_left(start, end, counts) {
            self.clear_alarm(since, at, "words flow again");
        }
    }

    /// The input's time starts afresh (`why`): an alarm that was on is
    /// over.
    pub(super) fn restart_watch(&mut self, why: &str) {
        self.arrivals.clear();
        if let Some(since) = self.alarm.as_mut().and_then(|a| a.reset()) {
            self.clear_alarm(since, since, why);
        }
    }

    fn raise_alarm(&mut self, since: u64, at: u64) {
        let Some(alarm) = &self.alarm else {
            return;
        };
        let stats = self.inbox.stats().snapshot();
        let reason = alarm.reason(
            &Counters::of(&stats),
            stats.lag().nseconds(),
            self.latency_ns,
        );
        self.inbox.stats().update(|s| {
            s.caption_alarm = true;
            s.caption_alarm_reason = reason.clone();
        });
        self.report.warning(
            Cause::Alarm,
            &format!(
                "captions are missing: people have talked for {} s with no word out: {reason} \
                 (caption-alarm)",
                (at - since) / 1_000_000_000
            ),
        );
        self.post_alarm(true, since, at, &reason);
    }

    fn clear_alarm(&mut self, since: u64, at: u64, why: &str) {
        self.inbox.stats().update(|s| {
            s.caption_alarm = false;
            s.caption_alarm_reason.clear();
        });
        self.report.info(&format!(
            "captions are back after {} s without: {why} (caption-alarm)",
            at.saturating_sub(since) / 1_000_000_000
        ));
        self.post_alarm(false, since, at, why);
    }

    /// The `voxtralrt-caption-alarm` message: `pts` and `running-time`
    /// where it was raised or cleared, `since` where the captions stopped.
    fn post_alarm(&self, active: bool, since: u64, at: u64, reason: &str) {
        let since = self.timeline.running_time(self.timeline.output_time(since));
        self.report.message(
            self.message_at(CAPTION_ALARM_MESSAGE, at)
                .field("active", active)
                .field("since", since)
                .field("reason", reason)
                .build(),
        );
    }
}
