// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The worker's model streams: audio in, aligned to the timeline; streams
//! begun, fed, restarted and finished; their text placed and handed on.

use std::time::Instant;

use crate::recognizer::{StreamConfig, TextUpdate};
use crate::settings::MAX_FILLED_HOLE;
use crate::transcript::{Output as Placed, Transcript};
use crate::voxtral::{ns_to_samples, samples_to_ns};

use super::super::gate::{Closed, Gate, Open};
use super::super::stream_watch::STOPPED_MODEL_AFTER_NS;
use super::super::voice::Frame;
use super::super::watchdog::Verdict;
use super::{Active, Change, Stop, Worker, ALIGNMENT_TOLERANCE_NS};
use crate::core::report::Cause;
use crate::core::TimedCue;

impl Worker {
    pub(super) fn handle_audio(
        &mut self,
        samples: &[f32],
        pts: Option<gst::ClockTime>,
    ) -> Result<(), Stop> {
        let mut samples = samples;
        let pts = pts.map(gst::ClockTime::nseconds);
        self.mark_skipped(pts);
        if let (Some(expected), Some(pts)) = (self.input_position(), pts) {
            if pts > expected + ALIGNMENT_TOLERANCE_NS {
                let hole = pts - expected;
                self.feed_held()?;
                if hole <= MAX_FILLED_HOLE.nseconds() {
                    self.feed_silence(hole)?;
                } else {
                    self.finish_stream(true)?;
                    self.pass_gap(expected, pts, None);
                }
            } else if pts + ALIGNMENT_TOLERANCE_NS < expected {
                let overlap = ns_to_samples(expected - pts).min(samples.len() as u64);
                self.inbox.stats().update(|s| s.dropped_samples += overlap);
                samples = &samples[overlap as usize..];
            }
        }
        if samples.is_empty() {
            return Ok(());
        }
        if let Some(pts) = pts {
            self.audio_end = Some(pts + samples_to_ns(samples.len() as u64));
        }
        let frames = self.hear(samples);
        self.alarm_hears(pts.or_else(|| self.input_position()), &frames);
        if self.gate.is_some() && self.active.is_none() {
            return self.gated_audio(samples, pts, &frames);
        }
        if self.active.is_none() {
            let segment_start = self.timeline.segment.start();
            let base = pts.unwrap_or_else(|| segment_start.map_or(0, gst::ClockTime::nseconds));
            self.begin_stream(base)?;
        }
        let Some(gate) = self.gate.as_mut() else {
            return self.feed_heard(samples, &frames);
        };
        match gate.heard_while_open(samples, &frames) {
            Open::Feed { held } => {
                self.feed_all(&held)?;
                self.feed_heard(samples, &frames)
            }
            Open::Hold => {
                self.watchdog_hears(&frames);
                Ok(())
            }
            Open::Close => {
                self.watchdog_hears(&frames);
                self.close_gate()
            }
        }
    }

    /// Feeds `samples`, whose voice `frames` the watchdog counts.
    fn feed_heard(&mut self, samples: &[f32], frames: &[Frame]) -> Result<(), Stop> {
        self.watchdog_hears(frames);
        self.feed_all(samples)
    }

    fn watchdog_hears(&mut self, frames: &[Frame]) {
        if let Some(watchdog) = &mut self.watchdog {
            watchdog.hear(frames);
        }
    }

    /// While the gate is open: the model takes the audio held back, as the
    /// input's order requires it before anything that follows.
    pub(super) fn feed_held(&mut self) -> Result<(), Stop> {
        if self.active.is_none() {
            return Ok(());
        }
        let held = self.gate.as_mut().map_or_else(Vec::new, Gate::take_held);
        self.feed_all(&held)
    }

    fn feed_all(&mut self, samples: &[f32]) -> Result<(), Stop> {
        // One decode interval at a time, so that the results of a long
        // buffer leave as they come and a restart falls on a decode.
        for slice in samples.chunks(self.stream_config.interval_samples()) {
            self.feed(slice)?;
            self.restart_if_long()?;
        }
        Ok(())
    }

    /// speech-only, with no stream running: the audio is kept back as a
    /// pre-roll, the text stream advances past what leaves it, and an onset
    /// starts a stream with it.
    fn gated_audio(
        &mut self,
        samples: &[f32],
        pts: Option<u64>,
        frames: &[Frame],
    ) -> Result<(), Stop> {
        let gate = self.gate.as_mut().expect("the gate is on");
        let segment_start = self.timeline.segment.start().map(gst::ClockTime::nseconds);
        let at = pts.or(gate.kept_until()).or(segment_start).unwrap_or(0);
        match gate.heard_while_closed(at, samples, frames) {
            Closed::Hold { gap_to } => {
                self.advance_gated(gap_to);
                Ok(())
            }
            Closed::Open { base, audio } => {
                self.advance_gated(base);
                self.gated_to = None;
                self.begin_stream(base)?;
                self.report_gate(true, base);
                self.feed_heard(&audio, frames)
            }
        }
    }

    /// While the gate is closed: nothing is said up to `to`.
    fn advance_gated(&mut self, to: u64) {
        let from = *self.gated_to.get_or_insert(to);
        if to > from {
            self.inbox
                .stats()
                .update(|s| s.gated_samples += ns_to_samples(to - from));
            self.pass_gap(from, to, None);
            self.gated_to = Some(to);
        }
    }

    /// With the gate closed, where the input's audio ends (for EOS): what
    /// it kept back is left out too.
    pub(super) fn gated_audio_end(&mut self) -> Option<u64> {
        let end = self.gate.as_ref()?.kept_until()?;
        self.advance_gated(end);
        Some(end)
    }

    /// The hangover passed without speech: the stream is finished as at
    /// EOS, every word handed on, and the model waits for the next onset.
    /// The audio held back stays out of it: it is the next pre-roll.
    fn close_gate(&mut self) -> Result<(), Stop> {
        let end = self.expected_position().expect("a stream runs");
        self.finalize_stream(false)?;
        if let Some(gate) = &mut self.gate {
            gate.closed_at(end);
        }
        self.gated_to = Some(end);
        self.report_gate(false, end);
        Ok(())
    }

    /// The `voxtralrt-speech` message: the gate opened (`speaking`) or
    /// closed at `at` on the input's timeline.
    fn report_gate(&self, speaking: bool, at: u64) {
        self.report.message(
            self.message_at("voxtralrt-speech", at)
                .field("speaking", speaking)
                .build(),
        );
    }

    /// An element message `name` about the point `at` of the input's
    /// timeline: its `pts` and `running-time` as output.
    pub(super) fn message_at(&self, name: &str, at: u64) -> gst::structure::Builder {
        let at = self.timeline.output_time(at);
        gst::Structure::builder(name)
            .field("pts", at.nseconds())
            .field("running-time", self.timeline.running_time(at))
    }

    pub(super) fn begin_stream(&mut self, base: u64) -> Result<(), Stop> {
        if let Some(gate) = &mut self.gate {
            gate.stream_begins(base);
        }
        self.stream.reset();
        let config = StreamConfig {
            decode_interval_ms: self.cadence.interval_ms(),
            ..self.stream_config
        };
        if let Err(err) = self.stream.begin(config) {
            return Err(self.engine_failure(&err));
        }
        self.cadence.stream_begins(config.warm_up_ns());
        let mut transcript = Transcript::with_rules(self.transcript_config, self.rules.clone());
        for turn in self.turns_from(base) {
            transcript.turn_at(turn);
        }
        self.active = Some(Active {
            base,
            transcript,
            steps: 0,
        });
        self.watch.begun();
        Ok(())
    }

    pub(super) fn feed_silence(&mut self, ns: u64) -> Result<(), Stop> {
        let silence = vec![0.0f32; ns_to_samples(ns) as usize];
        for slice in silence.chunks(self.stream_config.interval_samples()) {
            self.feed(slice)?;
        }
        Ok(())
    }

    pub(super) fn feed(&mut self, samples: &[f32]) -> Result<(), Stop> {
        let started = Instant::now();
        self.model_call(true);
        let result = self.stream.feed(samples);
        let spent = started.elapsed();
        let model_use = self.stream.model_use();
        self.inbox.stats().update(|s| {
            s.processing += spent;
            s.transcribed_samples += samples.len() as u64;
            s.model_call_since = None;
            s.model_use = model_use;
        });
        self.report_notices();
        let updates = result.map_err(|err| self.engine_failure(&err))?;
        let wrote = updates.iter().any(|u| !u.text.is_empty());
        for update in &updates {
            self.place(update)?;
        }
        let lag = self.inbox.stats().lag().nseconds();
        // While skipping, the streams stay at `decode-interval`
        // (OverloadPolicy::skipping).
        let paced = self.cadence.after_feed(
            samples_to_ns(samples.len() as u64),
            spent.as_nanos() as u64,
            lag,
            self.inbox.is_live() && !self.overload.skipping(),
        );
        if let Some(change) = paced {
            self.pace(change);
        }
        let advice = || self.stream.slowness_advice();
        if let Some(warning) = self.overload.check_lag(self.inbox.is_live(), lag, advice) {
            self.report.warning(Cause::Overload, &warning);
        }
        self.restart_a_stalled_model(wrote)?;
        self.restart_a_stopped_model(samples, wrote)
    }

    /// Decodes at the cadence's new interval, and says so.
    pub(super) fn pace(&mut self, change: Change) {
        self.stream.set_decode_interval(change.to_ms);
        self.inbox.stats().update(|s| {
            s.decode_interval_ms = change.to_ms;
            s.interval_stretches += u64::from(change.stretched());
        });
        gst::info!(
            crate::voxtral::LOG_CAT,
            "decode interval {} -> {} ms (real-time factor {:.2}, {} ms of audio waiting)",
            change.from_ms,
            change.to_ms,
            change.rtf,
            change.lag_ns / 1_000_000
        );
        let at = self.report.running_time();
        self.report.message(
            gst::Structure::builder("voxtralrt-decode-interval")
                .field("interval", change.to_ms)
                .field("previous", change.from_ms)
                .field("real-time-factor", change.rtf)
                .field("lag", change.lag_ns)
                .field("running-time", at)
                .build(),
        );
    }

    /// The watchdog: speech for `stall-timeout` (backing off) without any
    /// text restarts the stream from the current audio, skipping nothing.
    /// The stalled stream is dropped rather than finalized: a stalled
    /// server may not answer a final commit either.
    pub(super) fn restart_a_stalled_model(&mut self, wrote: bool) -> Result<(), Stop> {
        let Some(watchdog) = self.watchdog.as_mut() else {
            return Ok(());
        };
        let verdict = watchdog.after_feed(wrote);
        if wrote && verdict == Verdict::Fine {
            self.inbox.stats().update(|s| s.stalled = false);
        }
        let Verdict::Stalled { speech_ns, first } = verdict else {
            return Ok(());
        };
        let Some(next_base) = self.expected_position() else {
            return Ok(());
        };
        self.inbox.stats().update(|s| {
            s.stalls += 1;
            s.stalled = true;
        });
        if first {
            self.report.warning(
                Cause::Stall,
                &format!(
                    "the model wrote nothing over {} s of speech (stall-timeout): restarting its \
                     stream; restarts back off while it stays silent",
                    speech_ns / 1_000_000_000
                ),
            );
        }
        self.report.message(
            self.message_at("voxtralrt-stalled", next_base)
                .field("speech", speech_ns)
                .build(),
        );
        self.release_held()?;
        self.drop_stream();
        self.begin_stream(next_base)
    }

    /// The fallback for a recognizer that cannot see the model end its
    /// stream (`StreamWatch::model_seems_stopped`).
    pub(super) fn restart_a_stopped_model(
        &mut self,
        samples: &[f32],
        wrote: bool,
    ) -> Result<(), Stop> {
        if self.stream.sees_model_end() || self.active.is_none() {
            return Ok(());
        }
        if !self.watch.model_seems_stopped(samples, wrote) {
            return Ok(());
        }
        let next_base = self.expected_position().unwrap_or(0);
        gst::info!(
            crate::voxtral::LOG_CAT,
            "no text for {} s of sound: the model may have ended its stream, starting a new one",
            STOPPED_MODEL_AFTER_NS / 1_000_000_000
        );
        self.inbox.stats().update(|s| s.stopped_model_restarts += 1);
        self.finish_stream(true)?;
        self.begin_stream(next_base)
    }

    /// Reports what the recognizer noticed besides text.
    pub(super) fn report_notices(&mut self) {
        for notice in self.stream.take_notices() {
            crate::core::report::notice(&self.report, self.inbox.stats(), notice);
        }
    }

    /// Ends the model's stream, handing on every word it still held.
    /// `restart` counts it as a restart rather than the end of the input.
    pub(super) fn finish_stream(&mut self, restart: bool) -> Result<(), Stop> {
        self.feed_held()?;
        self.finalize_stream(restart)
    }

    /// Ends the stream with the audio it has taken.
    fn finalize_stream(&mut self, restart: bool) -> Result<(), Stop> {
        if self.active.is_none() {
            return Ok(());
        }
        let started = Instant::now();
        self.model_call(true);
        let result = self.stream.finalize();
        let spent = started.elapsed();
        self.report_notices();
        self.inbox.stats().update(|s| {
            s.processing += spent;
            s.model_call_since = None;
            s.stream_restarts += u64::from(restart);
        });
        let updates = result.map_err(|err| self.engine_failure(&err))?;
        for update in &updates {
            self.place(update)?;
        }
        self.active = None;
        Ok(())
    }

    /// Starts a new stream once this one is long, at a pause if one comes
    /// within the grace period.
    pub(super) fn restart_if_long(&mut self) -> Result<(), Stop> {
        let Some(active) = &self.active else {
            return Ok(());
        };
        let length = samples_to_ns(self.stream.samples_received());
        if self
            .watch
            .long_enough(length, active.transcript.held_text().is_empty())
        {
            let next_base = active.base + length;
            self.finish_stream(true)?;
            self.begin_stream(next_base)?;
        }
        Ok(())
    }

    pub(super) fn place(&mut self, update: &TextUpdate) -> Result<(), Stop> {
        let Some(active) = self.active.as_mut() else {
            return Ok(());
        };
        if !update.resumed_from.is_empty() {
            let ended = update.resumed_from.len() as u64;
            self.inbox
                .stats()
                .update(|s| s.model_ended_streams += ended);
        }
        let steps = active.count_steps(update);
        if steps > 0 {
            self.inbox.stats().update(|s| s.model_steps += steps);
        }
        let placed = if update.is_final {
            let end = samples_to_ns(update.audio_end);
            active.transcript.finish(&update.text, end)
        } else {
            let heard = samples_to_ns(update.heard_until);
            active.transcript.push(&update.text, heard)
        };
        let base = active.base;
        for item in placed {
            self.hand_on(base, item)?;
        }
        Ok(())
    }

    pub(super) fn hand_on(&mut self, base: u64, item: Placed) -> Result<(), Stop> {
        let (cue, start, end) = match item {
            Placed::Gap { start, end } => {
                self.pass_gap(base + start, base + end, None);
                return Ok(());
            }
            Placed::Cue(cue) => {
                let (start, end) = (base + cue.start, base + cue.end);
                let speaker = self.speaker_at(start);
                let cue = TimedCue {
                    speaker,
                    ..self.timeline.timed_cue(base, cue)
                };
                (cue, start, end)
            }
        };
        match self.output.cue(cue) {
            Ok(_) => {
                self.owe_gap = true;
                self.word_left(start, end);
                Ok(())
            }
            Err(gst::FlowError::Flushing) => Err(Stop::Stale),
            Err(flow) => {
                self.inbox.set_flow(self.epoch, flow);
                Err(Stop::Failed)
            }
        }
    }
}
