// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The transcription core both elements share.
//!
//! The streaming thread hands audio and serialized events to an inbox; a
//! worker thread owns the engine stream, feeds it, places the text on the
//! input's timeline and hands timed cues, gaps and events, in order, to the
//! element's [`Output`]. The model never runs on the upstream thread, and
//! FLUSH_START or a state change stops a running decode through the engine's
//! abort handle.

mod alarm;
mod cadence;
mod gate;
mod inbox;
pub mod input;
pub(crate) mod lag;
pub mod lifecycle;
pub mod merge;
mod overload;
pub mod report;
mod speech;
pub(crate) mod stats;
mod stream_watch;
pub mod styled;
mod timeline;
mod voice;
mod watchdog;
mod worker;

use std::sync::Arc;
use std::thread::JoinHandle;

use crate::recognizer::Recognizer;
use crate::settings::{EngineChoice, Settings};

pub use stats::{param_spec as stats_param_spec, Stats};

use inbox::{Inbox, Item};

/// A cue placed on the input's timeline.
#[derive(Debug, Clone)]
pub struct TimedCue {
    pub text: String,
    /// Start, in the input segment's time format, with `lateness` added.
    pub pts: gst::ClockTime,
    pub duration: gst::ClockTime,
    /// The segment the times are in.
    pub segment: gst::FormattedSegment<gst::ClockTime>,
    /// Who said it, when a speaker source is in use.
    pub speaker: Option<String>,
}

/// `t` (a buffer time of `segment`) as running time; times outside the
/// segment are given as they are rather than dropped.
pub(crate) fn running_ns(
    segment: &gst::FormattedSegment<gst::ClockTime>,
    t: gst::ClockTime,
) -> u64 {
    segment
        .to_running_time(t)
        .map_or(t.nseconds(), gst::ClockTime::nseconds)
}

/// The structure name of the element message posted per cue (always by
/// voxtralrtsink, with `post-messages` by voxtralrttranscriber).
pub const TRANSCRIPT_MESSAGE: &str = "voxtralrt-transcript";

/// The element message of the caption alarm (`caption-alarm`).
pub const CAPTION_ALARM_MESSAGE: &str = "voxtralrt-caption-alarm";

impl TimedCue {
    pub fn end(&self) -> gst::ClockTime {
        self.pts + self.duration
    }

    /// `t` (a buffer time of this cue's segment) as running time; times
    /// outside the segment are given as they are rather than dropped.
    pub fn running_time(&self, t: gst::ClockTime) -> u64 {
        running_ns(&self.segment, t)
    }

    /// `t` as stream time (the media's own timeline: a file's position).
    pub fn stream_time(&self, t: gst::ClockTime) -> u64 {
        self.segment
            .to_stream_time(t)
            .map_or(t.nseconds(), |s| s.nseconds())
    }

    /// The `voxtralrt-transcript` message's structure: the text with its
    /// buffer, running and stream times, so an application can place it
    /// against whichever clock it shows.
    pub fn transcript_message(&self) -> gst::Structure {
        let end = self.end();
        gst::Structure::builder(TRANSCRIPT_MESSAGE)
            .field("text", &self.text)
            .field("pts", self.pts.nseconds())
            .field("duration", self.duration.nseconds())
            .field("running-time", self.running_time(self.pts))
            .field("running-time-end", self.running_time(end))
            .field("stream-time", self.stream_time(self.pts))
            .field("stream-time-end", self.stream_time(end))
            .field("is-final", true)
            .field_if_some("speaker", self.speaker.as_deref())
            .build()
    }
}

/// A `voxtralrt/speaker` event as the worker takes it: a name the outputs
/// cannot carry (empty, over 32 characters, a control character) becomes
/// the pad's name, with a WARNING that says why. Other events pass as
/// they are.
pub fn check_speaker_event(event: gst::Event, pad: &gst::Pad) -> gst::Event {
    use crate::speakers::{check_name, SPEAKER_EVENT};
    use gst::prelude::*;
    let gst::EventView::CustomDownstream(e) = event.view() else {
        return event;
    };
    let Some(s) = e.structure().filter(|s| s.name() == SPEAKER_EVENT) else {
        return event;
    };
    let given = s.get::<String>("speaker").unwrap_or_default();
    let fallback = pad.name().to_string();
    let name = check_name(&given).unwrap_or_else(|why| {
        if let Some(element) = pad.parent_element() {
            report::Reporter::new(&element).warning(
                report::Cause::Settings,
                &format!(
                    "speaker {given:?} on pad {fallback}: {why}; the words are given to \
                     {fallback:?} instead"
                ),
            );
        }
        fallback
    });
    let checked = gst::Structure::builder(SPEAKER_EVENT)
        .field("speaker", &name)
        .build();
    gst::event::CustomDownstream::builder(checked)
        .seqnum(event.seqnum())
        .build()
}

/// Where the worker delivers its results. Called on the worker thread only.
pub trait Output: Send + 'static {
    /// A word or line.
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError>;
    /// Nothing is said from `pts` for `duration`. `seqnum` is that of the
    /// upstream GAP this one answers, if any.
    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, seqnum: Option<gst::Seqnum>);
    /// A serialized event from upstream, in order with the cues.
    fn event(&mut self, event: gst::Event);
    /// Every cue has been delivered; end of stream. `seqnum` is the
    /// received EOS's, which the outgoing one must carry; `end` is where
    /// the audio ended on the output timeline, if known.
    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>);
    /// A flush dropped everything before: what comes next does not follow
    /// on from what went out.
    fn flushed(&mut self) {}
    /// The pipeline went to PLAYING: a live sink waits for something to
    /// preroll on before it completes that state change.
    fn resume(&mut self) {}
    /// The recognizer failed (the ERROR is posted): nothing more comes
    /// until a flush.
    fn failed(&mut self) {}
}

/// The model a core runs on: loaded, or still coming (a download).
pub enum ModelSource {
    Loaded(Box<dyn Recognizer>),
    /// The model arrives on this channel; `Err` means it could not be had
    /// (the sender posted the ERROR).
    Coming(std::sync::mpsc::Receiver<Result<Box<dyn Recognizer>, ()>>),
}

/// Runs the transcription of one element between READY->PAUSED and
/// PAUSED->READY.
pub struct Core {
    inbox: Arc<Inbox>,
    worker: Option<JoinHandle<Option<Box<dyn Recognizer>>>>,
}

impl Core {
    /// Starts the worker on a model with a snapshot of the settings. A
    /// model still coming is waited for on the worker thread, so the state
    /// change does not wait and a stop ends the wait.
    pub fn start(
        model: ModelSource,
        settings: &Settings,
        output: Box<dyn Output>,
        report: report::Reporter,
    ) -> Core {
        let abort = match &model {
            ModelSource::Loaded(stream) => Some(stream.abort_handle()),
            ModelSource::Coming(_) => None,
        };
        let inbox = Arc::new(Inbox::new(abort, settings));
        inbox.stats().update(|s| {
            s.engine = match settings.engine {
                EngineChoice::Local => "local",
                EngineChoice::Vllm => "vllm",
            };
            s.started_at = Some(std::time::Instant::now());
        });
        let worker_inbox = inbox.clone();
        let settings = settings.clone();
        let handle = std::thread::Builder::new()
            .name("voxtralrt-worker".into())
            .spawn(move || {
                let stream = wait_for_model(model, &worker_inbox)?;
                worker_inbox.set_abort(stream.abort_handle());
                worker_inbox.stats().loaded(&stream.backend_name());
                worker_inbox.stats().update(|s| {
                    s.threads = stream.threads();
                    s.model_use = stream.model_use();
                    s.decode_interval_ms = settings.decode_interval_ms;
                });
                Some(worker::Worker::new(stream, &settings, output, report, worker_inbox).run())
            })
            .expect("spawning the transcription worker");
        Core {
            inbox,
            worker: Some(handle),
        }
    }

    /// Stops the worker, dropping queued audio, and gives the stream back
    /// so that its model can be used again.
    pub fn stop(mut self) -> Option<Box<dyn Recognizer>> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Option<Box<dyn Recognizer>> {
        self.inbox.stop();
        let mut stream = self.worker.take()?.join().ok()??;
        stream.reset();
        Some(stream)
    }

    /// Queues a buffer's audio (f32 16 kHz mono). For
    /// non-live input this waits while enough audio is queued, so a slow
    /// model slows the pipeline instead of dropping audio.
    pub fn push_audio(&self, audio: input::Audio) -> Result<gst::FlowSuccess, gst::FlowError> {
        if audio.samples.is_empty() {
            return Ok(gst::FlowSuccess::Ok);
        }
        self.inbox.push_audio(audio.samples, audio.pts, audio.live)
    }

    /// Queues a serialized event (SEGMENT, GAP, EOS, tags, ...).
    pub fn push_event(&self, event: gst::Event) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.inbox.push(Item::Event(event))
    }

    /// Tells the worker that the pipeline went to PLAYING (in order with
    /// the data).
    pub fn resume(&self) {
        let _ = self.inbox.push(Item::Resume);
    }

    /// A non-flushing seek with this seqnum went upstream: the SEGMENT it
    /// brings replaces the audio of the old segment still queued.
    pub fn expect_seek_segment(&self, seqnum: gst::Seqnum) {
        self.inbox.expect_seek_segment(seqnum);
    }

    /// Upstream refused the non-flushing seek `seqnum`: no SEGMENT comes.
    pub fn seek_refused(&self, seqnum: gst::Seqnum) {
        self.inbox.seek_refused(seqnum);
    }

    /// Drops everything queued and stops the running decode.
    pub fn flush_start(&self) {
        self.inbox.flush_start();
    }

    /// Ready for data again; the next audio starts a new engine stream.
    pub fn flush_stop(&self) {
        self.inbox.flush_stop();
    }

    /// Counts samples that were NaN or infinite and replaced by silence.
    pub fn count_sanitized(&self, n: usize) {
        self.inbox.stats().add_sanitized(n as u64);
    }

    pub fn stats(&self) -> Stats {
        self.inbox.stats().snapshot()
    }
}

/// The model, once it is there; `None` if the core stops first or the
/// model cannot be had (then the input is refused with an error flow).
fn wait_for_model(model: ModelSource, inbox: &Inbox) -> Option<Box<dyn Recognizer>> {
    let coming = match model {
        ModelSource::Loaded(stream) => return Some(stream),
        ModelSource::Coming(coming) => coming,
    };
    loop {
        match coming.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(Ok(stream)) => return Some(stream),
            Ok(Err(())) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                inbox.refuse_for_good();
                return None;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if inbox.is_stopping() => return None,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.shut_down();
    }
}
