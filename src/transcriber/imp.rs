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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use crate::core::input;
use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::styled::{add_subtitle_stats, style_lines, SharedCounts};
use crate::core::Core;
use crate::settings::{Settings, SettingsCell};
use crate::subtitles::StyleName;

use super::caps::src_caps;
use super::caption_output::OutputLosses;
use super::captions::CaptionSettings;
use super::output::SrcOutput;
use super::translate::Taps;
use super::CAT;
use crate::participants::{Participants, SpeakerPad};

#[cfg(feature = "translate")]
use super::translate::TranslatePad;
#[cfg(feature = "translate")]
use super::translate::TranslatePads;
#[cfg(feature = "translate")]
use super::translate::TranslateSettings;

pub struct Transcriber {
    sinkpad: SpeakerPad,
    srcpad: gst::Pad,
    settings: SettingsCell,
    state: Mutex<Lifecycle>,
    output_losses: Arc<OutputLosses>,
    caption_settings: Mutex<CaptionSettings>,
    /// `post-messages`, read per cue so it can change while playing.
    post_messages: Arc<AtomicBool>,
    /// The request pads'.
    participants: Participants,
    /// The counts of output=lines cues in a subtitle style, for `stats`.
    subtitle_counts: SharedCounts,
    #[cfg(feature = "translate")]
    translate_settings: Mutex<TranslateSettings>,
    #[cfg(feature = "translate")]
    translate_pads: TranslatePads,
}

impl Transcriber {
    pub(crate) fn set_recognizer_wrapper(&self, wrapper: Option<crate::recognizer::Wrapper>) {
        self.state.lock().unwrap().set_wrapper(wrapper.clone());
        self.participants.set_wrapper(wrapper);
    }

    /// Tells the sink pad's core who speaks from here on, if its pad names
    /// a speaker.
    fn announce_sink_speaker(&self) {
        if let Some(core) = self.core() {
            self.sinkpad.announce_to(&core);
        }
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
            let core = state.core_for_audio(self.obj().upcast_ref())?;
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
            _ if event.is_serialized() => {
                let element = self.obj();
                let core = self
                    .state
                    .lock()
                    .unwrap()
                    .core_for_audio(element.upcast_ref());
                core.is_ok_and(|core| {
                    core.push_event(crate::core::check_speaker_event(event, pad))
                        .is_ok()
                })
            }
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }

    fn src_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        let non_flushing_seek = match event.view() {
            gst::EventView::Seek(e) => !e.get().1.contains(gst::SeekFlags::FLUSH),
            _ => false,
        };
        let core = self.core().filter(|_| non_flushing_seek);
        let seqnum = event.seqnum();
        if let Some(core) = &core {
            core.expect_seek_segment(seqnum);
        }
        let handled = gst::Pad::event_default(pad, Some(&*self.obj()), event);
        if let Some(core) = core.filter(|_| !handled) {
            core.seek_refused(seqnum);
        }
        handled
    }

    fn src_query(&self, pad: &gst::Pad, query: &mut gst::QueryRef) -> bool {
        match query.view_mut() {
            gst::QueryViewMut::Latency(q) => {
                let Some((live, min, max)) = self.upstream_latency() else {
                    return false;
                };
                let ours = self.settings.reported_latency() + self.settings.style_hold();
                q.set(live, min + ours, max.map(|m| m + ours));
                gst::debug!(CAT, imp = self, "latency: live {live}, min {}", min + ours);
                true
            }
            _ => gst::Pad::query_default(pad, Some(&*self.obj()), query),
        }
    }

    /// What upstream of the linked sink pads answers.
    fn upstream_latency(&self) -> Option<(bool, gst::ClockTime, Option<gst::ClockTime>)> {
        self.participants
            .upstream_latency(self.sinkpad.upcast_ref())
    }

    fn start(&self) -> Result<(), gst::StateChangeError> {
        let settings = self.settings.snapshot();
        let obj = self.obj();
        let element: &gst::Element = obj.upcast_ref();
        let captions = self.caption_settings.lock().unwrap().clone();
        let output = SrcOutput::new(
            &self.obj(),
            &self.srcpad,
            &settings,
            captions.clone(),
            self.output_losses.clone(),
            self.post_messages.clone(),
            self.start_translations(element, &captions, &settings),
        );
        let output = style_lines(Box::new(output), &settings, &self.subtitle_counts, true);
        let sink_output = self.participants.output_for_sink_pad(
            element,
            self.sinkpad.upcast_ref(),
            self.settings.reported_latency(),
            output,
        );
        let started = {
            let mut state = self.state.lock().unwrap();
            match sink_output {
                Some(output) => state.start(element, &settings, output),
                None => {
                    state.start_idle();
                    Ok(())
                }
            }
        };
        let result = started.and_then(|()| {
            self.announce_sink_speaker();
            self.participants.start(element, &settings)
        });
        result.map_err(|msg| {
            self.post_error_message(msg);
            gst::StateChangeError
        })
    }

    /// Each translate pad's thread, from the translation settings.
    fn start_translations(
        &self,
        element: &gst::Element,
        captions: &CaptionSettings,
        settings: &Settings,
    ) -> Taps {
        #[cfg(feature = "translate")]
        {
            let translate = self.translate_settings.lock().unwrap().clone();
            let style = settings.style();
            self.translate_pads.start(
                element,
                &translate,
                captions,
                &self.output_losses,
                &style,
                settings.caption_alarm(),
            )
        }
        #[cfg(not(feature = "translate"))]
        {
            let _ = (element, captions, settings);
            Taps::default()
        }
    }

    fn stop(&self) {
        let core = self.state.lock().unwrap().take_core();
        if let Some(core) = core {
            let stopped = stop_core(core);
            self.state.lock().unwrap().stopped(stopped);
        }
        self.participants.stop();
    }
}

#[glib::object_subclass]
impl ObjectSubclass for Transcriber {
    const NAME: &'static str = "GstVoxtralRtTranscriber";
    type Type = super::VoxtralRtTranscriber;
    type ParentType = gst::Element;
    type Interfaces = (gst::ChildProxy,);

    fn with_class(klass: &Self::Class) -> Self {
        let templ = klass.pad_template("sink").unwrap();
        let sinkpad = gst::PadBuilder::<SpeakerPad>::from_template(&templ)
            .chain_function(|pad, parent, buffer| {
                Transcriber::catch_panic_pad_function(
                    parent,
                    || Err(gst::FlowError::Error),
                    |t| t.sink_chain(pad.upcast_ref(), buffer),
                )
            })
            .event_function(|pad, parent, event| {
                Transcriber::catch_panic_pad_function(
                    parent,
                    || false,
                    |t| t.sink_event(pad.upcast_ref(), event),
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
            output_losses: Arc::default(),
            caption_settings: Mutex::default(),
            post_messages: Arc::default(),
            participants: Participants::default(),
            subtitle_counts: SharedCounts::default(),
            #[cfg(feature = "translate")]
            translate_settings: Mutex::default(),
            #[cfg(feature = "translate")]
            translate_pads: TranslatePads::default(),
        }
    }
}

/// `subtitle-style`'s blurb: what it acts on, the styles, the default.
const STYLE_BLURB: &str = "Cues of output=lines and translate pads: broadcast (default: rows as spoken), netflix (2x42 chars, 5/6-7 s, 20 chars/s), bbc (2x37, 180 words/min) or dcmp (2x32, 2-7 s, 225 words/min); live, others add 7 s latency";

impl ObjectImpl for Transcriber {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut properties = Settings::param_specs();
            properties.extend(CaptionSettings::param_specs());
            properties.push(Settings::subtitle_style_param_spec(
                StyleName::Broadcast,
                STYLE_BLURB,
            ));
            properties.push(
                glib::ParamSpecBoolean::builder("post-messages")
                    .nick("Post messages")
                    .blurb("Also post a voxtralrt-transcript element message per word or line (as voxtralrtsink does)")
                    .default_value(false)
                    .mutable_playing()
                    .build(),
            );
            #[cfg(feature = "translate")]
            properties.extend(TranslateSettings::param_specs());
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
        #[cfg(feature = "translate")]
        if self
            .translate_settings
            .lock()
            .unwrap()
            .set(pspec.name(), value)
        {
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
            self.output_losses.add_to(&mut stats);
            // Each request pad's model stream: its own statistics.
            self.participants.add_stats(&mut stats);
            add_subtitle_stats(&mut stats, *self.subtitle_counts.lock().unwrap());
            #[cfg(feature = "translate")]
            self.translate_pads.add_stats(&mut stats);
            return stats.to_value();
        }
        #[cfg(feature = "translate")]
        if let Some(value) = self.translate_settings.lock().unwrap().get(pspec.name()) {
            return value;
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
        let weak = obj.downgrade();
        self.sinkpad.connect_notify(Some("speaker"), move |_, _| {
            if let Some(element) = weak.upgrade() {
                element.imp().announce_sink_speaker();
            }
        });
        obj.add_pad(&self.srcpad).unwrap();
    }
}

impl GstObjectImpl for Transcriber {}

// `sink_0::speaker=Host` on a gst-launch-1.0 line: the pads are the children
// (request pads announce themselves as they come).
impl ChildProxyImpl for Transcriber {
    fn child_by_index(&self, index: u32) -> Option<glib::Object> {
        crate::participants::pad_child(self.obj().upcast_ref(), index)
    }

    fn children_count(&self) -> u32 {
        self.obj().num_pads() as u32
    }
}

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
                gst::PadTemplate::with_gtype(
                    "sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &input::sink_caps(),
                    SpeakerPad::static_type(),
                )
                .unwrap(),
                gst::PadTemplate::with_gtype(
                    "sink_%u",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Request,
                    &input::sink_caps(),
                    SpeakerPad::static_type(),
                )
                .unwrap(),
                #[cfg(feature = "translate")]
                gst::PadTemplate::with_gtype(
                    "translate_src_%u",
                    gst::PadDirection::Src,
                    gst::PadPresence::Request,
                    &src_caps,
                    TranslatePad::static_type(),
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
            gst::StateChange::NullToReady => {
                let obj = self.obj();
                let element: &gst::Element = obj.upcast_ref();
                let sinkpad = self.sinkpad.upcast_ref();
                self.participants
                    .load(element, &self.settings, sinkpad, &self.state)?;
            }
            gst::StateChange::ReadyToPaused => self.start()?,
            gst::StateChange::PausedToReady => self.stop(),
            gst::StateChange::PausedToPlaying => {
                if let Some(core) = self.core() {
                    core.resume();
                }
                self.participants.resume();
            }
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
        #[cfg(feature = "translate")]
        if templ.name_template() == "translate_src_%u" {
            return self.request_translate_pad(templ, name);
        }
        let own_core_running = self.core().is_some();
        self.participants
            .request(self, templ, name, &self.settings, own_core_running)
    }

    fn release_pad(&self, pad: &gst::Pad) {
        #[cfg(feature = "translate")]
        if self.translate_pads.remove(pad) {
            let obj = self.obj();
            let _ = obj.remove_pad(pad);
            crate::participants::announce_child(obj.upcast_ref(), None, Some(pad));
            return;
        }
        self.participants.release(self.obj().upcast_ref(), pad);
    }
}

#[cfg(feature = "translate")]
impl Transcriber {
    /// A `translate_src_%u` pad: its language from its `language-code`,
    /// its text from the next start on.
    fn request_translate_pad(
        &self,
        templ: &gst::PadTemplate,
        name: Option<&str>,
    ) -> Option<gst::Pad> {
        let name = name.map_or_else(|| self.translate_pads.free_name(), str::to_owned);
        let pad = gst::PadBuilder::<TranslatePad>::from_template(templ)
            .name(name.as_str())
            .query_function(|pad, parent, query| {
                Transcriber::catch_panic_pad_function(
                    parent,
                    || false,
                    |t| t.translate_src_query(pad.upcast_ref(), query),
                )
            })
            .flags(gst::PadFlags::FIXED_CAPS)
            .build();
        if self.core().is_some() {
            gst::element_warning!(
                self.obj(),
                gst::CoreError::Pad,
                (
                    "{} was requested while running: it gives text from the next start on",
                    name
                )
            );
        }
        self.translate_pads.add(&pad);
        if self.state_at_least_paused() {
            let _ = pad.set_active(true);
        }
        let obj = self.obj();
        obj.add_pad(&pad).ok()?;
        crate::participants::announce_child(obj.upcast_ref(), Some(pad.upcast_ref()), None);
        Some(pad.upcast())
    }

    fn state_at_least_paused(&self) -> bool {
        self.obj().current_state() >= gst::State::Paused
    }

    /// A translate pad's LATENCY: the src pad's plus `translate-latency`.
    fn translate_src_query(&self, pad: &gst::Pad, query: &mut gst::QueryRef) -> bool {
        match query.view_mut() {
            gst::QueryViewMut::Latency(q) => {
                let Some((live, min, max)) = self.upstream_latency() else {
                    return false;
                };
                let ours = self.settings.reported_latency()
                    + self.settings.style_hold()
                    + self.translate_settings.lock().unwrap().latency();
                q.set(live, min + ours, max.map(|m| m + ours));
                true
            }
            _ => gst::Pad::query_default(pad, Some(&*self.obj()), query),
        }
    }
}
