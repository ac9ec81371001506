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

    fn eos(&mut self, _seqnum: gst::Seqnum, _end: Option<gst::ClockTime>) {
        self.eos.finish(true);
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
}

impl Sink {
    pub(crate) fn set_recognizer_wrapper(&self, wrapper: Option<crate::recognizer::Wrapper>) {
        self.state.lock().unwrap().set_wrapper(wrapper);
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
        SinkOutput {
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
            "stats" => self.state.lock().unwrap().stats().to_structure().to_value(),
            _ => self.settings.property(pspec),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        // A transcript is wanted as fast as the audio comes, not in step
        // with the clock.
        self.obj().set_sync(false);
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
            vec![gst::PadTemplate::new(
                "sink",
                gst::PadDirection::Sink,
                gst::PadPresence::Always,
                &input::sink_caps(),
            )
            .unwrap()]
        });
        PAD_TEMPLATES.as_ref()
    }

    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        if transition == gst::StateChange::NullToReady {
            self.state
                .lock()
                .unwrap()
                .load(self.obj().upcast_ref(), &self.settings)?;
        }
        let success = self.parent_change_state(transition)?;
        if transition == gst::StateChange::ReadyToNull {
            self.state.lock().unwrap().unload();
        }
        Ok(success)
    }
}

impl BaseSinkImpl for Sink {
    fn start(&self) -> Result<(), gst::ErrorMessage> {
        let settings = self.settings.snapshot();
        let output = self.output(&settings, self.open_file()?);
        self.state
            .lock()
            .unwrap()
            .start(self.obj().upcast_ref(), &settings, Box::new(output))
    }

    fn stop(&self) -> Result<(), gst::ErrorMessage> {
        self.eos.finish(false);
        let core = self.state.lock().unwrap().take_core();
        if let Some(core) = core {
            let stopped = stop_core(core);
            self.state.lock().unwrap().stopped(stopped);
        }
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
                    let pad = self.obj().static_pad("sink").expect("a sink's pad");
                    let _ = core.push_event(crate::core::check_speaker_event(event.clone(), &pad));
                }
            }
            _ => {}
        }
        self.parent_event(event)
    }
}
