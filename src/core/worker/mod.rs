// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The worker thread: takes the inbox's items in order and routes them;
//! `feeding.rs` runs the model's streams and places their text.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::recognizer::{self, Recognizer, StreamConfig};
use crate::settings::{Settings, MAX_FILLED_HOLE};
use crate::speakers::SpeakerTrack;
use crate::transcript::{Transcript, TranscriptConfig};
use crate::voxtral::samples_to_ns;
use crate::wording::SharedRules;

mod feeding;
mod speakers;
mod watch;

use super::alarm::Alarm;
use super::cadence::{Cadence, Change};
use super::gate::Gate;
use super::inbox::{Inbox, Item, Next, Queued};
use super::lag::Arrivals;
use super::overload::{OverloadPolicy, Situation};
use super::report::{Cause, Reporter};
use super::stream_watch::StreamWatch;
use super::timeline::Timeline;
use super::voice::{Frame, Voice};
use super::watchdog::Watchdog;
use super::Output;

/// Timestamps within this of the expected position count as continuous
/// (the usual audio sink tolerance).
const ALIGNMENT_TOLERANCE_NS: u64 = 40_000_000;
/// Non-live input that stops coming for this long is blocked by downstream.
const IDLE_RELEASE: Duration = Duration::from_millis(50);
/// Live input that stops coming for this long is blocked, or stalled.
const LIVE_IDLE_RELEASE: Duration = Duration::from_millis(300);

/// The model stream now running and where its audio sits on the timeline.
struct Active {
    /// Time (input segment format) of the stream's first sample.
    base: u64,
    transcript: Transcript,
    /// 80 ms frames the model has decoded in this stream.
    steps: u64,
}

impl Active {
    /// The frames the model decoded for `update` that it had not before.
    fn count_steps(&mut self, update: &crate::recognizer::TextUpdate) -> u64 {
        let decoded = update.heard_until / crate::voxtral::FRAME_SAMPLES;
        let new = decoded.saturating_sub(self.steps);
        self.steps = self.steps.max(decoded);
        new
    }
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
    /// The dictionary and profanity rules (the element's, live).
    rules: SharedRules,
    output: Box<dyn Output>,
    report: Reporter,
    inbox: Arc<Inbox>,
    timeline: Timeline,
    overload: OverloadPolicy,
    /// The decode interval, stretched while live input outruns the model.
    cadence: Cadence,
    watch: StreamWatch,
    /// Restarts a model that writes nothing while people talk.
    watchdog: Option<Watchdog>,
    /// Tells when no word leaves while people talk (`caption-alarm`).
    alarm: Option<Alarm>,
    /// When the input's audio arrived, for each word's lag.
    arrivals: Arrivals,
    latency_ns: u64,
    /// speech-only: the model runs while someone speaks.
    gate: Option<Gate>,
    /// The voice detector the watchdog and the gate judge by.
    voice: Option<Voice>,
    /// While the gate is closed: how far the text stream was advanced.
    gated_to: Option<u64>,
    /// While the gate holds audio back: when it began to (wall clock).
    held_since: Option<Instant>,
    active: Option<Active>,
    epoch: u64,
    /// A failure ended this epoch's work; wait for a flush.
    failed: bool,
    /// The last thing handed on was a cue: downstream has nothing that
    /// tells it how far the text stream has come past its start.
    owe_gap: bool,
    /// Who speaks when (from `voxtralrt/speaker` events).
    speakers: SpeakerTrack,
    /// Where the last audio received ends (input time).
    audio_end: Option<u64>,
}

impl Worker {
    pub(super) fn new(
        stream: Box<dyn Recognizer>,
        settings: &Settings,
        output: Box<dyn Output>,
        report: Reporter,
        inbox: Arc<Inbox>,
    ) -> Worker {
        Worker {
            stream,
            stream_config: settings.stream_config(),
            transcript_config: settings.transcript_config(),
            rules: settings.rules.clone(),
            output,
            report,
            inbox,
            timeline: Timeline::new(settings.lateness()),
            overload: OverloadPolicy::new(settings),
            cadence: Cadence::new(settings),
            watch: StreamWatch::new(settings),
            watchdog: Watchdog::new(settings.stall_timeout()),
            alarm: Alarm::new(settings.caption_alarm()),
            arrivals: Arrivals::default(),
            latency_ns: settings.latency().nseconds(),
            gate: settings
                .speech_gate()
                .map(|hangover| Gate::new(hangover, settings.delay())),
            voice: (settings.speech_only
                || !settings.stall_timeout().is_zero()
                || !settings.caption_alarm().is_zero())
            .then(Voice::new),
            gated_to: None,
            held_since: None,
            active: None,
            epoch: 0,
            failed: false,
            owe_gap: false,
            speakers: SpeakerTrack::default(),
            audio_end: None,
        }
    }

    pub(super) fn run(mut self) -> Box<dyn Recognizer> {
        self.model_call(true);
        let prepared = self.stream.prepare();
        self.model_call(false);
        if let Err(err) = prepared {
            let stop = self.engine_failure(&err);
            self.stop_work(stop);
        }
        self.report_notices();
        loop {
            self.time_held_audio();
            let (item, epoch) = match self.inbox.next(self.idle_timeout()) {
                Next::Stopped => break,
                Next::Idle => {
                    if let Err(stop) = self.on_idle() {
                        self.stop_work(stop);
                    }
                    continue;
                }
                Next::Item(Queued {
                    item,
                    epoch,
                    waited,
                }) => {
                    if waited {
                        self.overload.caught_up();
                    }
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
                        self.output.eos(e.seqnum(), None);
                    }
                }
                continue;
            }
            let result = match item {
                Item::Audio { samples, pts, .. } if self.must_skip(pts) => {
                    let kept = self.overload.samples_kept_by_a_skip();
                    let dropped = self.inbox.skip_queued_audio(kept);
                    self.skip(dropped + samples.len() as u64)
                }
                Item::Audio {
                    samples,
                    pts,
                    arrived,
                } => {
                    self.audio_arrived(pts, samples.len(), arrived);
                    self.handle_audio(&samples, pts)
                }
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
        if self.failed {
            return None;
        }
        let holding = self
            .active
            .as_ref()
            .is_some_and(|a| !a.transcript.held_text().is_empty());
        let text_wait = (holding || self.owe_gap).then(|| self.idle_release());
        let now = Instant::now();
        let held_wait = self
            .held_audio_due()
            .map(|due| due.saturating_duration_since(now));
        text_wait.into_iter().chain(held_wait).min()
    }

    fn idle_release(&self) -> Duration {
        if self.inbox.is_live() {
            LIVE_IDLE_RELEASE
        } else {
            IDLE_RELEASE
        }
    }

    /// The input stopped coming for a while: held text goes out, and, once
    /// the input has fallen behind real time, what the gate held back.
    fn on_idle(&mut self) -> Result<(), Stop> {
        // The input may wait for the text (a muxer): the model takes what
        // the gate held back, and gets ahead.
        if self
            .held_audio_due()
            .is_some_and(|due| Instant::now() >= due)
        {
            self.feed_held()?;
        }
        self.release_held()
    }

    /// Starts the wall clock when the gate begins to hold audio back, and
    /// stops it once nothing is held.
    fn time_held_audio(&mut self) {
        if self.gate.as_ref().map_or(0, Gate::held_samples) == 0 {
            self.held_since = None;
        } else {
            self.held_since.get_or_insert_with(Instant::now);
        }
    }

    /// When the input counts as stalled while the gate holds audio back.
    /// Input no slower than real time brings more before then, so what the
    /// model takes depends on the audio alone, not on how fast it comes
    /// (after the idle wait alone, a file paced in real time had every
    /// hangover decoded whole, and a pause just longer than the hangover
    /// left the next stream 80 ms of pre-roll).
    fn held_audio_due(&self) -> Option<Instant> {
        let since = self.held_since?;
        let held = self.gate.as_ref().map_or(0, Gate::held_samples);
        Some(since + Duration::from_nanos(samples_to_ns(held)) + self.idle_release())
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
            let at = self.timeline.output_time(base + handed_on);
            self.output.gap(at, gst::ClockTime::ZERO, None);
        }
        Ok(())
    }

    /// After a flush: forget the old stream and its timeline.
    fn start_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
        self.failed = false;
        self.drop_stream();
        self.forget_heard();
        self.restart_watch("a flush");
        self.output.flushed();
    }

    /// Nothing heard before a flush, a new segment or a skip counts for the
    /// voice detector or the gate.
    fn forget_heard(&mut self) {
        if let Some(voice) = &mut self.voice {
            voice.restart();
        }
        if let Some(gate) = &mut self.gate {
            gate.reset();
        }
        self.gated_to = None;
    }

    /// The voice detector's frames for `samples` (none without one).
    fn hear(&mut self, samples: &[f32]) -> Vec<Frame> {
        self.voice
            .as_mut()
            .map_or_else(Vec::new, |voice| voice.hear(samples))
    }

    fn drop_stream(&mut self) {
        self.active = None;
        self.stream.reset();
    }

    fn handle_event(&mut self, event: gst::Event) -> Result<(), Stop> {
        match event.view() {
            gst::EventView::Segment(e) => {
                self.finish_stream(true)?;
                let Some(segment) = e.segment().downcast_ref::<gst::ClockTime>() else {
                    self.fail(&recognizer::Error::Other {
                        operation: "receiving a segment",
                        reason: format!("segments in {:?} are not supported", e.segment().format()),
                    });
                    return Err(Stop::Failed);
                };
                self.timeline.segment = segment.clone();
                self.forget_heard();
                self.restart_watch("a new segment");
                self.output.event(event);
                self.mark_segment_start();
            }
            gst::EventView::Gap(e) => {
                let (pts, duration) = e.get();
                let end = pts.nseconds() + duration.map_or(0, gst::ClockTime::nseconds);
                self.handle_gap(pts.nseconds(), end, e.seqnum())?;
            }
            gst::EventView::SegmentDone(_) => {
                // The segment's audio is complete (a segment seek, often a
                // loop): its last words come out before the event does.
                self.finish_stream(false)?;
                self.output.event(event);
            }
            gst::EventView::Eos(e) => {
                let end = self.input_position().or_else(|| self.gated_audio_end());
                self.finish_stream(false)?;
                let end = end.map(|t| self.timeline.output_time(t));
                self.output.eos(e.seqnum(), end);
            }
            _ => match speakers::speaker_of(&event) {
                Some(speaker) => self.change_speaker(speaker),
                None => self.output.event(event),
            },
        }
        Ok(())
    }

    /// Upstream says nothing comes from `pts` to `end`: silence for the
    /// model if the hole is short, else the end of the model's stream.
    fn handle_gap(&mut self, pts: u64, end: u64, seqnum: gst::Seqnum) -> Result<(), Stop> {
        self.feed_held()?;
        match self.expected_position() {
            Some(expected) if end <= expected + ALIGNMENT_TOLERANCE_NS => Ok(()),
            Some(expected) if end - expected <= MAX_FILLED_HOLE.nseconds() => {
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
            let duration = gst::ClockTime::from_nseconds(end - start);
            self.output
                .gap(self.timeline.output_time(start), duration, seqnum);
        }
    }

    /// Nothing is said yet where the new segment starts: downstream can
    /// preroll at once instead of waiting for the first word, which comes
    /// a delay and a decode later (long, for a live sink that must preroll
    /// before PLAYING completes).
    fn mark_segment_start(&mut self) {
        if let Some(start) = self.timeline.segment.start() {
            let at = self.timeline.output_time(start.nseconds());
            self.output.gap(at, gst::ClockTime::ZERO, None);
        }
    }

    /// Where the next sample of the running stream belongs on the timeline.
    fn expected_position(&self) -> Option<u64> {
        let active = self.active.as_ref()?;
        Some(active.base + samples_to_ns(self.stream.samples_received()))
    }

    /// Where the input's audio ends while a stream runs: what the model
    /// took and what the gate holds back.
    fn input_position(&self) -> Option<u64> {
        let held = self.gate.as_ref().map_or(0, Gate::held_samples);
        Some(self.expected_position()? + samples_to_ns(held))
    }

    /// Asks the overload policy whether the live audio at `pts`, the
    /// oldest waiting, must go.
    fn must_skip(&self, pts: Option<gst::ClockTime>) -> bool {
        let situation = Situation {
            live: self.inbox.is_live(),
            lag_ns: self.inbox.stats().lag().nseconds(),
            stream_samples: self.active.as_ref().map(|_| self.stream.samples_received()),
            stretched_out: self.cadence.at_bound(),
            interval_ns: u64::from(self.cadence.interval_ms()) * 1_000_000,
        };
        let age = || {
            let (pts, now) = pts.zip(self.report.running_time())?;
            self.timeline.age(pts, now)
        };
        let skip = self.overload.must_skip(&situation, age);
        if skip {
            gst::info!(
                crate::voxtral::LOG_CAT,
                "{} ms of live audio waiting, the oldest older than the latency: skipping",
                situation.lag_ns / 1_000_000
            );
        }
        skip
    }

    /// The model fell behind live input and the oldest audio was dropped.
    /// What the stream holds goes out as it stands, and the stream is
    /// dropped without a finalize (which would cost more of the time that
    /// is short): the next audio starts a new one, from the present.
    fn skip(&mut self, samples: u64) -> Result<(), Stop> {
        // Audio the gate held back goes with the skipped audio after it.
        let held = self.gate.as_ref().map_or(0, Gate::held_samples);
        let samples = samples + held;
        self.inbox.stats().update(|s| s.skipped_samples += samples);
        let from = self.expected_position();
        self.release_held()?;
        self.drop_stream();
        self.forget_heard();
        let advice = self.stream.slowness_advice();
        if let Some(warning) = self.overload.record_skip(from, samples, &advice) {
            self.report.warning(Cause::Overload, &warning);
        }
        // The next stream starts where a restart costs least.
        if let Some(change) = self.cadence.back_to_base() {
            self.pace(change);
        }
        Ok(())
    }

    /// After a skip, the audio at `pts` is where transcription goes on: a
    /// GAP covers the skipped stretch and an element message names it.
    fn mark_skipped(&mut self, pts: Option<u64>) {
        if let Some(skipped) = self.overload.take_skipped(pts) {
            self.pass_gap(skipped.start, skipped.end, None);
            self.report.message(self.timeline.skipped_message(&skipped));
        }
    }

    /// A recognizer error: an abort from a flush or stop is silent,
    /// anything else is reported.
    fn engine_failure(&mut self, err: &recognizer::Error) -> Stop {
        if err.is_abort() || self.inbox.is_stale(self.epoch) {
            return Stop::Stale;
        }
        self.fail(err);
        Stop::Failed
    }

    fn fail(&mut self, err: &recognizer::Error) {
        self.report.error(err);
        self.output.failed();
        self.inbox.set_flow(self.epoch, gst::FlowError::Error);
    }
}
