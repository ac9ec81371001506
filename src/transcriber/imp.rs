// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

/**
 * SECTION:element-voxtralrttranscriber
 * @see_also: voxtralrtsink, transcriberbin
 *
 * Transcribes 16 kHz mono speech with Mistral's Voxtral Mini 4B Realtime, in
 * this process (transcribe.cpp) or on a vLLM server (`engine=vllm`), and
 * outputs one timed `text/x-raw` buffer per word or caption line, or
 * CEA-608/708 closed captions when downstream asks for them.
 *
 * ## Example pipeline
 * ```bash
 * gst-launch-1.0 filesrc location=talk.wav ! wavparse ! audioconvert ! audioresample ! \
 *     voxtralrttranscriber model=q4_k_m output=lines ! srtenc ! filesink location=talk.srt
 * ```
 */
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use crate::caption::{self, CcFormat, Encoder, Framerate, Losses, Packer};
use crate::core::input;
use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::report::{Cause, Reporter};
use crate::core::{Core, Output, TimedCue};
use crate::settings::{Settings, SettingsCell};

use super::captions::CaptionSettings;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrttranscriber",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime transcriber"),
    )
});

pub struct Transcriber {
    sinkpad: gst::Pad,
    srcpad: gst::Pad,
    settings: SettingsCell,
    state: Mutex<Lifecycle>,
    caption_losses: Arc<CaptionLosses>,
    caption_settings: Mutex<CaptionSettings>,
    /// `post-messages`, read per cue so it can change while playing.
    post_messages: Arc<AtomicBool>,
}

/// What captions could not carry, for `stats`: totals over the element's
/// life.
#[derive(Debug, Default)]
struct CaptionLosses {
    cea608_replaced: AtomicU64,
    cea708_replaced: AtomicU64,
    cea608_dropped_words: AtomicU64,
}

impl CaptionLosses {
    fn add(&self, losses: &Losses) {
        self.cea608_replaced
            .fetch_add(losses.cea608_replaced, Ordering::Relaxed);
        self.cea708_replaced
            .fetch_add(losses.cea708_replaced, Ordering::Relaxed);
        self.cea608_dropped_words
            .fetch_add(losses.cea608_dropped_words, Ordering::Relaxed);
    }

    fn add_to(&self, stats: &mut gst::Structure) {
        stats.set(
            "caption-chars-replaced-608",
            self.cea608_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-chars-replaced-708",
            self.cea708_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-words-dropped",
            self.cea608_dropped_words.load(Ordering::Relaxed),
        );
    }
}

/// What the src pad outputs, as negotiated.
enum Kind {
    /// text/x-raw,format=utf8: one buffer per word or line.
    Text,
    /// closedcaption/*: one buffer per video frame.
    Captions(Box<Captions>),
}

/// Closed captions on the frame grid.
struct Captions {
    encoder: Encoder,
    packer: Packer,
    /// Losses of this encoder already counted.
    counted: Losses,
}

/// Delivers the worker's results on the src pad.
struct SrcOutput {
    element: glib::WeakRef<super::VoxtralRtTranscriber>,
    srcpad: gst::Pad,
    language_code: Option<String>,
    caps_sent: bool,
    captions: CaptionSettings,
    kind: Kind,
    /// Where the current segment starts: the origin of the frame grid.
    segment_start: gst::ClockTime,
    caption_losses: Arc<CaptionLosses>,
    post_messages: Arc<AtomicBool>,
    report: Reporter,
    /// What was warned about in this stream (from STREAM_START on).
    warned_replaced: bool,
    warned_dropped: bool,
    /// The next buffer starts a new run of data (first after a SEGMENT or
    /// a flush) and must say so.
    discont: bool,
    /// Where what went out last ends, on the output timeline.
    position: Option<gst::ClockTime>,
    /// The text goes into an MP4/QuickTime muxer (see `gap`); `None`:
    /// not looked up since the last negotiation.
    iso_muxer: Option<bool>,
}

impl SrcOutput {
    fn element(&self) -> Option<super::VoxtralRtTranscriber> {
        self.element.upgrade()
    }

    fn ensure_caps(&mut self) {
        if !self.caps_sent {
            self.caps_sent = true;
            self.negotiate();
        }
    }

    /// Picks the output from what downstream takes (our template order
    /// first: text unless downstream wants captions) and sends its caps
    /// if they changed.
    fn negotiate(&mut self) {
        self.iso_muxer = None;
        let template = offered_caps(
            &self.srcpad.pad_template_caps(),
            self.captions.channel.into(),
        );
        let Some(caps) = choose_caps(&self.srcpad.peer_query_caps(Some(&template))) else {
            self.explain_refused_caps(&template);
            return;
        };
        if self.srcpad.current_caps().as_ref() == Some(&caps) {
            return;
        }
        gst::debug!(CAT, obj = self.srcpad, "output caps {caps}");
        self.set_kind(&caps);
        self.srcpad.push_event(gst::event::Caps::new(&caps));
    }

    /// Downstream takes none of `offered`. When only the channel stands
    /// in the way (it takes raw 608 alone, which has no field 2), an ERROR
    /// says so; otherwise the next push fails with NOT_NEGOTIATED, which is
    /// an error too.
    fn explain_refused_caps(&self, offered: &gst::Caps) {
        gst::warning!(CAT, obj = self.srcpad, "downstream takes none of {offered}");
        let channel: caption::Channel608 = self.captions.channel.into();
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

    /// Sets the output up for `caps` (fixed, from our template). Captions
    /// already queued go on in the new format and frame rate, on a new
    /// grid from where the next frame would start.
    fn set_kind(&mut self, caps: &gst::Caps) {
        let Some((format, framerate)) = caption_format(caps) else {
            self.finish_captions();
            self.kind = Kind::Text;
            return;
        };
        let packer = match Packer::new(format, framerate, self.captions.channel.into()) {
            Ok(packer) => packer,
            Err(e) => unreachable!("the offered caps only have what the formats take: {e}"),
        };
        match &mut self.kind {
            Kind::Captions(captions) => {
                captions.encoder.regrid(framerate);
                captions.packer = packer;
            }
            Kind::Text => {
                let origin = self.position.unwrap_or(self.segment_start);
                self.kind = Kind::Captions(Box::new(Captions {
                    encoder: Encoder::new(self.captions.config(framerate), origin.nseconds()),
                    packer,
                    counted: Losses::default(),
                }))
            }
        }
    }

    /// Whether the text goes into an MP4/QuickTime muxer (looked up once
    /// per negotiation).
    fn feeds_iso_muxer(&mut self) -> bool {
        *self
            .iso_muxer
            .get_or_insert_with(|| super::downstream::feeds_iso_muxer(&self.srcpad))
    }

    /// Downstream asked for other caps (a new frame rate, say).
    fn check_reconfigure(&mut self) {
        if self.caps_sent && self.srcpad.check_reconfigure() {
            self.negotiate();
        }
    }

    /// Sends every caption frame that starts before `t`.
    fn frames_until(&mut self, t: gst::ClockTime) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.check_reconfigure();
        let Kind::Captions(captions) = &mut self.kind else {
            return Ok(gst::FlowSuccess::Ok);
        };
        let frames = captions.encoder.frames_until(t.nseconds());
        self.push_frames(frames)
    }

    /// Sends the frames that empty the caption queue (at the end of a
    /// segment or stream); captions stop after them.
    fn finish_captions(&mut self) {
        if let Kind::Captions(captions) = &mut self.kind {
            let frames = captions.encoder.drain();
            let _ = self.push_frames(frames);
        }
    }

    fn push_frames(
        &mut self,
        frames: Vec<caption::Frame>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut result = Ok(gst::FlowSuccess::Ok);
        for frame in frames {
            let Kind::Captions(captions) = &mut self.kind else {
                break;
            };
            let (pts, duration) = (frame.pts, frame.duration);
            let data = captions.packer.pack(frame);
            result = self.push_buffer(
                data,
                gst::ClockTime::from_nseconds(pts),
                gst::ClockTime::from_nseconds(duration),
            );
            if result.is_err() {
                break;
            }
        }
        self.account_caption_losses();
        result
    }

    /// Adds what the encoder could not carry to the stats, and warns once
    /// per stream when text was replaced or dropped.
    fn account_caption_losses(&mut self) {
        let Kind::Captions(captions) = &mut self.kind else {
            return;
        };
        let total = captions.encoder.losses();
        let new = Losses {
            cea608_replaced: total.cea608_replaced - captions.counted.cea608_replaced,
            cea708_replaced: total.cea708_replaced - captions.counted.cea708_replaced,
            cea608_dropped_words: total.cea608_dropped_words
                - captions.counted.cea608_dropped_words,
        };
        captions.counted = total;
        if new == Losses::default() {
            return;
        }
        self.caption_losses.add(&new);
        let carries_708 = captions.packer.format().carries_708();
        let replaced = new.cea608_replaced > 0 || (carries_708 && new.cea708_replaced > 0);
        if replaced && !std::mem::replace(&mut self.warned_replaced, true) {
            self.report.warning(
                Cause::Captions,
                "closed captions: characters that CEA-608/708 cannot show were replaced by an \
                 ASCII transliteration or '?' (counted in stats as caption-chars-replaced-608 \
                 and -708)",
            );
        }
        if new.cea608_dropped_words > 0 && !std::mem::replace(&mut self.warned_dropped, true) {
            self.report.warning(
                Cause::Captions,
                "closed captions: speech came faster than CEA-608 can carry it (2 characters a \
                 frame); the oldest words were dropped to keep the captions within 1 s of the \
                 speech (counted in stats as caption-words-dropped; CEA-708 has them all)",
            );
        }
    }

    fn push_buffer(
        &mut self,
        data: Vec<u8>,
        pts: gst::ClockTime,
        duration: gst::ClockTime,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut buffer = gst::Buffer::from_mut_slice(data);
        {
            let buffer = buffer.get_mut().expect("new buffer");
            buffer.set_pts(pts);
            buffer.set_duration(duration);
            if std::mem::take(&mut self.discont) {
                buffer.set_flags(gst::BufferFlags::DISCONT);
            }
        }
        self.advance_to(pts + duration);
        gst::log!(CAT, obj = self.srcpad, "pushing {:?}", buffer);
        let result = self.srcpad.push(buffer);
        if let (Err(flow), Some(element)) = (result, self.element()) {
            if matches!(
                flow,
                gst::FlowError::NotLinked | gst::FlowError::Error | gst::FlowError::NotNegotiated
            ) {
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

    fn advance_to(&mut self, end: gst::ClockTime) {
        self.position = Some(self.position.map_or(end, |p| p.max(end)));
    }

    /// A new segment or a flush: captions start afresh (a clear screen, a
    /// new grid from the segment start, in the format negotiated).
    fn restart_captions(&mut self) {
        if let Kind::Captions(captions) = &mut self.kind {
            let framerate = captions.packer.framerate();
            let format = captions.packer.format();
            captions.encoder = Encoder::new(
                self.captions.config(framerate),
                self.segment_start.nseconds(),
            );
            captions.packer = Packer::new(format, framerate, self.captions.channel.into())
                .expect("worked before");
            captions.counted = Losses::default();
        }
    }

    fn send_language_tag(&mut self) {
        if let Some(code) = self.language_code.take() {
            let mut tags = gst::TagList::new();
            tags.get_mut()
                .expect("new tag list")
                .add::<gst::tags::LanguageCode>(&code.as_str(), gst::TagMergeMode::Replace);
            self.srcpad.push_event(gst::event::Tag::new(tags));
        }
    }
}

impl Output for SrcOutput {
    fn cue(&mut self, cue: TimedCue) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.check_reconfigure();
        if self.post_messages.load(Ordering::Relaxed) {
            self.report.message(cue.transcript_message());
        }
        if let Kind::Text = self.kind {
            gst::debug!(CAT, obj = self.srcpad, "word {:?} at {}", cue.text, cue.pts);
            return self.push_buffer(cue.text.into_bytes(), cue.pts, cue.duration);
        }
        // Frames before the word cannot change any more; the word starts
        // on the first frame at or after its PTS, and nothing else starts
        // before its end.
        self.frames_until(cue.pts)?;
        if let Kind::Captions(captions) = &mut self.kind {
            let (start, end) = (cue.pts, cue.pts + cue.duration);
            captions
                .encoder
                .push_cue(&cue.text, start.nseconds(), end.nseconds());
        }
        self.frames_until(cue.pts + cue.duration)
    }

    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, seqnum: Option<gst::Seqnum>) {
        self.check_reconfigure();
        if let Kind::Captions(_) = self.kind {
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
        let segment = match event.view() {
            gst::EventView::Segment(e) => e.segment().downcast_ref::<gst::ClockTime>().cloned(),
            _ => None,
        };
        if matches!(
            event.type_(),
            gst::EventType::SegmentDone | gst::EventType::Segment
        ) {
            self.finish_captions();
        }
        if event.type_() == gst::EventType::StreamStart {
            self.warned_replaced = false;
            self.warned_dropped = false;
        }
        if let Some(segment) = &segment {
            self.ensure_caps();
            self.discont = true;
            self.position = None;
            self.segment_start = segment.start().unwrap_or(gst::ClockTime::ZERO);
            self.restart_captions();
        }
        self.srcpad.push_event(event);
        if segment.is_some() {
            self.send_language_tag();
        }
    }

    fn eos(&mut self, seqnum: gst::Seqnum, end: Option<gst::ClockTime>) {
        self.ensure_caps();
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
        self.discont = true;
        self.position = None;
        self.restart_captions();
    }

    fn resume(&mut self) {
        // A zero-length GAP where the text stands is enough to preroll on,
        // and says nothing new about the stream. (Caption frames go out
        // for every stretch of time the worker passes on instead.)
        if let (Some(position), Kind::Text) = (self.position, &self.kind) {
            self.srcpad.push_event(
                gst::event::Gap::builder(position)
                    .duration(gst::ClockTime::ZERO)
                    .build(),
            );
        }
    }
}

impl Transcriber {
    pub(crate) fn set_recognizer_wrapper(&self, wrapper: Option<crate::recognizer::Wrapper>) {
        self.state.lock().unwrap().set_wrapper(wrapper);
    }

    fn core(&self) -> Option<Arc<Core>> {
        self.state.lock().unwrap().core()
    }

    fn sink_chain(
        &self,
        pad: &gst::Pad,
        buffer: gst::Buffer,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let (core, audio) = {
            let mut state = self.state.lock().unwrap();
            let core = state.core().ok_or(gst::FlowError::Flushing)?;
            let audio = state.input.take_buffer(pad, &buffer, &core)?;
            (core, audio)
        };
        core.push_audio(audio)
    }

    fn sink_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        gst::log!(CAT, obj = pad, "handling event {:?}", event);
        match event.view() {
            gst::EventView::Caps(e) => {
                let result = self.state.lock().unwrap().input.set_caps(e.caps());
                match result {
                    Ok(()) => true,
                    Err(msg) => {
                        gst::element_imp_error!(self, gst::StreamError::Format, ("{}", msg));
                        false
                    }
                }
            }
            gst::EventView::FlushStart(_) => {
                if let Some(core) = self.core() {
                    core.flush_start();
                }
                self.srcpad.push_event(event)
            }
            gst::EventView::FlushStop(_) => {
                self.state.lock().unwrap().input.clear();
                if let Some(core) = self.core() {
                    core.flush_stop();
                }
                self.srcpad.push_event(event)
            }
            _ if event.is_serialized() => match self.core() {
                Some(core) => core.push_event(event).is_ok(),
                None => false,
            },
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }

    fn src_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        if let gst::EventView::Seek(e) = event.view() {
            let (_, flags, ..) = e.get();
            if !flags.contains(gst::SeekFlags::FLUSH) {
                if let Some(core) = self.core() {
                    core.expect_seek_segment(event.seqnum());
                }
            }
        }
        gst::Pad::event_default(pad, Some(&*self.obj()), event)
    }

    fn src_query(&self, pad: &gst::Pad, query: &mut gst::QueryRef) -> bool {
        match query.view_mut() {
            gst::QueryViewMut::Latency(q) => {
                let mut upstream = gst::query::Latency::new();
                if !self.sinkpad.peer_query(&mut upstream) {
                    return false;
                }
                let (live, min, max) = upstream.result();
                let ours = self.settings.reported_latency();
                q.set(live, min + ours, max.map(|m| m + ours));
                gst::debug!(CAT, imp = self, "latency: live {live}, min {}", min + ours);
                true
            }
            _ => gst::Pad::query_default(pad, Some(&*self.obj()), query),
        }
    }

    fn start(&self) -> Result<(), gst::StateChangeError> {
        let settings = self.settings.snapshot();
        let output = SrcOutput {
            element: self.obj().downgrade(),
            srcpad: self.srcpad.clone(),
            language_code: settings.language_code.clone(),
            caps_sent: false,
            captions: *self.caption_settings.lock().unwrap(),
            kind: Kind::Text,
            segment_start: gst::ClockTime::ZERO,
            caption_losses: self.caption_losses.clone(),
            post_messages: self.post_messages.clone(),
            report: Reporter::new(self.obj().upcast_ref()),
            warned_replaced: false,
            warned_dropped: false,
            discont: true,
            position: None,
            iso_muxer: None,
        };
        let result =
            self.state
                .lock()
                .unwrap()
                .start(self.obj().upcast_ref(), &settings, Box::new(output));
        result.map_err(|msg| {
            self.post_error_message(msg);
            gst::StateChangeError
        })
    }

    fn stop(&self) {
        let core = self.state.lock().unwrap().take_core();
        if let Some(core) = core {
            let stopped = stop_core(core);
            self.state.lock().unwrap().stopped(stopped);
        }
    }
}

#[glib::object_subclass]
impl ObjectSubclass for Transcriber {
    const NAME: &'static str = "GstVoxtralRtTranscriber";
    type Type = super::VoxtralRtTranscriber;
    type ParentType = gst::Element;

    fn with_class(klass: &Self::Class) -> Self {
        let templ = klass.pad_template("sink").unwrap();
        let sinkpad = gst::Pad::builder_from_template(&templ)
            .chain_function(|pad, parent, buffer| {
                Transcriber::catch_panic_pad_function(
                    parent,
                    || Err(gst::FlowError::Error),
                    |t| t.sink_chain(pad, buffer),
                )
            })
            .event_function(|pad, parent, event| {
                Transcriber::catch_panic_pad_function(
                    parent,
                    || false,
                    |t| t.sink_event(pad, event),
                )
            })
            .build();
        let templ = klass.pad_template("src").unwrap();
        let srcpad = gst::Pad::builder_from_template(&templ)
            .query_function(|pad, parent, query| {
                Transcriber::catch_panic_pad_function(parent, || false, |t| t.src_query(pad, query))
            })
            .event_function(|pad, parent, event| {
                Transcriber::catch_panic_pad_function(parent, || false, |t| t.src_event(pad, event))
            })
            .flags(gst::PadFlags::FIXED_CAPS)
            .build();
        Self {
            sinkpad,
            srcpad,
            settings: SettingsCell::default(),
            state: Mutex::new(Lifecycle::default()),
            caption_losses: Arc::default(),
            caption_settings: Mutex::default(),
            post_messages: Arc::default(),
        }
    }
}

impl ObjectImpl for Transcriber {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut properties = Settings::param_specs();
            properties.extend(CaptionSettings::param_specs());
            properties.push(
                glib::ParamSpecBoolean::builder("post-messages")
                    .nick("Post messages")
                    .blurb("Also post a voxtralrt-transcript element message per word or line (as voxtralrtsink does)")
                    .default_value(false)
                    .mutable_playing()
                    .build(),
            );
            properties.push(crate::core::stats_param_spec());
            properties
        });
        PROPERTIES.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        if pspec.name() == "post-messages" {
            let post = value.get().expect("type checked");
            self.post_messages.store(post, Ordering::Relaxed);
            return;
        }
        if self
            .caption_settings
            .lock()
            .unwrap()
            .set(pspec.name(), value)
        {
            return;
        }
        self.settings
            .set_property(self.obj().upcast_ref(), value, pspec);
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        if pspec.name() == "stats" {
            let mut stats = self.state.lock().unwrap().stats().to_structure();
            self.caption_losses.add_to(&mut stats);
            return stats.to_value();
        }
        if pspec.name() == "post-messages" {
            return self.post_messages.load(Ordering::Relaxed).to_value();
        }
        if let Some(value) = self.caption_settings.lock().unwrap().get(pspec.name()) {
            return value;
        }
        self.settings.property(pspec)
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.sinkpad).unwrap();
        obj.add_pad(&self.srcpad).unwrap();
    }
}

impl GstObjectImpl for Transcriber {}

impl ElementImpl for Transcriber {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static ELEMENT_METADATA: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Voxtral Realtime transcriber",
                "Audio/Text/Filter",
                "Transcribes speech to timestamped text (one buffer per word or caption line) with \
                 Mistral's Voxtral Mini 4B Realtime, run locally through transcribe.cpp or on a \
                 vLLM server",
                "gst-plugin-voxtralrt authors",
            )
        });
        Some(&*ELEMENT_METADATA)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static PAD_TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            let src_caps = src_caps();
            vec![
                gst::PadTemplate::new(
                    "src",
                    gst::PadDirection::Src,
                    gst::PadPresence::Always,
                    &src_caps,
                )
                .unwrap(),
                gst::PadTemplate::new(
                    "sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &input::sink_caps(),
                )
                .unwrap(),
            ]
        });
        PAD_TEMPLATES.as_ref()
    }

    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        gst::debug!(CAT, imp = self, "changing state {transition:?}");
        match transition {
            gst::StateChange::NullToReady => self
                .state
                .lock()
                .unwrap()
                .load(self.obj().upcast_ref(), &self.settings)?,
            gst::StateChange::ReadyToPaused => self.start()?,
            gst::StateChange::PausedToReady => self.stop(),
            gst::StateChange::PausedToPlaying => {
                if let Some(core) = self.core() {
                    core.resume();
                }
            }
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        if transition == gst::StateChange::ReadyToNull {
            self.state.lock().unwrap().unload();
        }
        Ok(success)
    }
}

/// What the src pad can output: text first (the default), then closed
/// captions, 708 before 608 (708 formats carry CC1 too), at the broadcast
/// frame rates.
fn src_caps() -> gst::Caps {
    let mut caps = gst::Caps::builder("text/x-raw")
        .field("format", "utf8")
        .build();
    let framerates = gst::List::new(
        caption::format::BROADCAST_FRAMERATES
            .iter()
            .map(|f| gst::Fraction::new(f.numer as i32, f.denom as i32)),
    );
    let caps_mut = caps.get_mut().expect("new caps");
    for format in [
        CcFormat::Cea708CcData,
        CcFormat::Cea708Cdp,
        CcFormat::Cea608Raw,
        CcFormat::Cea608S334_1a,
    ] {
        let (name, format) = format.caps_name_and_format();
        caps_mut.append_structure(
            gst::Structure::builder(name)
                .field("format", format)
                .field("framerate", &framerates)
                .build(),
        );
    }
    caps
}

/// What the src pad offers with captions on `channel`: the template,
/// without the caption formats that cannot carry it.
fn offered_caps(template: &gst::Caps, channel: caption::Channel608) -> gst::Caps {
    let mut offered = gst::Caps::new_empty();
    let offered_mut = offered.get_mut().expect("new caps");
    for s in template.iter() {
        let format = s
            .get::<&str>("format")
            .ok()
            .and_then(|f| CcFormat::from_caps_name_and_format(s.name(), f));
        if format.is_none_or(|f| f.carries(channel)) {
            offered_mut.append_structure(s.to_owned());
        }
    }
    offered
}

/// The output caps from what downstream takes: its first choice, with the
/// frame rate nearest 29.97 fps where it leaves that open.
fn choose_caps(allowed: &gst::Caps) -> Option<gst::Caps> {
    if allowed.is_empty() {
        return None;
    }
    if allowed.is_any() {
        return Some(
            gst::Caps::builder("text/x-raw")
                .field("format", "utf8")
                .build(),
        );
    }
    let mut caps = allowed.clone();
    caps.truncate();
    {
        let caps = caps.make_mut();
        let s = caps.structure_mut(0).expect("not empty");
        if s.has_field("framerate") {
            let ntsc = Framerate::NTSC;
            s.fixate_field_nearest_fraction(
                "framerate",
                gst::Fraction::new(ntsc.numer as i32, ntsc.denom as i32),
            );
        }
    }
    caps.fixate();
    Some(caps)
}

/// The caption format and frame rate of fixed caps, if they are captions.
fn caption_format(caps: &gst::Caps) -> Option<(CcFormat, Framerate)> {
    let s = caps.structure(0)?;
    let format = CcFormat::from_caps_name_and_format(s.name(), s.get::<&str>("format").ok()?)?;
    let fps = s.get::<gst::Fraction>("framerate").ok()?;
    Some((
        format,
        Framerate::new(fps.numer() as u32, fps.denom() as u32),
    ))
}
