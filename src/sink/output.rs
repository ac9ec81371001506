// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Where the sink's words go: `voxtralrt-transcript` messages, the
//! `transcript` signal and the transcript file, cue by cue; and the latch
//! that lets the sink pad's EOS wait for the last of them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use gst::glib;
use gst::prelude::*;

use super::file_format::{FileCue, FileFormat};
use super::own_pad::OwnPad;
use super::{FileFormatChoice, CAT};
use crate::core::report::Reporter;
use crate::core::{Output, TimedCue};

pub(super) fn file_format(choice: FileFormatChoice, location: &Path) -> FileFormat {
    let by_extension = || match location.extension().and_then(|e| e.to_str()) {
        Some("srt") => FileFormat::Srt,
        Some("vtt") => FileFormat::Vtt,
        Some("jsonl") | Some("json") => FileFormat::Jsonl,
        _ => FileFormat::Txt,
    };
    match choice {
        FileFormatChoice::Auto => by_extension(),
        FileFormatChoice::Txt => FileFormat::Txt,
        FileFormatChoice::Srt => FileFormat::Srt,
        FileFormatChoice::Vtt => FileFormat::Vtt,
        FileFormatChoice::Jsonl => FileFormat::Jsonl,
    }
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

/// A transcript file, written cue by cue.
pub(super) struct TranscriptFile {
    file: std::fs::File,
    path: PathBuf,
    format: FileFormat,
    cues: u64,
    /// The speaker of the last cue written.
    speaker: Option<String>,
    /// The last text written did not end its line (txt).
    mid_line: bool,
}

impl TranscriptFile {
    pub(super) fn create(
        path: &Path,
        format: FileFormat,
    ) -> Result<TranscriptFile, gst::ErrorMessage> {
        let open_error = |e: std::io::Error| {
            gst::error_msg!(
                gst::ResourceError::OpenWrite,
                (
                    "Could not open the transcript file {} for writing: {}",
                    path.display(),
                    e
                )
            )
        };
        let mut file = std::fs::File::create(path).map_err(open_error)?;
        file.write_all(format.header().as_bytes())
            .map_err(open_error)?;
        Ok(TranscriptFile {
            file,
            path: path.to_owned(),
            format,
            cues: 0,
            speaker: None,
            mid_line: false,
        })
    }

    /// Writes one cue in one write, so that a file cut at any moment ends
    /// with whole cues (the OS keeps what was written if the process dies).
    fn write(&mut self, cue: &FileCue<'_>, line_cue: bool) -> std::io::Result<()> {
        self.cues += 1;
        let turn = cue.speaker.is_some() && cue.speaker != self.speaker.as_deref();
        let mut text = self.format.cue(self.cues, cue, line_cue, turn);
        if turn && self.mid_line && self.format == FileFormat::Txt {
            // A new speaker starts a line of their own.
            text.insert(0, '\n');
        }
        self.speaker = cue.speaker.map(str::to_owned);
        self.mid_line = !text.ends_with('\n');
        self.file.write_all(text.as_bytes())
    }
}

/// Delivers the worker's cues as messages, signals and file lines.
pub(super) struct SinkOutput {
    pub(super) element: glib::WeakRef<super::VoxtralRtSink>,
    pub(super) file: Option<TranscriptFile>,
    pub(super) line_cues: bool,
    pub(super) post_messages: bool,
    pub(super) report: Reporter,
    pub(super) eos: Arc<EosLatch>,
    /// The request pads' words end here and no sink pad's EOS posts the
    /// element's: this output does.
    pub(super) own_pad: Arc<OwnPad>,
}

impl SinkOutput {
    fn times(cue: &TimedCue) -> FileCue<'_> {
        FileCue {
            text: &cue.text,
            start: cue.stream_time(cue.pts),
            end: cue.stream_time(cue.end()),
            running_start: cue.running_time(cue.pts),
            running_end: cue.running_time(cue.end()),
            speaker: cue.speaker.as_deref(),
        }
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
        if let Some(file) = &mut self.file {
            if let Err(e) = file.write(&times, self.line_cues) {
                gst::element_error!(
                    element,
                    gst::ResourceError::Write,
                    (
                        "Could not write to the transcript file {}: {}",
                        file.path.display(),
                        e
                    )
                );
                return Err(gst::FlowError::Error);
            }
        }
        Ok(gst::FlowSuccess::Ok)
    }

    fn gap(
        &mut self,
        _pts: gst::ClockTime,
        _duration: gst::ClockTime,
        _seqnum: Option<gst::Seqnum>,
    ) {
    }

    fn event(&mut self, _event: gst::Event) {}

    fn eos(&mut self, seqnum: gst::Seqnum, _end: Option<gst::ClockTime>) {
        self.eos.finish(true);
        if let Some(element) = self.element.upgrade() {
            self.own_pad.end(element.upcast_ref(), seqnum);
        }
    }

    fn failed(&mut self) {
        self.eos.finish(false);
    }
}
