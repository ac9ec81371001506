// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use crate::core::input;
use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::{Core, Output, TimedCue};
use crate::engine;
use crate::settings::{Settings, SettingsCell};

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
}

/// Delivers the worker's results on the src pad.
struct SrcOutput {
    element: glib::WeakRef<super::VoxtralRtTranscriber>,
    srcpad: gst::Pad,
    language_code: Option<String>,
    caps_sent: bool,
    /// The next buffer starts a new run of data (first after a SEGMENT or
    /// a flush) and must say so.
    discont: bool,
    /// Where what went out last ends, on the output timeline.
    position: Option<gst::ClockTime>,
}

impl SrcOutput {
    fn element(&self) -> Option<super::VoxtralRtTranscriber> {
        self.element.upgrade()
    }

    fn ensure_caps(&mut self) {
        if !self.caps_sent {
            self.caps_sent = true;
            let caps = gst::Caps::builder("text/x-raw")
                .field("format", "utf8")
                .build();
            self.srcpad.push_event(gst::event::Caps::new(&caps));
        }
    }

    fn advance_to(&mut self, end: gst::ClockTime) {
        self.position = Some(self.position.map_or(end, |p| p.max(end)));
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
        let mut buffer = gst::Buffer::from_mut_slice(cue.text.into_bytes());
        {
            let buffer = buffer.get_mut().expect("new buffer");
            buffer.set_pts(cue.pts);
            buffer.set_duration(cue.duration);
            if std::mem::take(&mut self.discont) {
                buffer.set_flags(gst::BufferFlags::DISCONT);
            }
        }
        self.advance_to(cue.pts + cue.duration);
        gst::debug!(CAT, obj = self.srcpad, "pushing {:?}", buffer);
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

    fn gap(&mut self, pts: gst::ClockTime, duration: gst::ClockTime, seqnum: Option<gst::Seqnum>) {
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
        if segment.is_some() {
            self.ensure_caps();
            self.discont = true;
            self.position = None;
        }
        self.srcpad.push_event(event);
        if segment.is_some() {
            self.send_language_tag();
        }
    }

    fn eos(&mut self, seqnum: gst::Seqnum) {
        self.ensure_caps();
        self.srcpad
            .push_event(gst::event::Eos::builder().seqnum(seqnum).build());
    }

    fn flushed(&mut self) {
        self.discont = true;
        self.position = None;
    }

    fn resume(&mut self) {
        // A zero-length GAP where the text stands is enough to preroll on,
        // and says nothing new about the stream.
        if let Some(position) = self.position {
            self.srcpad.push_event(
                gst::event::Gap::builder(position)
                    .duration(gst::ClockTime::ZERO)
                    .build(),
            );
        }
    }

    fn error(&mut self, error: &engine::Error) {
        if let Some(element) = self.element() {
            gst::element_error!(element, gst::LibraryError::Failed, ("{}", error));
        }
    }

    fn warning(&mut self, message: &str) {
        if let Some(element) = self.element() {
            gst::element_warning!(element, gst::CoreError::Clock, ("{}", message));
        }
    }

    fn running_time(&self) -> Option<gst::ClockTime> {
        self.element()?.current_running_time()
    }

    fn message(&mut self, structure: gst::Structure) {
        if let Some(element) = self.element() {
            let _ = element.post_message(
                gst::message::Element::builder(structure)
                    .src(&element)
                    .build(),
            );
        }
    }
}

impl Transcriber {
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
                let ours = gst::ClockTime::from_mseconds(u64::from(self.settings.latency_ms()));
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
            discont: true,
            position: None,
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
        }
    }
}

impl ObjectImpl for Transcriber {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(Settings::param_specs);
        PROPERTIES.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        self.settings
            .set_property(self.obj().upcast_ref(), value, pspec);
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        if pspec.name() == "stats" {
            return self.state.lock().unwrap().stats().to_structure().to_value();
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
                 Mistral's Voxtral Mini 4B Realtime, run locally through transcribe.cpp",
                "gst-plugin-voxtralrt authors",
            )
        });
        Some(&*ELEMENT_METADATA)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static PAD_TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            let src_caps = gst::Caps::builder("text/x-raw")
                .field("format", "utf8")
                .build();
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
