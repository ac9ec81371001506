// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

/**
 * SECTION:element-voxtralrtsink
 * @see_also: voxtralrttranscriber
 *
 * Transcribes 16 kHz mono speech like voxtralrttranscriber and ends the
 * pipeline: each word or line goes out as a `voxtralrt-transcript` element
 * message, a `transcript` signal and a line of a txt, srt, vtt or jsonl file.
 *
 * Request pads `sink_%u` take one speaker each (their `speaker` names the
 * words); with them and the `sink` pad unlinked the element does not
 * preroll (it behaves as with `async=false`) and posts EOS once every pad
 * has had it.
 *
 * ## Example pipeline
 * ```bash
 * gst-launch-1.0 filesrc location=talk.wav ! wavparse ! audioconvert ! audioresample ! \
 *     voxtralrtsink model=q4_k_m location=talk.jsonl
 * ```
 */
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_base::prelude::*;
use gst_base::subclass::prelude::*;

use super::file_format::{FileCue, FileFormat};
use super::FileFormatChoice;
use crate::core::input;
use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::report::Reporter;
use crate::core::{Core, Output, TimedCue};
use crate::participants::{Participants, SpeakerPad};
use crate::settings::{OutputMode, Settings, SettingsCell};

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrtsink",
        gst::DebugColorFlags::empty(),
        Some("Voxtral Realtime transcription sink"),
    )
});

/// Properties of the sink alone.
#[derive(Debug, Clone)]
struct SinkSettings {
    location: Option<PathBuf>,
    format: FileFormatChoice,
    post_messages: bool,
}

impl Default for SinkSettings {
    fn default() -> Self {
        Self {
            location: None,
            format: FileFormatChoice::Auto,
            post_messages: true,
        }
    }
}

fn file_format(choice: FileFormatChoice, location: &Path) -> FileFormat {
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
struct EosLatch {
    /// `None` while waiting; `Some(true)` done, `Some(false)` given up.
    state: Mutex<Option<bool>>,
    cond: Condvar,
}

impl EosLatch {
    fn arm(&self) {
        *self.state.lock().unwrap() = None;
    }

    fn finish(&self, done: bool) {
        *self.state.lock().unwrap() = Some(done);
        self.cond.notify_all();
    }

    fn wait(&self) -> bool {
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
struct TranscriptFile {
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
    fn create(path: &Path, format: FileFormat) -> Result<TranscriptFile, gst::ErrorMessage> {
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
struct SinkOutput {
    element: glib::WeakRef<super::VoxtralRtSink>,
    file: Option<TranscriptFile>,
    line_cues: bool,
    post_messages: bool,
    report: Reporter,
    eos: Arc<EosLatch>,
    /// The request pads' words end here and no sink pad's EOS posts the
    /// element's: this output does.
    posts_eos: bool,
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
        if let (true, Some(element)) = (self.posts_eos, self.element.upgrade()) {
            let eos = gst::message::Eos::builder()
                .src(&element)
                .seqnum(seqnum)
                .build();
            let _ = element.post_message(eos);
        }
    }

    fn failed(&mut self) {
        self.eos.finish(false);
    }
}

#[derive(Default)]
pub struct Sink {
    settings: SettingsCell,
    sink_settings: Mutex<SinkSettings>,
    state: Mutex<Lifecycle>,
    eos: Arc<EosLatch>,
    /// The request pads'.
    participants: Participants,
    /// `async` as the application set it, while the element does without
    /// preroll (request pads, the sink pad unlinked).
    async_before: Mutex<Option<bool>>,
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
        let pad = self.sinkpad();
        if let (Some(core), Some(event)) = (self.core(), pad.speaker_event()) {
            let _ = core.push_event(crate::core::check_speaker_event(event, pad.upcast_ref()));
        }
    }

    /// Without a linked sink pad nothing would preroll: the request pads'
    /// words go out without it.
    fn do_without_preroll(&self) {
        let obj = self.obj();
        if !self.participants.merging() || self.sinkpad().is_linked() {
            return;
        }
        *self.async_before.lock().unwrap() = Some(obj.is_async());
        obj.set_async(false);
    }

    fn restore_async(&self) {
        if let Some(enabled) = self.async_before.lock().unwrap().take() {
            self.obj().set_async(enabled);
        }
    }

    fn core(&self) -> Option<Arc<Core>> {
        self.state.lock().unwrap().core()
    }

    fn open_file(&self) -> Result<Option<TranscriptFile>, gst::ErrorMessage> {
        let sink = self.sink_settings.lock().unwrap().clone();
        sink.location
            .map(|path| TranscriptFile::create(&path, file_format(sink.format, &path)))
            .transpose()
    }

    fn output(&self, settings: &Settings, file: Option<TranscriptFile>) -> SinkOutput {
        let posts_eos = !self.participants.is_empty() && !self.sinkpad().is_linked();
        SinkOutput {
            posts_eos,
            element: self.obj().downgrade(),
            file,
            line_cues: settings.output == OutputMode::Lines,
            post_messages: self.sink_settings.lock().unwrap().post_messages,
            report: Reporter::new(self.obj().upcast_ref()),
            eos: self.eos.clone(),
        }
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
}

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
                glib::ParamSpecEnum::builder_with_default("format", FileFormatChoice::Auto)
                    .nick("File format")
                    .blurb("Format of the transcript file: txt, srt, vtt or jsonl; auto picks it from the location's extension")
                    .mutable_ready()
                    .build(),
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
            "format" => sink.format = value.get().expect("type checked"),
            "post-messages" => sink.post_messages = value.get().expect("type checked"),
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
            "format" => sink.format.to_value(),
            "post-messages" => sink.post_messages.to_value(),
            "stats" => {
                let mut stats = self.state.lock().unwrap().stats().to_structure();
                if let Some(pads) = self.participants.stats() {
                    stats.set("participants", pads);
                }
                stats.to_value()
            }
            _ => self.settings.property(pspec),
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

impl ElementImpl for Sink {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static ELEMENT_METADATA: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Voxtral Realtime transcription sink",
                "Sink/Audio/Text",
                "Transcribes speech with Mistral's Voxtral Mini 4B Realtime (transcribe.cpp or a vLLM server) into \
                 bus messages, a 'transcript' signal and a txt/srt/vtt/jsonl file",
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
                self.state.lock().unwrap().load(element, &self.settings)?;
                self.participants.load(element, &self.settings)?;
            }
            gst::StateChange::ReadyToPaused => self.do_without_preroll(),
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        match transition {
            gst::StateChange::PausedToReady => self.restore_async(),
            gst::StateChange::ReadyToNull => {
                self.state.lock().unwrap().unload();
                self.participants.unload();
            }
            _ => {}
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
        self.participants
            .request(self, templ, name, &self.settings, own_core_running)
    }

    fn release_pad(&self, pad: &gst::Pad) {
        self.participants.release(self.obj().upcast_ref(), pad);
    }
}

impl BaseSinkImpl for Sink {
    fn start(&self) -> Result<(), gst::ErrorMessage> {
        let settings = self.settings.snapshot();
        let output = self.output(&settings, self.open_file()?);
        let output = self
            .participants
            .output_for_sink_pad(self.sinkpad().is_linked(), Box::new(output));
        let obj = self.obj();
        let element: &gst::Element = obj.upcast_ref();
        self.state
            .lock()
            .unwrap()
            .start(element, &settings, output)?;
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
            let core = state.core().ok_or(gst::FlowError::Flushing)?;
            let audio = state.input.take_buffer(&sinkpad, buffer, &core)?;
            (core, audio)
        };
        core.push_audio(audio)
    }

    fn event(&self, event: gst::Event) -> bool {
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
