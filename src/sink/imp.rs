// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

/**
 * SECTION:element-voxtralrtsink
 * @see_also: voxtralrttranscriber
 *
 * Transcribes 16 kHz mono speech like voxtralrttranscriber and ends the
 * pipeline: each word or line goes out as a `voxtralrt-transcript` element
 * message, a `transcript` signal and an entry of a file: txt, srt, vtt,
 * jsonl, scc, ttml (IMSC 1.1 Text) or ebu-tt-d.
 *
 * Request pads `sink_%u` take one speaker each (their `speaker` names the
 * words); with them and the `sink` pad unlinked the element prerolls once
 * every linked request pad has brought audio, as a mixer does, and posts
 * EOS once every pad has had it.
 *
 * ## Example pipeline
 * ```bash
 * gst-launch-1.0 filesrc location=talk.wav ! wavparse ! audioconvert ! audioresample ! \
 *     voxtralrtsink model=q4_k_m location=talk.jsonl
 * ```
 */
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_base::subclass::prelude::*;

use super::output::{create_file, EosLatch, SinkOutput};
use super::own_pad::OwnPad;
use super::CAT;
use crate::core::input;
use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::report::Reporter;
use crate::core::styled::{add_subtitle_stats, style_lines, SharedCounts};
use crate::core::{Core, Output};
use crate::participants::{Participants, SpeakerPad};
use crate::settings::{FileFormat, FileSettings, OutputMode, Settings, SettingsCell};
use crate::subtitles::file::{FileChoice, TranscriptFile};
use crate::subtitles::StyleName;

/// The sink's subtitle style unless set: subtitle files a person can read
/// (2 lines of 42 characters, 5/6 s to 7 s, 20 characters a second).
const DEFAULT_STYLE: StyleName = StyleName::Netflix;

/// Properties of the sink alone.
#[derive(Debug, Clone)]
struct SinkSettings {
    location: Option<PathBuf>,
    /// `format`, and SCC's `caption-mode` and `drop-frame`.
    file: FileSettings,
    post_messages: bool,
}

impl Default for SinkSettings {
    fn default() -> Self {
        Self {
            location: None,
            file: FileSettings::new(FileChoice::Auto),
            post_messages: true,
        }
    }
}

pub struct Sink {
    settings: SettingsCell,
    sink_settings: Mutex<SinkSettings>,
    state: Mutex<Lifecycle>,
    eos: Arc<EosLatch>,
    /// The request pads'.
    participants: Participants,
    /// Feeds the sink pad while it is unlinked (own_pad.rs).
    own_pad: Arc<OwnPad>,
    /// The counts of the subtitle cues made (in the file, or with
    /// output=lines), for `stats`.
    subtitle_counts: SharedCounts,
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            settings: SettingsCell::new(Settings {
                subtitle_style: DEFAULT_STYLE,
                ..Settings::default()
            }),
            sink_settings: Default::default(),
            state: Default::default(),
            eos: Default::default(),
            participants: Default::default(),
            own_pad: Default::default(),
            subtitle_counts: Default::default(),
        }
    }
}

impl Sink {
    pub(crate) fn set_recognizer_wrapper(&self, wrapper: Option<crate::recognizer::Wrapper>) {
        self.state.lock().unwrap().set_wrapper(wrapper.clone());
        self.participants.set_wrapper(wrapper);
    }

    fn sinkpad(&self) -> SpeakerPad {
        let pad = self.obj().static_pad("sink").expect("always pad");
        pad.downcast().expect("made from the sink template's gtype")
    }

    /// Tells the sink pad's core who speaks from here on, if its pad names
    /// a speaker.
    fn announce_sink_speaker(&self) {
        if let Some(core) = self.core() {
            self.sinkpad().announce_to(&core);
        }
    }

    fn core(&self) -> Option<Arc<Core>> {
        self.state.lock().unwrap().core()
    }

    fn open_file(&self, settings: &Settings) -> Result<Option<TranscriptFile>, gst::ErrorMessage> {
        let sink = self.sink_settings.lock().unwrap().clone();
        let options = sink.file.options(settings.language_code.clone());
        sink.location
            .map(|path| create_file(&path, sink.file.format, settings.style(), &options))
            .transpose()
    }

    /// Where the worker's words go: messages, the signal and the file;
    /// with output=lines in a style, as cues of that style.
    fn output(&self, settings: &Settings, file: Option<TranscriptFile>) -> Box<dyn Output> {
        let output = SinkOutput {
            own_pad: self.own_pad.clone(),
            element: self.obj().downgrade(),
            file,
            line_cues: settings.output == OutputMode::Lines,
            file_counts: self.subtitle_counts.clone(),
            post_messages: self.sink_settings.lock().unwrap().post_messages,
            report: Reporter::new(self.obj().upcast_ref()),
            eos: self.eos.clone(),
            segment: None,
        };
        // A file waits for no muxer: a stall lets no cue go early.
        style_lines(Box::new(output), settings, &self.subtitle_counts, false)
    }

    fn handle_eos(&self, event: gst::Event) -> bool {
        let Some(core) = self.core() else {
            return false;
        };
        self.eos.arm();
        if core.push_event(event).is_err() {
            return false;
        }
        // The last words are posted and written before EOS completes.
        self.eos.wait()
    }
}

#[glib::object_subclass]
impl ObjectSubclass for Sink {
    const NAME: &'static str = "GstVoxtralRtSink";
    type Type = super::VoxtralRtSink;
    type ParentType = gst_base::BaseSink;
    type Interfaces = (gst::ChildProxy,);
}

/// `subtitle-style`'s blurb: what it acts on, the styles, the default.
const STYLE_BLURB: &str = "Cues of subtitle files and of output=lines: netflix (default: 2x42 chars, 5/6-7 s, 20 chars/s, 17 in other languages), bbc (2x37, 180 words/min), dcmp (2x32, 2-7 s, 225 words/min) or broadcast (rows as spoken)";

impl ObjectImpl for Sink {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = Settings::param_specs();
            props.extend([
                glib::ParamSpecString::builder("location")
                    .nick("Transcript file")
                    .blurb("File to write the transcript to as it comes, one whole cue per write, so that a killed pipeline leaves a valid file (none: no file). Opened when the element starts")
                    .mutable_ready()
                    .build(),
                FileSettings::format_param_spec(FileFormat::Auto, "File format: auto (by extension; .ebu.ttml is ebu-tt-d), txt, jsonl (a record per word or line), or cues of subtitle-style: srt, vtt, scc, ttml (IMSC 1.1 Text) or ebu-tt-d"),
                Settings::subtitle_style_param_spec(DEFAULT_STYLE, STYLE_BLURB),
            ]);
            props.extend(FileSettings::scc_param_specs());
            props.extend([
                glib::ParamSpecBoolean::builder("post-messages")
                    .nick("Post messages")
                    .blurb("Post a voxtralrt-transcript element message per word or line (text and its buffer, running and stream times)")
                    .default_value(true)
                    .mutable_playing()
                    .build(),
                crate::core::stats_param_spec(),
            ]);
            props
        });
        PROPERTIES.as_ref()
    }

    fn signals() -> &'static [glib::subclass::Signal] {
        static SIGNALS: LazyLock<Vec<glib::subclass::Signal>> = LazyLock::new(|| {
            vec![glib::subclass::Signal::builder("transcript")
                .param_types([
                    String::static_type(),
                    u64::static_type(),
                    u64::static_type(),
                    // The speaker (NULL when no speaker source is in use).
                    String::static_type(),
                ])
                .build()]
        });
        SIGNALS.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        let mut sink = self.sink_settings.lock().unwrap();
        match pspec.name() {
            "location" => {
                sink.location = value
                    .get::<Option<String>>()
                    .expect("type checked")
                    .map(PathBuf::from)
            }
            "post-messages" => sink.post_messages = value.get().expect("type checked"),
            _ if sink.file.set_property(value, pspec) => {}
            _ => {
                drop(sink);
                self.settings
                    .set_property(self.obj().upcast_ref(), value, pspec);
            }
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let sink = self.sink_settings.lock().unwrap();
        match pspec.name() {
            "location" => sink
                .location
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .to_value(),
            "post-messages" => sink.post_messages.to_value(),
            "stats" => {
                let mut stats = self.state.lock().unwrap().stats().to_structure();
                self.participants.add_stats(&mut stats);
                add_subtitle_stats(&mut stats, *self.subtitle_counts.lock().unwrap());
                stats.to_value()
            }
            _ => sink
                .file
                .property(pspec)
                .unwrap_or_else(|| self.settings.property(pspec)),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        // A transcript is wanted as fast as the audio comes, not in step
        // with the clock.
        self.obj().set_sync(false);
        let weak = self.obj().downgrade();
        self.sinkpad().connect_notify(Some("speaker"), move |_, _| {
            if let Some(element) = weak.upgrade() {
                element.imp().announce_sink_speaker();
            }
        });
    }
}

impl GstObjectImpl for Sink {}

// `sink_0::speaker=Host` on a gst-launch-1.0 line: the pads are the children
// (request pads announce themselves as they come).
impl ChildProxyImpl for Sink {
    fn child_by_index(&self, index: u32) -> Option<glib::Object> {
        crate::participants::pad_child(self.obj().upcast_ref(), index)
    }

    fn children_count(&self) -> u32 {
        self.obj().num_pads() as u32
    }
}

impl ElementImpl for Sink {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static ELEMENT_METADATA: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Voxtral Realtime transcription sink",
                "Sink/Audio/Text",
                "Transcribes speech with Mistral's Voxtral Mini 4B Realtime (transcribe.cpp or a vLLM server) into \
                 bus messages, a 'transcript' signal and a txt/srt/vtt/jsonl/scc/ttml (IMSC 1.1)/ebu-tt-d file",
                "gst-plugin-voxtralrt authors",
            )
        });
        Some(&*ELEMENT_METADATA)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static PAD_TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            let sink = |name, presence| {
                gst::PadTemplate::with_gtype(
                    name,
                    gst::PadDirection::Sink,
                    presence,
                    &input::sink_caps(),
                    SpeakerPad::static_type(),
                )
                .unwrap()
            };
            vec![
                sink("sink", gst::PadPresence::Always),
                sink("sink_%u", gst::PadPresence::Request),
            ]
        });
        PAD_TEMPLATES.as_ref()
    }

    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        let obj = self.obj();
        let element: &gst::Element = obj.upcast_ref();
        match transition {
            gst::StateChange::NullToReady => {
                let sinkpad = self.sinkpad();
                self.participants.load(
                    element,
                    &self.settings,
                    sinkpad.upcast_ref(),
                    &self.state,
                )?;
            }
            gst::StateChange::ReadyToPaused => self.own_pad.reset(),
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        if transition == gst::StateChange::ReadyToNull {
            self.state.lock().unwrap().unload();
            self.participants.unload();
        }
        Ok(success)
    }

    fn request_new_pad(
        &self,
        templ: &gst::PadTemplate,
        name: Option<&str>,
        _caps: Option<&gst::Caps>,
    ) -> Option<gst::Pad> {
        let own_core_running = self.core().is_some();
        let pad = self
            .participants
            .request(self, templ, name, &self.settings, own_core_running)?;
        // What it brings first counts towards the preroll.
        let (own_pad, element) = (self.own_pad.clone(), self.obj().downgrade());
        pad.add_probe(
            gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
            move |pad, info| {
                let brings = match &info.data {
                    Some(gst::PadProbeData::Buffer(_)) => true,
                    Some(gst::PadProbeData::Event(e)) => {
                        matches!(e.type_(), gst::EventType::Gap | gst::EventType::Eos)
                    }
                    _ => false,
                };
                if let (true, Some(element)) = (brings, element.upgrade()) {
                    own_pad.pad_started(element.upcast_ref(), pad);
                }
                gst::PadProbeReturn::Ok
            },
        );
        Some(pad)
    }

    fn release_pad(&self, pad: &gst::Pad) {
        self.participants.release(self.obj().upcast_ref(), pad);
    }
}

impl BaseSinkImpl for Sink {
    fn start(&self) -> Result<(), gst::ErrorMessage> {
        let settings = self.settings.snapshot();
        let output = self.output(&settings, self.open_file(&settings)?);
        let sinkpad = self.sinkpad();
        let linked = sinkpad.is_linked();
        let obj = self.obj();
        let element: &gst::Element = obj.upcast_ref();
        let output = self.participants.output_for_sink_pad(
            element,
            sinkpad.upcast_ref(),
            self.settings.reported_latency(),
            output,
        );
        // Unlinked, the pad brings nothing: the request pads' words are the
        // element's, and it feeds the pad itself.
        self.own_pad.set_active(!linked);
        {
            let mut state = self.state.lock().unwrap();
            match output {
                Some(output) => state.start(element, &settings, output)?,
                None => state.start_idle(),
            }
        }
        self.announce_sink_speaker();
        self.participants.start(element, &settings)
    }

    fn stop(&self) -> Result<(), gst::ErrorMessage> {
        self.eos.finish(false);
        let core = self.state.lock().unwrap().take_core();
        if let Some(core) = core {
            let stopped = stop_core(core);
            self.state.lock().unwrap().stopped(stopped);
        }
        self.participants.stop();
        Ok(())
    }

    fn set_caps(&self, caps: &gst::Caps) -> Result<(), gst::LoggableError> {
        self.state
            .lock()
            .unwrap()
            .input
            .set_caps(caps)
            .map_err(|msg| gst::loggable_error!(CAT, "{}", msg))
    }

    fn render(&self, buffer: &gst::Buffer) -> Result<gst::FlowSuccess, gst::FlowError> {
        let sinkpad = self.obj().static_pad("sink").expect("always pad");
        let (core, audio) = {
            let mut state = self.state.lock().unwrap();
            let core = state.core_for_audio(self.obj().upcast_ref())?;
            let audio = state.input.take_buffer(&sinkpad, buffer, &core)?;
            (core, audio)
        };
        core.push_audio(audio)
    }

    fn event(&self, event: gst::Event) -> bool {
        if self.own_pad.is_active() {
            // The element's own events (own_pad.rs): BaseSink's alone.
            return self.parent_event(event);
        }
        match event.view() {
            gst::EventView::FlushStart(_) => {
                self.eos.finish(false);
                if let Some(core) = self.core() {
                    core.flush_start();
                }
            }
            gst::EventView::FlushStop(_) => {
                self.state.lock().unwrap().input.clear();
                if let Some(core) = self.core() {
                    core.flush_stop();
                }
            }
            gst::EventView::Eos(_) if !self.handle_eos(event.clone()) => {
                gst::debug!(
                    CAT,
                    imp = self,
                    "EOS came without the last words (flush, stop or error)"
                );
            }
            gst::EventView::Segment(_) | gst::EventView::Gap(_) => {
                if let Some(core) = self.core() {
                    let _ = core.push_event(event.clone());
                }
            }
            gst::EventView::CustomDownstream(_) => {
                if let Some(core) = self.core() {
                    let pad = self.sinkpad();
                    let _ = core.push_event(crate::core::check_speaker_event(
                        event.clone(),
                        pad.upcast_ref(),
                    ));
                }
            }
            _ => {}
        }
        self.parent_event(event)
    }
}
