// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Where the sink's words go: `voxtralrt-transcript` messages, the
//! `transcript` signal and the transcript file, cue by cue; and the latch
//! that lets the sink pad's EOS wait for the last of them.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use gst::glib;
use gst::prelude::*;

use super::own_pad::OwnPad;
use super::CAT;
use crate::core::report::Reporter;
use crate::core::styled::SharedCounts;
use crate::core::{Output, TimedCue};
use crate::subtitles::file::{FileChoice, FileKind, FileOptions, TranscriptFile};
use crate::subtitles::records::Record;
use crate::subtitles::Style;

/// Creates the transcript file at `path`: `choice`'s format (auto: by the
/// extension), cues made of words in `style`.
pub(super) fn create_file(
    path: &Path,
    choice: FileChoice,
    style: Style,
    options: &FileOptions,
) -> Result<TranscriptFile, gst::ErrorMessage> {
    TranscriptFile::create(path, FileKind::of(choice, path), style, options).map_err(|e| {
        gst::error_msg!(
            gst::ResourceError::OpenWrite,
            (
                "Could not open the transcript file {} for writing: {}",
                path.display(),
                e
            )
        )
    })
}

/// Lets EOS wait until the worker has handed on the last cue.
#[derive(Debug, Default)]
pub(super) struct EosLatch {
    /// `None` while waiting; `Some(true)` done, `Some(false)` given up.
    state: Mutex<Option<bool>>,
    cond: Condvar,
}

impl EosLatch {
    pub(super) fn arm(&self) {
        *self.state.lock().unwrap() = None;
    }

    pub(super) fn finish(&self, done: bool) {
        *self.state.lock().unwrap() = Some(done);
        self.cond.notify_all();
    }

    pub(super) fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap();
        loop {
            if let Some(done) = *state {
                return done;
            }
            state = self.cond.wait(state).unwrap();
        }
    }
}

/// Delivers the worker's cues as messages, signals and file lines.
pub(super) struct SinkOutput {
    pub(super) element: glib::WeakRef<super::VoxtralRtSink>,
    pub(super) file: Option<TranscriptFile>,
    /// The worker's cues are lines or cues of a style, not words.
    pub(super) line_cues: bool,
    /// The counts of the file's cues, for `stats`.
    pub(super) file_counts: SharedCounts,
    pub(super) post_messages: bool,
    pub(super) report: Reporter,
    pub(super) eos: Arc<EosLatch>,
    /// The request pads' words end here and no sink pad's EOS posts the
    /// element's: this output does.
    pub(super) own_pad: Arc<OwnPad>,
    /// The segment of the last cue.
    pub(super) segment: Option<gst::FormattedSegment<gst::ClockTime>>,
}

impl SinkOutput {
    fn times(cue: &TimedCue) -> Record<'_> {
        Record {
            text: &cue.text,
            start: cue.stream_time(cue.pts),
            end: cue.stream_time(cue.end()),
            running_start: cue.running_time(cue.pts),
            running_end: cue.running_time(cue.end()),
            speaker: cue.speaker.as_deref(),
        }
    }
}

impl SinkOutput {
    /// `t` (a buffer time of the last cue's segment) as stream time.
    fn stream_time(&self, t: gst::ClockTime) -> u64 {
        self.segment
            .as_ref()
            .and_then(|s| s.to_stream_time(t))
            .map_or(t.nseconds(), |s| s.nseconds())
    }

    /// Does `write` to the file, if there is one; a failure is an ERROR.
    fn write_file(
        &mut self,
        write: impl FnOnce(&mut TranscriptFile) -> std::io::Result<()>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let Some(file) = &mut self.file else {
            return Ok(gst::FlowSuccess::Ok);
        };
        let result = write(file);
        if let Some(counts) = file.counts() {
            let mut shared = self.file_counts.lock().unwrap();
            // With output=lines the cues come made (their counts too).
            *shared = if self.line_cues {
                crate::subtitles::Counts {
                    chars_replaced: counts.chars_replaced,
                    ..*shared
                }
            } else {
                counts
            };
        }
        if let Err(e) = result {
            if let Some(element) = self.element.upgrade() {
                gst::element_error!(
                    element,
                    gst::ResourceError::Write,
                    (
                        "Could not write to the transcript file {}: {}",
                        file.path().display(),
                        e
                    )
                );
            }
            return Err(gst::FlowError::Error);
        }
        Ok(gst::FlowSuccess::Ok)
    }
}

impl Output for SinkOutput {
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError> {
        let Some(element) = self.element.upgrade() else {
            return Err(gst::FlowError::Flushing);
        };
        let times = Self::times(&cue);
        gst::debug!(CAT, obj = element, "cue {:?}", times);
        if self.post_messages {
            self.report.message(cue.transcript_message());
        }
        element.emit_by_name::<()>(
            "transcript",
            &[
                &times.text,
                &times.running_start,
                &cue.duration.nseconds(),
                &times.speaker,
            ],
        );
        self.segment = Some(cue.segment.clone());
        let line_cues = self.line_cues;
        self.write_file(|file| file.take(&times, line_cues))
    }

    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, _seqnum: Option<gst::Seqnum>) {
        // A file waits for no muxer: a stall (a GAP of no length) lets no
        // cue go early.
        if !duration.is_zero() {
            let until = self.stream_time(pts + duration);
            let _ = self.write_file(|file| file.silence_until(until));
        }
    }

    fn event(&mut self, event: gst::Event) {
        if event.type_() == gst::EventType::Segment {
            let _ = self.write_file(|file| file.finish(None));
        }
    }

    fn flushed(&mut self) {
        let _ = self.write_file(|file| file.finish(None));
    }

    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>) {
        let until = end.map(|end| self.stream_time(end));
        let _ = self.write_file(|file| file.finish(until));
        self.eos.finish(true);
        if let Some(element) = self.element.upgrade() {
            self.own_pad.end(element.upcast_ref(), seqnum);
        }
    }

    fn failed(&mut self) {
        // What the style holds is written: no word is lost.
        let _ = self.write_file(|file| file.finish(None));
        self.eos.finish(false);
    }
}
