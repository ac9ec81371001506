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
use super::state::{Out, State};
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
    /// Runs `f` on the state under its lock; none while stopped.
    fn update<T>(&self, f: impl FnOnce(&mut State) -> T) -> Result<T, gst::FlowError> {
        let mut guard = self.state.lock().unwrap();
        guard.as_mut().map(f).ok_or(gst::FlowError::Flushing)
    }

    /// The format to write: the one set, or (auto) the first that
    /// downstream takes; its caps go out. Downstream taking none is a
    /// not-negotiated ERROR of this element, said once. Downstream is asked
    /// with the state lock released.
    fn negotiate(&self) -> Result<FileKind, gst::FlowError> {
        let known = self.update(|s| (s.kind, s.refused))?;
        match known {
            (Some(kind), _) => return Ok(kind),
            (None, true) => return Err(gst::FlowError::NotNegotiated),
            (None, false) => {}
        }
        let format = self.files.lock().unwrap().format;
        let offered = caps::offered(format);
        let Some(kind) = caps::choose(&self.srcpad.peer_query_caps(Some(&offered))) else {
            self.update(|s| s.refused = true)?;
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
        self.update(|s| s.kind = Some(kind))?;
        self.srcpad
            .push_event(gst::event::Caps::new(&caps::caps_of(kind)));
        Ok(kind)
    }

    /// Makes the file the first time: its tail after each cue where
    /// downstream can seek, else once at the end. Downstream is asked with
    /// the state lock released.
    fn make_stream(&self) -> Result<(), gst::FlowError> {
        let kind = self.negotiate()?;
        if self.update(|s| s.stream.is_some())? {
            return Ok(());
        }
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
        self.update(|state| {
            if let Some(language) = &state.tag_language {
                stream.tag_language(language);
            }
            stream.set_speaker(state.speaker.clone());
            state.stream = Some(stream);
        })
    }

    /// What `write` makes of the file (made first), as it goes downstream;
    /// the state lock is held only while `write` runs.
    fn written(
        &self,
        write: impl FnOnce(&mut SubtitleStream) -> Vec<WriteAt>,
    ) -> Result<Vec<Out>, gst::FlowError> {
        self.make_stream()?;
        self.update(|state| {
            let writes = write(state.stream.as_mut()?);
            Some(self.outgoing(state, writes))
        })?
        .ok_or(gst::FlowError::Flushing)
    }

    /// `writes` as they go downstream, the counts of `stats` updated.
    fn outgoing(&self, state: &mut State, writes: Vec<WriteAt>) -> Vec<Out> {
        if let Some(stream) = &state.stream {
            *self.counts.lock().unwrap() = (stream.counts(), state.invalid_utf8);
        }
        state.outgoing(writes)
    }

    /// Sends `out` downstream in order, with the state lock released (as
    /// gst-plugins-rs' encoders push); the first flow error stops it.
    fn send(&self, out: Vec<Out>) -> Result<gst::FlowSuccess, gst::FlowError> {
        for item in out {
            match item {
                Out::Buffer(buffer) => {
                    self.srcpad.push(buffer)?;
                }
                Out::Event(event) => {
                    self.srcpad.push_event(event);
                }
            }
        }
        Ok(gst::FlowSuccess::Ok)
    }

    /// Where text or a silence at `pts` for `duration` falls in the
    /// stream's time, the input having reached its end; none outside the
    /// segment.
    fn place(
        &self,
        pts: gst::ClockTime,
        duration: Option<gst::ClockTime>,
    ) -> Result<Option<(u64, u64)>, gst::FlowError> {
        self.update(|state| {
            let start = state.stream_time(pts)?;
            let end = start + duration.map_or(0, |d| d.nseconds());
            state.reach(end);
            Some((start, end))
        })
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
        let (text, invalid) = self.text_of(&buffer)?;
        if invalid {
            self.update(|s| s.invalid_utf8 += 1)?;
        }
        let Some((start, end)) = self.place(pts, Some(duration))? else {
            gst::debug!(
                CAT,
                imp = self,
                "text at {pts} is outside the segment: left out"
            );
            return Ok(gst::FlowSuccess::Ok);
        };
        let out = self.written(|stream| stream.text(&text, start, end))?;
        self.send(or_gap(out, pts, Some(duration)))
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
        if self.update(|s| s.invalid_utf8 == 0)? {
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
        if self.state.lock().unwrap().is_none() {
            return gst::Pad::event_default(pad, Some(&*self.obj()), event);
        }
        match event.view() {
            EventView::Caps(_) => self.negotiate().is_ok(),
            EventView::Segment(e) => self.new_segment(e.segment()),
            EventView::Tag(e) => {
                if let Some(language) = e.tag().get::<gst::tags::LanguageCode>() {
                    self.tag_language(language.get());
                }
                gst::Pad::event_default(pad, Some(&*self.obj()), event)
            }
            EventView::Gap(e) => {
                let (pts, duration) = e.get();
                self.silence(pts, duration).is_ok()
            }
            EventView::CustomDownstream(e) => {
                match e.structure().filter(|s| s.name() == SPEAKER_CHANGE_EVENT) {
                    Some(s) => self.speaker(&s.get::<String>("speaker").unwrap_or_default()),
                    None => gst::Pad::event_default(pad, Some(&*self.obj()), event),
                }
            }
            EventView::Eos(_) => {
                let until = self.update(|s| s.seen_until).ok().flatten();
                if let Ok(out) = self.written(|stream| stream.end(until)) {
                    let _ = self.send(out);
                }
                self.srcpad.push_event(event)
            }
            EventView::FlushStop(_) => {
                let _ = self.update(start_over);
                self.srcpad.push_event(event)
            }
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }

    /// A new segment: the cue held so far ends (its writes go out after
    /// the first byte segment).
    fn new_segment(&self, segment: &gst::Segment) -> bool {
        let Some(segment) = segment.downcast_ref::<gst::ClockTime>() else {
            gst::element_imp_error!(
                self,
                gst::StreamError::Format,
                (
                    "voxtralrtsubenc needs text in a time segment, not {:?}",
                    segment.format()
                )
            );
            return false;
        };
        let out = self.update(|state| {
            let writes = state
                .stream
                .as_mut()
                .map_or_else(Vec::new, |s| s.finish(None));
            state.segment = segment.clone();
            let mut out: Vec<Out> = state.first_segment().into_iter().collect();
            out.extend(self.outgoing(state, writes));
            out
        });
        out.and_then(|out| self.send(out)).is_ok()
    }

    fn tag_language(&self, language: &str) {
        gst::debug!(CAT, imp = self, "language tag {language}");
        let _ = self.update(|state| match &mut state.stream {
            Some(stream) => stream.tag_language(language),
            None => state.tag_language = Some(language.to_owned()),
        });
    }

    /// A GAP: silence until its end, which may end a cue.
    fn silence(
        &self,
        pts: gst::ClockTime,
        duration: Option<gst::ClockTime>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let Some((_, end)) = self.place(pts, duration)? else {
            return Ok(gst::FlowSuccess::Ok);
        };
        let out = self.written(|stream| stream.silence_until(end))?;
        self.send(or_gap(out, pts, duration))
    }

    fn speaker(&self, given: &str) -> bool {
        let speaker = check_name(given)
            .map_err(|why| {
                gst::element_imp_warning!(
                    self,
                    gst::StreamError::Format,
                    ("Speaker {given:?}: {why}; their words are written without a name")
                );
            })
            .ok();
        let _ = self.update(|state| {
            state.speaker.clone_from(&speaker);
            if let Some(stream) = &mut state.stream {
                stream.set_speaker(speaker);
            }
        });
        true
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

/// `out`; if nothing goes out (the text is held until its cue's end is
/// decided), a GAP over the input's time instead, so that downstream
/// prerolls and keeps going (tee branches wait on each other's sinks).
fn or_gap(out: Vec<Out>, pts: gst::ClockTime, duration: Option<gst::ClockTime>) -> Vec<Out> {
    if !out.is_empty() {
        return out;
    }
    vec![Out::Event(
        gst::event::Gap::builder(pts).duration(duration).build(),
    )]
}

/// After a flush: filesink empties the file on FLUSH_STOP, so the file
/// starts over, header and all, in the language and with the speaker known
/// (their events are not sent again).
fn start_over(state: &mut State) {
    let language = match &state.stream {
        Some(stream) => stream.language().map(str::to_owned),
        None => state.tag_language.clone(),
    };
    let speaker = state.speaker.take();
    *state = State::new(state.kind);
    state.tag_language = language;
    state.speaker = speaker;
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
