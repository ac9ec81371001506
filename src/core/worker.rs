// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The worker thread: feeds the engine and places its text on the input's
//! timeline.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::engine::SAMPLE_RATE;
use crate::recognizer::{self, Notice, Recognizer, StreamConfig, TextUpdate};
use crate::settings::{Overload, Settings, MAX_FILLED_HOLE_MS};
use crate::transcript::{Output as Placed, Transcript, TranscriptConfig};

use super::inbox::{Inbox, Item, Next, Queued};
use super::{Output, TimedCue};

/// Timestamps within this of the expected position count as continuous
/// (the usual audio sink tolerance).
const ALIGNMENT_TOLERANCE_NS: u64 = 40_000_000;
/// Non-live input that stops coming for this long is blocked by downstream.
const IDLE_RELEASE: Duration = Duration::from_millis(50);
/// Live input that stops coming for this long is blocked, or stalled.
const LIVE_IDLE_RELEASE: Duration = Duration::from_millis(300);
/// Sound louder than this (RMS, -40 dBFS) is something the model should
/// write about, unless it is music or noise.
const VOICED_RMS: f32 = 0.01;
/// Sound heard without any text after which the model is taken to have
/// stopped.
const STOPPED_MODEL_AFTER_NS: u64 = 4_000_000_000;
/// Past the maximum stream duration, a pause is waited for at most this long
/// (or a tenth of the maximum, if that is shorter).
const RESTART_GRACE_NS: u64 = 30_000_000_000;

fn is_voiced(samples: &[f32]) -> bool {
    if samples.is_empty() {
        return false;
    }
    let energy: f32 = samples.iter().map(|v| v * v).sum();
    (energy / samples.len() as f32).sqrt() > VOICED_RMS
}

fn samples_to_ns(samples: u64) -> u64 {
    samples * 1_000_000_000 / u64::from(SAMPLE_RATE)
}

fn ns_to_samples(ns: u64) -> u64 {
    ns * u64::from(SAMPLE_RATE) / 1_000_000_000
}

/// The engine stream now running and where its audio sits on the timeline.
struct Active {
    /// Time (input segment format) of the stream's first sample.
    base: u64,
    transcript: Transcript,
    /// Audio with sound in it that the model has heard since it last wrote
    /// text.
    voiced_without_text_ns: u64,
}

/// Why the current item's work stopped.
enum Stop {
    /// A flush or stop came; drop the work silently.
    Stale,
    /// A failure already reported; wait for a flush.
    Failed,
}

pub(super) struct Worker {
    stream: Box<dyn Recognizer>,
    stream_config: StreamConfig,
    transcript_config: TranscriptConfig,
    lateness_ns: u64,
    latency_ns: u64,
    max_stream_ns: u64,
    output: Box<dyn Output>,
    inbox: Arc<Inbox>,
    segment: gst::FormattedSegment<gst::ClockTime>,
    active: Option<Active>,
    epoch: u64,
    /// A failure ended this epoch's work; wait for a flush.
    failed: bool,
    lag_warned: bool,
    /// The last thing handed on was a cue: downstream has nothing that
    /// tells it how far the text stream has come past its start.
    owe_gap: bool,
    overload: Overload,
    max_lag_ns: u64,
    /// Audio was skipped: where the old stream's audio ended (if one ran)
    /// and how many samples went, until the next audio says where it goes
    /// on.
    skipped: Option<(Option<u64>, u64)>,
    /// Skipping since the worker last caught up with its input: one
    /// WARNING per such episode.
    overloaded: bool,
}

impl Worker {
    pub(super) fn new(
        stream: Box<dyn Recognizer>,
        settings: &Settings,
        output: Box<dyn Output>,
        inbox: Arc<Inbox>,
    ) -> Worker {
        Worker {
            stream,
            stream_config: settings.stream_config(),
            transcript_config: settings.transcript_config(),
            lateness_ns: u64::from(settings.lateness_ms) * 1_000_000,
            latency_ns: u64::from(settings.latency_ms) * 1_000_000,
            max_stream_ns: u64::from(settings.max_stream_duration_s) * 1_000_000_000,
            output,
            inbox,
            segment: gst::FormattedSegment::new(),
            active: None,
            epoch: 0,
            failed: false,
            lag_warned: false,
            owe_gap: false,
            overload: settings.overload,
            max_lag_ns: u64::from(settings.max_lag_ms) * 1_000_000,
            skipped: None,
            overloaded: false,
        }
    }

    pub(super) fn run(mut self) -> Box<dyn Recognizer> {
        if let Err(err) = self.stream.prepare() {
            let stop = self.engine_failure(&err);
            self.stop_work(stop);
        }
        self.report_notices();
        loop {
            let (item, epoch) = match self.inbox.next(self.idle_timeout()) {
                Next::Stopped => break,
                Next::Idle => {
                    if let Err(stop) = self.release_held() {
                        self.stop_work(stop);
                    }
                    continue;
                }
                Next::Item(Queued {
                    item,
                    epoch,
                    waited,
                }) => {
                    self.overloaded &= !waited;
                    (item, epoch)
                }
            };
            if epoch != self.epoch {
                self.start_epoch(epoch);
            }
            if self.failed {
                // Nothing more is transcribed, but EOS still ends the
                // stream, so that nobody waits for it in vain.
                if let Item::Event(e) = &item {
                    if e.type_() == gst::EventType::Eos {
                        self.output.eos(e.seqnum());
                    }
                }
                continue;
            }
            let result = match item {
                Item::Audio { samples, pts } if self.must_skip(pts) => {
                    let dropped = self.inbox.skip_queued_audio(self.samples_kept_by_a_skip());
                    self.skip(dropped + samples.len() as u64)
                }
                Item::Audio { samples, pts } => self.handle_audio(&samples, pts),
                Item::Event(event) => self.handle_event(event),
                Item::SeekSegment(event) => {
                    // The words still to come are about audio before the
                    // seek position, which a seek leaves behind.
                    self.drop_stream();
                    self.handle_event(event)
                }
                Item::Resume => {
                    self.output.resume();
                    Ok(())
                }
            };
            if let Err(stop) = result {
                self.stop_work(stop);
            }
        }
        self.stream
    }

    fn stop_work(&mut self, stop: Stop) {
        if let Stop::Failed = stop {
            self.failed = true;
        }
        self.drop_stream();
    }

    /// How long to wait for input before letting held text go. Downstream
    /// may be blocked waiting for that text (a muxer whose audio input is
    /// full, say) while the input waits for downstream: without a timeout
    /// that is a deadlock. Live sources deliver a buffer every few tens of
    /// milliseconds, so a longer silence from them means a stall too.
    fn idle_timeout(&self) -> Option<Duration> {
        let holding = self
            .active
            .as_ref()
            .is_some_and(|a| !a.transcript.held_text().is_empty());
        if !(holding || self.owe_gap) || self.failed {
            return None;
        }
        Some(if self.inbox.is_live() {
            LIVE_IDLE_RELEASE
        } else {
            IDLE_RELEASE
        })
    }

    /// The input stalled: hand on held text, then tell downstream where the
    /// text stream stands, so that a muxer can take its other inputs up to
    /// there (which lets the input flow again).
    fn release_held(&mut self) -> Result<(), Stop> {
        let Some(active) = self.active.as_mut() else {
            self.owe_gap = false;
            return Ok(());
        };
        let placed = active.transcript.release_held();
        let base = active.base;
        let handed_on = active.transcript.handed_on();
        for item in placed {
            self.hand_on(base, item)?;
        }
        if self.owe_gap {
            self.owe_gap = false;
            self.output.gap(
                self.output_time(base + handed_on),
                gst::ClockTime::ZERO,
                None,
            );
        }
        Ok(())
    }

    /// After a flush: forget the old stream and its timeline.
    fn start_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
        self.failed = false;
        self.drop_stream();
        self.output.flushed();
    }

    fn drop_stream(&mut self) {
        self.active = None;
        self.stream.reset();
    }

    fn handle_event(&mut self, event: gst::Event) -> Result<(), Stop> {
        match event.view() {
            gst::EventView::Segment(e) => {
                self.finish_stream(true)?;
                match e.segment().downcast_ref::<gst::ClockTime>() {
                    Some(segment) => self.segment = segment.clone(),
                    None => {
                        self.fail(&recognizer::Error::Other {
                            operation: "receiving a segment",
                            reason: format!(
                                "segments in {:?} are not supported",
                                e.segment().format()
                            ),
                        });
                        return Err(Stop::Failed);
                    }
                }
                self.output.event(event);
                self.mark_segment_start();
            }
            gst::EventView::Gap(e) => {
                let (pts, duration) = e.get();
                self.handle_gap(
                    pts.nseconds(),
                    duration.map(gst::ClockTime::nseconds),
                    e.seqnum(),
                )?;
            }
            gst::EventView::SegmentDone(_) => {
                // The segment's audio is complete (a segment seek, often a
                // loop): its last words come out before the event does.
                self.finish_stream(false)?;
                self.output.event(event);
            }
            gst::EventView::Eos(e) => {
                self.finish_stream(false)?;
                self.output.eos(e.seqnum());
            }
            _ => self.output.event(event),
        }
        Ok(())
    }

    /// Upstream says nothing comes for a while: silence for the model if the
    /// hole is short, else the end of the engine stream.
    fn handle_gap(
        &mut self,
        pts: u64,
        duration: Option<u64>,
        seqnum: gst::Seqnum,
    ) -> Result<(), Stop> {
        let end = pts + duration.unwrap_or(0);
        match self.expected_position() {
            Some(expected) if end <= expected + ALIGNMENT_TOLERANCE_NS => Ok(()),
            Some(expected) if end - expected <= MAX_FILLED_HOLE_MS * 1_000_000 => {
                self.feed_silence(end - expected)
            }
            Some(_) => {
                self.finish_stream(true)?;
                self.pass_gap(pts, end, Some(seqnum));
                Ok(())
            }
            None => {
                self.pass_gap(pts, end, Some(seqnum));
                Ok(())
            }
        }
    }

    fn pass_gap(&mut self, start: u64, end: u64, seqnum: Option<gst::Seqnum>) {
        if end > start {
            self.output.gap(
                self.output_time(start),
                gst::ClockTime::from_nseconds(end - start),
                seqnum,
            );
        }
    }

    /// Nothing is said yet where the new segment starts: downstream can
    /// preroll at once instead of waiting for the first word, which comes
    /// a delay and a decode later (long, for a live sink that must preroll
    /// before PLAYING completes).
    fn mark_segment_start(&mut self) {
        if let Some(start) = self.segment.start() {
            self.output.gap(
                self.output_time(start.nseconds()),
                gst::ClockTime::ZERO,
                None,
            );
        }
    }

    /// Where the next sample of the running stream belongs on the timeline.
    fn expected_position(&self) -> Option<u64> {
        let active = self.active.as_ref()?;
        Some(active.base + samples_to_ns(self.stream.samples_received()))
    }

    /// Whether the oldest waiting live audio must go: with overload=skip
    /// when the model fell behind the live edge, with overload=queue when
    /// more than `max-lag` of audio waits (memory stays bounded).
    fn must_skip(&self, pts: Option<gst::ClockTime>) -> bool {
        if !self.inbox.is_live() {
            return false;
        }
        match self.overload {
            Overload::Skip => self.fell_behind(pts),
            Overload::Queue => self.queue_full(),
        }
    }

    /// A new stream writes nothing before the delay and a decode or two
    /// of audio (and at real scale its start-up costs seconds): skipped
    /// sooner, a model slower than real time would be restarted again and
    /// again and never write a word. So it gets that much audio first.
    fn samples_before_a_skip(&self) -> u64 {
        let delay = ns_to_samples(u64::from(self.stream_config.delay_ms) * 1_000_000);
        delay + 2 * self.stream_config.interval_samples() as u64
    }

    /// How much of the newest waiting audio a skip keeps: skip goes on
    /// from the present (one decode interval); queue keeps half of
    /// `max-lag`, losing as few words as a bounded memory allows.
    fn samples_kept_by_a_skip(&self) -> u64 {
        match self.overload {
            Overload::Skip => self.stream_config.interval_samples() as u64,
            Overload::Queue => ns_to_samples(self.max_lag_ns / 2),
        }
    }

    fn queue_full(&self) -> bool {
        self.max_lag_ns > 0 && self.inbox.stats().lag().nseconds() > self.max_lag_ns
    }

    /// With overload=skip, whether the model fell behind the live audio
    /// starting at `pts`: it is more than the latency old on the pipeline's
    /// clock (its words would come too late to be live subtitles), and
    /// more than the latency and a decode interval of audio waits. The
    /// second keeps a worker that a synchronising sink held back (for up
    /// to the latency: that is what the latency is for) from counting as a
    /// slow model; the first keeps audio that comes faster than real time
    /// from ever counting as late.
    fn fell_behind(&self, pts: Option<gst::ClockTime>) -> bool {
        if self.active.is_some() && self.stream.samples_received() < self.samples_before_a_skip() {
            return false;
        }
        let interval_ns = samples_to_ns(self.stream_config.interval_samples() as u64);
        if self.inbox.stats().lag().nseconds() <= self.latency_ns + interval_ns {
            return false;
        }
        let (Some(pts), Some(now)) = (pts, self.output.running_time()) else {
            return false;
        };
        let Some(at) = self.segment.to_running_time(pts) else {
            return false;
        };
        let behind = now.nseconds() > at.nseconds() + self.latency_ns;
        if behind {
            gst::info!(
                crate::engine::LOG_CAT,
                "audio of running time {at} is {} ms old at {now}: skipping",
                (now - at).mseconds()
            );
        }
        behind
    }

    /// The model fell behind live input by more than the latency and the
    /// oldest audio was dropped. What the stream holds goes out as it
    /// stands, and the stream is dropped without a finalize (which would
    /// cost more of the time that is short): the next audio starts a new
    /// one, from the present.
    fn skip(&mut self, samples: u64) -> Result<(), Stop> {
        self.inbox.stats().update(|s| s.skipped_samples += samples);
        let from = self.expected_position();
        self.release_held()?;
        self.drop_stream();
        let (earlier_from, earlier) = self.skipped.take().unwrap_or((from, 0));
        self.skipped = Some((earlier_from, earlier + samples));
        if !self.overloaded {
            self.overloaded = true;
            let warning = self.skip_warning(samples_to_ns(earlier + samples));
            self.output.warning(&warning);
        }
        Ok(())
    }

    fn skip_warning(&self, skipped_ns: u64) -> String {
        let advice = self.stream.slowness_advice();
        match self.overload {
            Overload::Skip => format!(
                "the model fell more than the latency of {} ms behind the live audio: skipping \
                 the oldest audio to stay live ({} ms so far; overload=queue keeps every word \
                 instead). {advice}",
                self.latency_ns / 1_000_000,
                skipped_ns / 1_000_000
            ),
            Overload::Queue => format!(
                "more than max-lag, {} ms, of live audio waits for the model: skipping the \
                 oldest to keep memory bounded ({} ms so far; a larger max-lag keeps more). \
                 {advice}",
                self.max_lag_ns / 1_000_000,
                skipped_ns / 1_000_000
            ),
        }
    }

    /// After a skip, the audio at `pts` is where transcription goes on: a
    /// GAP covers the skipped stretch and an element message names it.
    fn mark_skipped(&mut self, pts: Option<u64>) {
        let Some((from, samples)) = self.skipped.take() else {
            return;
        };
        let skipped_ns = samples_to_ns(samples);
        let end = pts.unwrap_or_else(|| from.unwrap_or(0) + skipped_ns);
        let start = from.unwrap_or(end.saturating_sub(skipped_ns)).min(end);
        self.pass_gap(start, end, None);
        let (start, end) = (self.output_time(start), self.output_time(end));
        let running = |t: gst::ClockTime| {
            self.segment
                .to_running_time(t)
                .map_or(t.nseconds(), gst::ClockTime::nseconds)
        };
        let message = gst::Structure::builder("voxtralrt-skipped")
            .field("start", start.nseconds())
            .field("end", end.nseconds())
            .field("running-time", running(start))
            .field("running-time-end", running(end))
            .field("audio-skipped", skipped_ns)
            .build();
        self.output.message(message);
    }

    fn handle_audio(&mut self, samples: &[f32], pts: Option<gst::ClockTime>) -> Result<(), Stop> {
        let mut samples = samples;
        let pts = pts.map(gst::ClockTime::nseconds);
        self.mark_skipped(pts);
        if let (Some(expected), Some(pts)) = (self.expected_position(), pts) {
            if pts > expected + ALIGNMENT_TOLERANCE_NS {
                let hole = pts - expected;
                if hole <= MAX_FILLED_HOLE_MS * 1_000_000 {
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
        if self.active.is_none() {
            let base =
                pts.unwrap_or_else(|| self.segment.start().map_or(0, gst::ClockTime::nseconds));
            self.begin_stream(base)?;
        }
        // One decode interval at a time, so that the results of a long
        // buffer leave as they come and a restart falls on a decode.
        for slice in samples.chunks(self.stream_config.interval_samples()) {
            self.feed(slice)?;
            self.restart_if_long()?;
        }
        Ok(())
    }

    fn begin_stream(&mut self, base: u64) -> Result<(), Stop> {
        self.stream.reset();
        if let Err(err) = self.stream.begin(self.stream_config) {
            return Err(self.engine_failure(&err));
        }
        self.active = Some(Active {
            base,
            transcript: Transcript::new(self.transcript_config),
            voiced_without_text_ns: 0,
        });
        Ok(())
    }

    fn feed_silence(&mut self, ns: u64) -> Result<(), Stop> {
        let silence = vec![0.0f32; ns_to_samples(ns) as usize];
        for slice in silence.chunks(self.stream_config.interval_samples()) {
            self.feed(slice)?;
        }
        Ok(())
    }

    fn feed(&mut self, samples: &[f32]) -> Result<(), Stop> {
        let started = Instant::now();
        let result = self.stream.feed(samples);
        let spent = started.elapsed();
        self.inbox.stats().update(|s| {
            s.processing += spent;
            s.transcribed_samples += samples.len() as u64;
        });
        self.report_notices();
        match result {
            Ok(updates) => {
                let wrote = updates.iter().any(|u| !u.text.is_empty());
                for update in updates {
                    self.place(&update)?;
                }
                self.check_lag();
                self.watch_for_a_stopped_model(samples, wrote)
            }
            Err(err) => Err(self.engine_failure(&err)),
        }
    }

    /// Reports what the recognizer noticed besides text (a reconnection).
    fn report_notices(&mut self) {
        for notice in self.stream.take_notices() {
            match notice {
                Notice::Reconnected {
                    cause,
                    outage,
                    resent_samples,
                } => {
                    self.inbox.stats().update(|s| {
                        s.reconnects += 1;
                        s.resent_samples += resent_samples;
                    });
                    self.output.warning(&format!(
                        "lost the connection to the server ({cause}); reconnected after {} ms \
                         and sent the {} ms of audio it had not answered for again",
                        outage.as_millis(),
                        samples_to_ns(resent_samples) / 1_000_000
                    ));
                    self.output.message(
                        gst::Structure::builder("voxtralrt-reconnected")
                            .field("outage", outage.as_nanos() as u64)
                            .field("audio-resent", samples_to_ns(resent_samples))
                            .field("cause", cause)
                            .build(),
                    );
                }
                Notice::IgnoredFrames(n) => {
                    self.inbox.stats().update(|s| s.ignored_frames += n);
                }
            }
        }
    }

    /// The library stops decoding a stream for good when the model writes
    /// its end token mid-stream, and does not say so. The engine normally
    /// sees it and goes on at once; where it cannot, a model that has heard
    /// sound for a long while without writing anything has probably stopped:
    /// a new stream costs little (in true silence nothing is lost).
    fn watch_for_a_stopped_model(&mut self, samples: &[f32], wrote: bool) -> Result<(), Stop> {
        if self.stream.sees_model_end() {
            return Ok(());
        }
        let Some(active) = self.active.as_mut() else {
            return Ok(());
        };
        if wrote {
            active.voiced_without_text_ns = 0;
            return Ok(());
        }
        if is_voiced(samples) {
            active.voiced_without_text_ns += samples_to_ns(samples.len() as u64);
        }
        if active.voiced_without_text_ns < STOPPED_MODEL_AFTER_NS {
            return Ok(());
        }
        let next_base = active.base + samples_to_ns(self.stream.samples_received());
        gst::info!(
            crate::engine::LOG_CAT,
            "no text for {} s of sound: the model may have ended its stream, starting a new one",
            STOPPED_MODEL_AFTER_NS / 1_000_000_000
        );
        self.inbox.stats().update(|s| s.stopped_model_restarts += 1);
        self.finish_stream(true)?;
        self.begin_stream(next_base)
    }

    /// Ends the engine stream, handing on every word it still held.
    /// `restart` counts it as a restart rather than the end of the input.
    fn finish_stream(&mut self, restart: bool) -> Result<(), Stop> {
        if self.active.is_none() {
            return Ok(());
        }
        let started = Instant::now();
        let result = self.stream.finalize();
        let spent = started.elapsed();
        self.report_notices();
        self.inbox.stats().update(|s| {
            s.processing += spent;
            s.stream_restarts += u64::from(restart);
        });
        let updates = result.map_err(|err| self.engine_failure(&err))?;
        for update in &updates {
            self.place(update)?;
        }
        self.active = None;
        Ok(())
    }

    /// Starts a new engine stream once this one is long, at a pause if one
    /// comes within the grace period.
    fn restart_if_long(&mut self) -> Result<(), Stop> {
        let Some(active) = &self.active else {
            return Ok(());
        };
        let length = samples_to_ns(self.stream.samples_received());
        let quiet = active.transcript.held_text().is_empty();
        let grace = RESTART_GRACE_NS.min(self.max_stream_ns / 10);
        if length >= self.max_stream_ns && (quiet || length >= self.max_stream_ns + grace) {
            let next_base = active.base + length;
            self.finish_stream(true)?;
            self.begin_stream(next_base)?;
        }
        Ok(())
    }

    fn place(&mut self, update: &TextUpdate) -> Result<(), Stop> {
        let Some(active) = self.active.as_mut() else {
            return Ok(());
        };
        if !update.resumed_from.is_empty() {
            let ended = update.resumed_from.len() as u64;
            self.inbox
                .stats()
                .update(|s| s.model_ended_streams += ended);
        }
        let placed = if update.is_final {
            active
                .transcript
                .finish(&update.text, samples_to_ns(update.audio_end))
        } else {
            active
                .transcript
                .push(&update.text, samples_to_ns(update.heard_until))
        };
        let base = active.base;
        for item in placed {
            self.hand_on(base, item)?;
        }
        Ok(())
    }

    fn output_time(&self, t: u64) -> gst::ClockTime {
        gst::ClockTime::from_nseconds(t + self.lateness_ns)
    }

    fn hand_on(&mut self, base: u64, item: Placed) -> Result<(), Stop> {
        match item {
            Placed::Gap { start, end } => {
                self.output.gap(
                    self.output_time(base + start),
                    gst::ClockTime::from_nseconds(end - start),
                    None,
                );
                Ok(())
            }
            Placed::Cue(cue) => {
                let timed = TimedCue {
                    pts: self.output_time(base + cue.start),
                    duration: gst::ClockTime::from_nseconds(cue.end - cue.start),
                    text: cue.text,
                    segment: self.segment.clone(),
                };
                match self.output.cue(timed) {
                    Ok(_) => {
                        self.owe_gap = true;
                        self.inbox.stats().update(|s| s.cues += 1);
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
    }

    /// An engine error: an abort from a flush or stop is silent, anything
    /// else is reported.
    fn engine_failure(&mut self, err: &recognizer::Error) -> Stop {
        if err.is_abort() || self.inbox.is_stale(self.epoch) {
            return Stop::Stale;
        }
        self.fail(err);
        Stop::Failed
    }

    fn fail(&mut self, err: &recognizer::Error) {
        self.output.error(err);
        self.inbox.set_flow(self.epoch, gst::FlowError::Error);
    }

    /// Warns once when the model falls behind live input by more than the
    /// latency, and again if it recovers and falls behind again.
    fn check_lag(&mut self) {
        // With overload=skip the lag never stays above the latency: the
        // skips are warned about instead.
        if !self.inbox.is_live() || self.overload == Overload::Skip {
            return;
        }
        let lag = self.inbox.stats().lag().nseconds();
        if !self.lag_warned && lag > self.latency_ns {
            self.lag_warned = true;
            self.output.warning(&format!(
                "the model is {} ms behind the audio, more than the latency of {} ms. {}",
                lag / 1_000_000,
                self.latency_ns / 1_000_000,
                self.stream.slowness_advice()
            ));
        } else if self.lag_warned && lag < self.latency_ns / 2 {
            self.lag_warned = false;
        }
    }
}
