// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

/**
 * SECTION:element-voxtralrtsubenc
 * @see_also: voxtralrttranscriber, srtenc, webvttenc
 *
 * Encodes timed text (one word, a caption line or a whole translation per
 * buffer, each with PTS and duration) into a subtitle file of a subtitle
 * style: SRT, WebVTT, Scenarist SCC, IMSC 1.1 Text or EBU-TT-D. Into a
 * seekable sink (`filesink`) each cue goes out with the format's closing
 * part after it, written over by the next cue (a new byte segment), so a
 * killed pipeline leaves a valid file.
 *
 * ## Example pipeline
 * ```bash
 * gst-launch-1.0 filesrc location=talk.wav ! wavparse ! audioconvert ! audioresample ! \
 *     voxtralrttranscriber model=q4_k_m ! voxtralrtsubenc format=scc ! filesink location=talk.scc
 * ```
 */
use std::sync::{LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use super::caps;
use super::CAT;
use crate::core::stats::field;
use crate::core::styled::add_subtitle_stats;
use crate::settings::{FileSettings, Settings, SettingsCell, SubtitleFormat};
use crate::speakers::{check_name, SPEAKER_CHANGE_EVENT};
use crate::subtitles::file::{FileChoice, FileKind};
use crate::subtitles::stream::SubtitleStream;
use crate::subtitles::writes::{Tail, WriteAt};
use crate::subtitles::{Counts, Style, StyleName};

/// Subtitle files a person can read unless told otherwise.
const DEFAULT_STYLE: StyleName = StyleName::Netflix;
/// The format downstream's caps ask for (SRT where they leave it open).
const DEFAULT_FORMAT: FileChoice = FileChoice::Auto;

const STYLE_BLURB: &str = "How the text becomes cues: netflix (default: 2x42 chars, 5/6-7 s, 20 chars/s, 17 in other languages), bbc (2x37, 180 words/min), dcmp (2x32, 2-7 s, 225 words/min) or broadcast (rows of 32 as spoken)";

/// One stream's state, from the first event after READY to the next flush
/// or stop.
struct State {
    /// The format written, once negotiated (at the first caps, or the first
    /// data without them).
    kind: Option<FileKind>,
    /// Negotiation failed (and said so): data is refused.
    refused: bool,
    /// The file: made at the first text, silence or end, once downstream
    /// says whether it can seek.
    stream: Option<SubtitleStream>,
    /// The language of a tag that came before the file was made.
    tag_language: Option<String>,
    speaker: Option<String>,
    segment: gst::FormattedSegment<gst::ClockTime>,
    /// Downstream's byte position (none: no byte segment yet).
    position: Option<u64>,
    /// The furthest the input reached (stream time): the last cue ends
    /// there at the latest.
    seen_until: Option<u64>,
    /// Buffers whose text was not UTF-8.
    invalid_utf8: u64,
}

impl State {
    fn new(kind: Option<FileKind>) -> State {
        State {
            kind,
            refused: false,
            stream: None,
            tag_language: None,
            speaker: None,
            segment: gst::FormattedSegment::new(),
            position: None,
            seen_until: None,
            invalid_utf8: 0,
        }
    }

    fn stream_time(&self, t: gst::ClockTime) -> Option<u64> {
        self.segment.to_stream_time(t).map(|t| t.nseconds())
    }

    fn reach(&mut self, t: u64) {
        self.seen_until = Some(self.seen_until.map_or(t, |s| s.max(t)));
    }
}

pub struct SubEnc {
    sinkpad: gst::Pad,
    srcpad: gst::Pad,
    /// `subtitle-style` and `language-code`, checked as the other
    /// elements check them.
    settings: SettingsCell,
    files: Mutex<FileSettings>,
    state: Mutex<Option<State>>,
    /// The counts of the last stream, for `stats`.
    counts: Mutex<(Counts, u64)>,
}

impl SubEnc {
    /// The format to write: the one set, or (auto) the first that
    /// downstream takes; its caps go out. Downstream taking none is a
    /// not-negotiated ERROR of this element, said once.
    fn negotiate(&self, state: &mut State) -> Result<FileKind, gst::FlowError> {
        if let Some(kind) = state.kind {
            return Ok(kind);
        }
        if state.refused {
            return Err(gst::FlowError::NotNegotiated);
        }
        let format = self.files.lock().unwrap().format;
        let offered = caps::offered(format);
        let Some(kind) = caps::choose(&self.srcpad.peer_query_caps(Some(&offered))) else {
            state.refused = true;
            let takes = self.srcpad.peer_query_caps(None);
            gst::element_imp_error!(
                self,
                gst::CoreError::Negotiation,
                ("{}", caps::refusal(format, &takes)),
                ["not-negotiated: offered {offered}"]
            );
            return Err(gst::FlowError::NotNegotiated);
        };
        gst::debug!(CAT, imp = self, "writing {kind:?}");
        state.kind = Some(kind);
        self.srcpad
            .push_event(gst::event::Caps::new(&caps::caps_of(kind)));
        Ok(kind)
    }

    /// The file, made the first time: its tail after each cue where
    /// downstream can seek, else once at the end.
    fn stream<'a>(&self, state: &'a mut State) -> Result<&'a mut SubtitleStream, gst::FlowError> {
        let kind = self.negotiate(state)?;
        if state.stream.is_none() {
            let mut seeking = gst::query::Seeking::new(gst::Format::Bytes);
            let seekable = self.srcpad.peer_query(&mut seeking) && seeking.result().0;
            let tail = if seekable {
                Tail::AfterEachCue
            } else {
                Tail::AtTheEnd
            };
            gst::debug!(CAT, imp = self, "downstream seekable: {seekable}");
            let settings = self.settings.snapshot();
            let options = self.files.lock().unwrap().options(settings.language_code);
            let mut stream = SubtitleStream::new(kind, settings.subtitle_style, options, tail);
            if let Some(language) = &state.tag_language {
                stream.tag_language(language);
            }
            stream.set_speaker(state.speaker.clone());
            state.stream = Some(stream);
        }
        Ok(state.stream.as_mut().expect("made"))
    }

    /// Pushes `writes`, each after a byte segment where it does not follow
    /// what went before.
    fn push(
        &self,
        state: &mut State,
        writes: Vec<WriteAt>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        if let Some(stream) = &state.stream {
            *self.counts.lock().unwrap() = (stream.counts(), state.invalid_utf8);
        }
        for write in writes {
            if state.position != Some(write.offset) {
                self.move_to(state, write.offset);
            }
            let end = write.offset + write.bytes.len() as u64;
            let mut buffer = gst::Buffer::from_mut_slice(write.bytes);
            {
                let buffer = buffer.get_mut().expect("new buffer");
                buffer.set_offset(write.offset);
                buffer.set_offset_end(end);
            }
            state.position = Some(end);
            self.srcpad.push(buffer)?;
        }
        Ok(gst::FlowSuccess::Ok)
    }

    /// A byte segment: downstream writes from `offset` on (`filesink`
    /// seeks there).
    fn move_to(&self, state: &mut State, offset: u64) {
        let mut segment = gst::FormattedSegment::<gst::format::Bytes>::new();
        segment.set_start(gst::format::Bytes::from_u64(offset));
        self.srcpad.push_event(gst::event::Segment::new(&segment));
        state.position = Some(offset);
    }

    fn sink_chain(&self, buffer: gst::Buffer) -> Result<gst::FlowSuccess, gst::FlowError> {
        let (Some(pts), Some(duration)) = (buffer.pts(), buffer.duration()) else {
            gst::element_imp_error!(
                self,
                gst::StreamError::Format,
                ("voxtralrtsubenc needs timed text: a buffer came without a timestamp or a duration"),
                [
                    "PTS {:?}, duration {:?}: give each text buffer both, as transcribers do",
                    buffer.pts(),
                    buffer.duration()
                ]
            );
            return Err(gst::FlowError::Error);
        };
        let text = self.text_of(&buffer)?;
        let mut guard = self.state.lock().unwrap();
        let state = guard.as_mut().ok_or(gst::FlowError::Flushing)?;
        if text.1 {
            state.invalid_utf8 += 1;
        }
        let Some(start) = state.stream_time(pts) else {
            gst::debug!(
                CAT,
                imp = self,
                "text at {pts} is outside the segment: left out"
            );
            return Ok(gst::FlowSuccess::Ok);
        };
        let end = start + duration.nseconds();
        state.reach(end);
        let writes = self.stream(state)?.text(&text.0, start, end);
        self.push_or_gap(state, writes, pts, Some(duration))
    }

    /// Pushes `writes`; with none (the text is held until its cue's end is
    /// decided), a GAP over the input's time instead, so that downstream
    /// prerolls and keeps going (tee branches wait on each other's sinks).
    fn push_or_gap(
        &self,
        state: &mut State,
        writes: Vec<WriteAt>,
        pts: gst::ClockTime,
        duration: Option<gst::ClockTime>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        if !writes.is_empty() {
            return self.push(state, writes);
        }
        let gap = gst::event::Gap::builder(pts).duration(duration).build();
        self.srcpad.push_event(gap);
        Ok(gst::FlowSuccess::Ok)
    }

    /// The buffer's text, and whether it was not UTF-8 (its invalid bytes
    /// then read as U+FFFD, as GStreamer's text elements do, and warned
    /// about once per stream).
    fn text_of(&self, buffer: &gst::Buffer) -> Result<(String, bool), gst::FlowError> {
        let map = buffer.map_readable().map_err(|_| {
            gst::element_imp_error!(
                self,
                gst::StreamError::Decode,
                ("Could not read a text buffer")
            );
            gst::FlowError::Error
        })?;
        if let Ok(text) = std::str::from_utf8(&map) {
            return Ok((text.to_owned(), false));
        }
        let first = self
            .state
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|s| s.invalid_utf8 == 0);
        if first {
            gst::element_imp_warning!(
                self,
                gst::StreamError::Format,
                ("Text that is not UTF-8 at {}: its invalid bytes are written as U+FFFD", buffer.pts().display()),
                ["the caps say format=utf8; further such buffers are counted in stats (invalid-utf8-buffers)"]
            );
        }
        Ok((String::from_utf8_lossy(&map).into_owned(), true))
    }

    fn sink_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        use gst::EventView;
        let mut guard = self.state.lock().unwrap();
        let Some(state) = guard.as_mut() else {
            drop(guard);
            return gst::Pad::event_default(pad, Some(&*self.obj()), event);
        };
        match event.view() {
            EventView::Caps(_) => self.negotiate(state).is_ok(),
            EventView::Segment(e) => {
                let writes = state
                    .stream
                    .as_mut()
                    .map_or_else(Vec::new, |s| s.finish(None));
                match e.segment().downcast_ref::<gst::ClockTime>() {
                    Some(segment) => state.segment = segment.clone(),
                    None => {
                        drop(guard);
                        gst::element_imp_error!(
                            self,
                            gst::StreamError::Format,
                            (
                                "voxtralrtsubenc needs text in a time segment, not {:?}",
                                e.segment().format()
                            )
                        );
                        return false;
                    }
                }
                if state.position.is_none() {
                    // The byte segment goes before the tags that follow.
                    self.move_to(state, 0);
                }
                self.push(state, writes).is_ok()
            }
            EventView::Tag(e) => {
                let language = e.tag().get::<gst::tags::LanguageCode>();
                if let Some(language) = language.map(|l| l.get().to_owned()) {
                    gst::debug!(CAT, imp = self, "language tag {language}");
                    match &mut state.stream {
                        Some(stream) => stream.tag_language(&language),
                        None => state.tag_language = Some(language),
                    }
                }
                drop(guard);
                gst::Pad::event_default(pad, Some(&*self.obj()), event)
            }
            EventView::Gap(e) => {
                let (pts, duration) = e.get();
                let Some(start) = state.stream_time(pts) else {
                    return true;
                };
                let end = start + duration.map_or(0, |d| d.nseconds());
                state.reach(end);
                let Ok(stream) = self.stream(state) else {
                    return false;
                };
                let writes = stream.silence_until(end);
                self.push_or_gap(state, writes, pts, duration).is_ok()
            }
            EventView::CustomDownstream(e) => {
                let Some(s) = e.structure().filter(|s| s.name() == SPEAKER_CHANGE_EVENT) else {
                    drop(guard);
                    return gst::Pad::event_default(pad, Some(&*self.obj()), event);
                };
                let given = s.get::<String>("speaker").unwrap_or_default();
                let speaker = check_name(&given)
                    .map_err(|why| {
                        gst::element_imp_warning!(
                            self,
                            gst::StreamError::Format,
                            ("Speaker {given:?}: {why}; their words are written without a name")
                        );
                    })
                    .ok();
                state.speaker.clone_from(&speaker);
                if let Some(stream) = &mut state.stream {
                    stream.set_speaker(speaker);
                }
                true
            }
            EventView::Eos(_) => {
                let until = state.seen_until;
                if let Ok(stream) = self.stream(state) {
                    let writes = stream.end(until);
                    let _ = self.push(state, writes);
                }
                drop(guard);
                self.srcpad.push_event(event)
            }
            EventView::FlushStop(_) => {
                // filesink empties the file on FLUSH_STOP: the file starts
                // over, header and all, in the language and with the
                // speaker known (their events are not sent again).
                let language = match &state.stream {
                    Some(stream) => stream.language().map(str::to_owned),
                    None => state.tag_language.clone(),
                };
                let speaker = state.speaker.take();
                *state = State::new(state.kind);
                state.tag_language = language;
                state.speaker = speaker;
                drop(guard);
                self.srcpad.push_event(event)
            }
            _ => {
                drop(guard);
                gst::Pad::event_default(pad, Some(&*self.obj()), event)
            }
        }
    }

    /// Live, a cue goes out once its end is decided: up to the style's
    /// longest cue after its first word, which LATENCY answers add.
    fn src_query(&self, pad: &gst::Pad, query: &mut gst::QueryRef) -> bool {
        if let gst::QueryViewMut::Latency(q) = query.view_mut() {
            let mut upstream = gst::query::Latency::new();
            if !self.sinkpad.peer_query(&mut upstream) {
                return false;
            }
            let (live, min, max) = upstream.result();
            let name = self.settings.snapshot().subtitle_style;
            let hold = gst::ClockTime::from_nseconds(Style::new(name, None, 32).hold_ns());
            q.set(live, min + hold, max.map(|m| m + hold));
            return true;
        }
        gst::Pad::query_default(pad, Some(&*self.obj()), query)
    }
}

#[glib::object_subclass]
impl ObjectSubclass for SubEnc {
    const NAME: &'static str = "GstVoxtralRtSubEnc";
    type Type = super::VoxtralRtSubEnc;
    type ParentType = gst::Element;

    fn with_class(klass: &Self::Class) -> Self {
        let sinkpad = gst::Pad::builder_from_template(&klass.pad_template("sink").unwrap())
            .chain_function(|_pad, parent, buffer| {
                SubEnc::catch_panic_pad_function(
                    parent,
                    || Err(gst::FlowError::Error),
                    |this| this.sink_chain(buffer),
                )
            })
            .event_function(|pad, parent, event| {
                SubEnc::catch_panic_pad_function(
                    parent,
                    || false,
                    |this| this.sink_event(pad, event),
                )
            })
            .flags(gst::PadFlags::PROXY_ALLOCATION)
            .build();
        let srcpad = gst::Pad::builder_from_template(&klass.pad_template("src").unwrap())
            .query_function(|pad, parent, query| {
                SubEnc::catch_panic_pad_function(
                    parent,
                    || false,
                    |this| this.src_query(pad, query),
                )
            })
            .flags(gst::PadFlags::FIXED_CAPS)
            .build();
        SubEnc {
            sinkpad,
            srcpad,
            settings: SettingsCell::new(Settings {
                subtitle_style: DEFAULT_STYLE,
                ..Settings::default()
            }),
            files: Mutex::new(FileSettings::new(DEFAULT_FORMAT)),
            state: Mutex::new(None),
            counts: Mutex::default(),
        }
    }
}

impl ObjectImpl for SubEnc {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = vec![
                FileSettings::format_param_spec(SubtitleFormat::from(DEFAULT_FORMAT), "The file's format, and the src caps: auto (default: the first that downstream's caps take, srt if any), srt, vtt, scc (Scenarist, CEA-608), ttml (IMSC 1.1 Text) or ebu-tt-d"),
                Settings::subtitle_style_param_spec(DEFAULT_STYLE, STYLE_BLURB),
                glib::ParamSpecString::builder("language-code")
                    .nick("Language code")
                    .blurb("The text's language, e.g. es (default: the stream's language tag): TTML's xml:lang and the reading speed of subtitle-style")
                    .mutable_ready()
                    .build(),
                FileSettings::caption_channel_param_spec(),
            ];
            props.extend(FileSettings::scc_param_specs());
            props.push(
                glib::ParamSpecBoxed::builder::<gst::Structure>("stats")
                    .nick("Statistics")
                    .blurb("Read-only: subtitle-cues, subtitle-cues-too-fast, subtitle-cues-short, subtitle-chars-replaced (SCC), invalid-utf8-buffers")
                    .read_only()
                    .build(),
            );
            props
        });
        PROPERTIES.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        if !self.files.lock().unwrap().set_property(value, pspec) {
            self.settings
                .set_property(self.obj().upcast_ref(), value, pspec);
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        if pspec.name() == "stats" {
            let (counts, invalid) = *self.counts.lock().unwrap();
            let mut stats = gst::Structure::new_empty("stats");
            add_subtitle_stats(&mut stats, counts);
            stats.set(field::INVALID_UTF8_BUFFERS, invalid);
            return stats.to_value();
        }
        let files = self.files.lock().unwrap().property(pspec);
        files.unwrap_or_else(|| self.settings.property(pspec))
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.sinkpad).unwrap();
        obj.add_pad(&self.srcpad).unwrap();
    }
}

impl GstObjectImpl for SubEnc {}

impl ElementImpl for SubEnc {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static ELEMENT_METADATA: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Voxtral Realtime subtitle encoder",
                "Codec/Encoder/Subtitle",
                "Timed text into an SRT, WebVTT, SCC, IMSC 1.1 Text or EBU-TT-D file in a subtitle style; \
                 each cue followed by the format's closing part, so a killed pipeline leaves a valid file",
                "gst-plugin-voxtralrt authors",
            )
        });
        Some(&*ELEMENT_METADATA)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static PAD_TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            let sink_caps = gst::Caps::builder("text/x-raw")
                .field("format", "utf8")
                .build();
            let src_caps = caps::template_caps();
            vec![
                gst::PadTemplate::new(
                    "sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &sink_caps,
                )
                .unwrap(),
                gst::PadTemplate::new(
                    "src",
                    gst::PadDirection::Src,
                    gst::PadPresence::Always,
                    &src_caps,
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
        match transition {
            gst::StateChange::NullToReady => {
                self.settings.post_pending_warnings(self.obj().upcast_ref());
            }
            gst::StateChange::ReadyToPaused => {
                *self.state.lock().unwrap() = Some(State::new(None));
                *self.counts.lock().unwrap() = Default::default();
            }
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        if transition == gst::StateChange::PausedToReady {
            *self.state.lock().unwrap() = None;
        }
        Ok(success)
    }
}
