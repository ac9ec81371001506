// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Delivers the worker's results on the src pad: caps, text buffers, GAPs
//! and events (the caption frames come from `caption_output.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use gst::glib;
use gst::prelude::*;

use crate::caption;
use crate::core::report::Reporter;
use crate::core::{Output, TimedCue};
use crate::settings::Settings;
use crate::transcript::Word;
use crate::translation::{UnitBuilder, UnitLimits};

use super::caps::{choose_caps, offered_caps};
use super::caption_output::{CaptionTrack, OutputLosses, PackedFrame};
use super::captions::CaptionSettings;
use super::translate::{Item, Taps};
use super::CAT;

/// Delivers the worker's results on the src pad.
pub(super) struct SrcOutput {
    pub(super) element: glib::WeakRef<super::VoxtralRtTranscriber>,
    pub(super) srcpad: gst::Pad,
    pub(super) language_code: Option<String>,
    pub(super) caps_sent: bool,
    /// Text (one buffer per word or line) until downstream asks for
    /// captions (one buffer per video frame).
    pub(super) captions: CaptionTrack,
    /// Where the current segment starts: the origin of the frame grid.
    pub(super) segment_start: gst::ClockTime,
    pub(super) post_messages: Arc<AtomicBool>,
    pub(super) report: Reporter,
    /// The next buffer starts a new run of data (first after a SEGMENT or
    /// a flush) and must say so.
    pub(super) discont: bool,
    /// Where what went out last ends, on the output timeline.
    pub(super) position: Option<gst::ClockTime>,
    /// The text goes into an MP4/QuickTime muxer (see `gap`); `None`:
    /// not looked up since the last negotiation.
    pub(super) iso_muxer: Option<bool>,
    /// The speaker of the last word sent, when a speaker source is in use.
    pub(super) speaker: Option<String>,
    /// The translate pads' threads: they get everything, and are never
    /// waited for.
    pub(super) translations: Taps,
    /// The utterance being said: `rstranscribe/final-transcript` ends it.
    pub(super) utterance: UnitBuilder,
}

impl SrcOutput {
    pub(super) fn new(
        element: &super::VoxtralRtTranscriber,
        srcpad: &gst::Pad,
        settings: &Settings,
        captions: CaptionSettings,
        output_losses: Arc<OutputLosses>,
        post_messages: Arc<AtomicBool>,
        translations: Taps,
    ) -> SrcOutput {
        let report = Reporter::new(element.upcast_ref());
        SrcOutput {
            element: element.downgrade(),
            srcpad: srcpad.clone(),
            language_code: settings.language_code.clone(),
            caps_sent: false,
            captions: CaptionTrack::new(captions, output_losses, report.clone()),
            segment_start: gst::ClockTime::ZERO,
            post_messages,
            report,
            discont: true,
            position: None,
            iso_muxer: None,
            speaker: None,
            translations,
            utterance: UnitBuilder::new(UnitLimits::utterances()),
        }
    }

    pub(super) fn element(&self) -> Option<super::VoxtralRtTranscriber> {
        self.element.upgrade()
    }

    pub(super) fn ensure_caps(&mut self) {
        if !self.caps_sent {
            self.caps_sent = true;
            self.negotiate();
        }
    }

    /// Picks the output from what downstream takes (our template order
    /// first: text unless downstream wants captions) and sends its caps
    /// if they changed.
    pub(super) fn negotiate(&mut self) {
        self.iso_muxer = None;
        let template = offered_caps(
            &self.srcpad.pad_template_caps(),
            self.captions.settings().channel.into(),
        );
        let Some(caps) = choose_caps(&self.srcpad.peer_query_caps(Some(&template))) else {
            self.explain_refused_caps(&template);
            return;
        };
        if self.srcpad.current_caps().as_ref() == Some(&caps) {
            return;
        }
        gst::debug!(CAT, obj = self.srcpad, "output caps {caps}");
        let origin = self.position.unwrap_or(self.segment_start);
        let last_frames = self.captions.set_caps(&caps, origin);
        let _ = self.push_frames(last_frames);
        self.srcpad.push_event(gst::event::Caps::new(&caps));
    }

    /// Sends every caption frame that starts before `t`.
    fn frames_until(&mut self, t: gst::ClockTime) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.check_reconfigure();
        let frames = self.captions.frames_until(t);
        self.push_frames(frames)
    }

    /// Sends the frames that empty the caption queue; captions stop after
    /// them.
    fn finish_captions(&mut self) {
        let frames = self.captions.finish();
        let _ = self.push_frames(frames);
    }

    fn push_frames(
        &mut self,
        frames: Vec<PackedFrame>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        for frame in frames {
            self.push_buffer(frame.data, frame.pts, frame.duration)?;
        }
        Ok(gst::FlowSuccess::Ok)
    }

    /// Downstream takes none of `offered`. When only the channel stands
    /// in the way (it takes raw 608 alone, which has no field 2), an ERROR
    /// says so; otherwise the next push fails with NOT_NEGOTIATED, which is
    /// an error too.
    pub(super) fn explain_refused_caps(&self, offered: &gst::Caps) {
        gst::warning!(CAT, obj = self.srcpad, "downstream takes none of {offered}");
        let channel: caption::Channel608 = self.captions.settings().channel.into();
        let template = self.srcpad.pad_template_caps();
        if channel.is_field_2()
            && choose_caps(&self.srcpad.peer_query_caps(Some(&template))).is_some()
        {
            if let Some(element) = self.element() {
                gst::element_error!(
                    element,
                    gst::CoreError::Negotiation,
                    (
                        "caption-channel=cc3 cannot be output: {}; put ccconverter after the transcriber, or use caption-channel=cc1",
                        caption::format::Unsupported::Field2InRaw
                    )
                );
            }
        }
    }

    /// Whether the text goes into an MP4/QuickTime muxer (looked up once
    /// per negotiation).
    pub(super) fn feeds_iso_muxer(&mut self) -> bool {
        *self
            .iso_muxer
            .get_or_insert_with(|| super::downstream::feeds_iso_muxer(&self.srcpad))
    }

    /// Downstream asked for other caps (a new frame rate, say).
    pub(super) fn check_reconfigure(&mut self) {
        if self.caps_sent && self.srcpad.check_reconfigure() {
            self.negotiate();
        }
    }

    pub(super) fn push_buffer(
        &mut self,
        data: Vec<u8>,
        pts: gst::ClockTime,
        duration: gst::ClockTime,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let buffer = timed_buffer(data, pts, duration, std::mem::take(&mut self.discont));
        self.advance_to(pts + duration);
        gst::log!(CAT, obj = self.srcpad, "pushing {:?}", buffer);
        let result = self.srcpad.push(buffer);
        if result == Err(gst::FlowError::NotLinked) {
            // No ERROR: a bin may link the pad later (transcriberbin does on
            // its first video caps), and an ERROR sends it to passthrough.
            // The text goes nowhere until then, as with tee's allow-not-linked.
            gst::debug!(CAT, obj = self.srcpad, "not linked: text dropped");
            self.captions.losses().add_not_linked();
            return Ok(gst::FlowSuccess::Ok);
        }
        if let (Err(flow), Some(element)) = (result, self.element()) {
            if matches!(flow, gst::FlowError::Error | gst::FlowError::NotNegotiated) {
                gst::element_error!(
                    element,
                    gst::StreamError::Failed,
                    ("Internal data stream error."),
                    ["streaming stopped, reason {:?}", flow]
                );
            }
        }
        result
    }

    pub(super) fn advance_to(&mut self, end: gst::ClockTime) {
        self.position = Some(self.position.map_or(end, |p| p.max(end)));
    }

    pub(super) fn send_language_tag(&mut self) {
        if let Some(code) = self.language_code.take() {
            let mut tags = gst::TagList::new();
            tags.get_mut()
                .expect("new tag list")
                .add::<gst::tags::LanguageCode>(&code.as_str(), gst::TagMergeMode::Replace);
            self.srcpad.push_event(gst::event::Tag::new(tags));
        }
    }
}

impl SrcOutput {
    /// The cue's speaker, if it is not the last word's.
    fn speaker_changes<'c>(&mut self, cue: &'c TimedCue) -> Option<&'c str> {
        let speaker = cue.speaker.as_deref()?;
        if self.speaker.as_deref() == Some(speaker) {
            return None;
        }
        self.speaker = Some(speaker.to_owned());
        Some(speaker)
    }
}

impl SrcOutput {
    /// Ends the utterance if `cue` starts a new one (a pause, a new
    /// speaker): before the cue goes out.
    fn end_utterance_before(&mut self, cue: &TimedCue) {
        if self.utterance.closes_before(&utterance_word(cue)) {
            self.end_utterance();
        }
    }

    /// Ends the utterance if `cue` ended it (a sentence end): after the
    /// cue went out.
    fn end_utterance_with(&mut self, cue: &TimedCue) {
        if !self.utterance.push(utterance_word(cue)).is_empty() {
            self.srcpad.push_event(final_transcript_event());
        }
    }

    /// Ends the utterance if silence has lasted until `t`.
    fn end_utterance_by(&mut self, t: gst::ClockTime) {
        if self.utterance.close_if_due(t.nseconds()).is_some() {
            self.srcpad.push_event(final_transcript_event());
        }
    }

    fn end_utterance(&mut self) {
        if self.utterance.flush().is_some() {
            self.srcpad.push_event(final_transcript_event());
        }
    }
}

/// A cue as the utterance tracker sees it.
fn utterance_word(cue: &TimedCue) -> Word {
    let word = Word::new(&cue.text, cue.pts.nseconds(), cue.end().nseconds());
    match &cue.speaker {
        Some(speaker) => word.by(speaker),
        None => word,
    }
}

/// The end of an utterance (awstranscriber2 and deepgram send it): what
/// textaccumulate drains on and tttocea608/708 start a new row at.
pub(super) const FINAL_TRANSCRIPT_EVENT: &str = "rstranscribe/final-transcript";

pub(super) fn final_transcript_event() -> gst::Event {
    gst::event::CustomDownstream::new(gst::Structure::new_empty(FINAL_TRANSCRIPT_EVENT))
}

/// What gst-plugins-rs' caption and accumulate elements act on.
fn speaker_change_event(speaker: &str) -> gst::Event {
    let s = gst::Structure::builder(crate::speakers::SPEAKER_CHANGE_EVENT)
        .field("speaker", speaker)
        .build();
    gst::event::CustomDownstream::new(s)
}

impl Output for SrcOutput {
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.translations.send(|| Item::Word(cue.clone()));
        self.check_reconfigure();
        if self.post_messages.load(Ordering::Relaxed) {
            self.report.message(cue.transcript_message());
        }
        self.end_utterance_before(&cue);
        let new_speaker = self.speaker_changes(&cue);
        if self.captions.is_text() {
            if let Some(speaker) = new_speaker {
                self.srcpad.push_event(speaker_change_event(speaker));
            }
            gst::debug!(CAT, obj = self.srcpad, "word {:?} at {}", cue.text, cue.pts);
            let flow = self.push_buffer(cue.text.clone().into_bytes(), cue.pts, cue.duration);
            self.end_utterance_with(&cue);
            return flow;
        }
        // Frames before the word cannot change any more; the word starts
        // on the first frame at or after its PTS, and nothing else starts
        // before its end.
        self.frames_until(cue.pts)?;
        if new_speaker.is_some() {
            self.captions.speaker_change();
        }
        self.captions
            .push_cue(&cue.text, cue.pts, cue.pts + cue.duration);
        let flow = self.frames_until(cue.pts + cue.duration);
        self.end_utterance_with(&cue);
        flow
    }

    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, seqnum: Option<gst::Seqnum>) {
        self.translations.send(|| Item::Gap(pts + duration));
        self.check_reconfigure();
        self.end_utterance_by(pts + duration);
        if !self.captions.is_text() {
            // Nothing is said until the gap's end: the frames up to there
            // go out (with padding), so a muxer or cccombiner never waits.
            let _ = self.frames_until(pts + duration);
            return;
        }
        if self.feeds_iso_muxer() {
            // The muxer drops GAPs and interleaves a sparse track by its
            // last buffer, holding the audio back to the last word: an
            // empty buffer over the silence is what it writes there anyway,
            // and keeps the streams in step.
            let _ = self.push_buffer(Vec::new(), pts, duration);
            if duration.is_zero() {
                // Where the text stands after a stall: the muxer takes its
                // other inputs up to its last buffer only while another one
                // waits on this pad, so one to stand there, one to wait.
                let _ = self.push_buffer(Vec::new(), pts, duration);
            }
            return;
        }
        self.advance_to(pts + duration);
        let mut gap = gst::event::Gap::builder(pts).duration(duration);
        if let Some(seqnum) = seqnum {
            gap = gap.seqnum(seqnum);
        }
        self.srcpad.push_event(gap.build());
    }

    fn event(&mut self, event: gst::Event) {
        if matches!(
            event.type_(),
            gst::EventType::StreamStart | gst::EventType::Segment
        ) {
            self.translations.send(|| Item::Event(event.clone()));
        }
        let segment = match event.view() {
            gst::EventView::Segment(e) => e.segment().downcast_ref::<gst::ClockTime>().cloned(),
            _ => None,
        };
        if matches!(
            event.type_(),
            gst::EventType::SegmentDone | gst::EventType::Segment
        ) {
            self.end_utterance();
            self.finish_captions();
        }
        if event.type_() == gst::EventType::StreamStart {
            self.captions.new_stream();
        }
        if let Some(segment) = &segment {
            self.ensure_caps();
            self.discont = true;
            self.position = None;
            self.segment_start = segment.start().unwrap_or(gst::ClockTime::ZERO);
            self.captions.restart(self.segment_start);
        }
        self.srcpad.push_event(event);
        if segment.is_some() {
            self.send_language_tag();
        }
    }

    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>) {
        self.translations.send(|| Item::Eos(seqnum));
        self.ensure_caps();
        self.end_utterance();
        // Captions stay on screen to the end of the audio, then the
        // display is finished (drain).
        if let Some(end) = end {
            let _ = self.frames_until(end);
        }
        self.finish_captions();
        self.srcpad
            .push_event(gst::event::Eos::builder().seqnum(seqnum).build());
    }

    fn flushed(&mut self) {
        self.translations.send(|| Item::Flush);
        self.utterance = UnitBuilder::new(UnitLimits::utterances());
        self.speaker = None;
        self.discont = true;
        self.position = None;
        self.captions.restart(self.segment_start);
    }

    fn resume(&mut self) {
        // A zero-length GAP where the text stands is enough to preroll on,
        // and says nothing new about the stream. (Caption frames go out
        // for every stretch of time the worker passes on instead.)
        if let (Some(position), true) = (self.position, self.captions.is_text()) {
            self.srcpad.push_event(
                gst::event::Gap::builder(position)
                    .duration(gst::ClockTime::ZERO)
                    .build(),
            );
        }
    }
}

/// A buffer of `data` from `pts` for `duration`, DISCONT when it starts a
/// run (both the src pad's and the translate pads').
pub(super) fn timed_buffer(
    data: Vec<u8>,
    pts: gst::ClockTime,
    duration: gst::ClockTime,
    discont: bool,
) -> gst::Buffer {
    let mut buffer = gst::Buffer::from_mut_slice(data);
    {
        let buffer = buffer.get_mut().expect("new buffer");
        buffer.set_pts(pts);
        buffer.set_duration(duration);
        if discont {
            buffer.set_flags(gst::BufferFlags::DISCONT);
        }
    }
    buffer
}
