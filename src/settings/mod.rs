// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The transcription settings both elements share: one definition of the
//! values, their defaults, their properties and how they are checked.

//!
//! - `choices.rs`: the enumerated values (engine, output, backend, ...);
//! - `properties.rs`: the properties' specs, and applying and reading a value;
//! - `cell.rs`: one element's settings behind a lock, with the warnings kept
//!   until it has a bus;
//! - `files.rs`: the subtitle file properties of the sink and the encoder;
//! - `formats.rs`: `subtitle-style` and `format` as enums.

mod cell;
mod choices;
mod files;
mod formats;
mod properties;

use std::path::PathBuf;

pub use cell::SettingsCell;
pub use choices::{
    mark_enums_as_plugin_api, BackendChoice, EngineChoice, OutputMode, Overload, ProfanityChoice,
    ServerChoice,
};
pub use files::FileSettings;
pub use formats::{mark_formats_as_plugin_api, FileFormat, SubtitleFormat, SubtitleStyle};

use crate::subtitles::{Style, StyleName};
use crate::transcript::{Segmentation, TranscriptConfig};
use crate::voxtral::{self, StreamConfig};
use crate::wording::SharedRules;

pub const DEFAULT_DELAY_MS: u32 = 480;
/// 160 ms: on the tiny fixture the element's cost over the bare engine stays
/// small from 160 ms up, while word timing keeps a 160 ms grain. 80 ms doubles
/// the number of decode calls for little gain in precision.
pub const DEFAULT_DECODE_INTERVAL_MS: u32 = 160;
/// About the engine's own cadence (transcribe.cpp decodes once a second
/// unless told otherwise), on the model's 80 ms frames: a model too slow at
/// `decode-interval` pays the fixed cost of a decode about as rarely, and
/// its words still come within the default latency (480 ms of delay, 960
/// of interval and 15 of look-ahead are less than 1500).
pub const DEFAULT_MAX_DECODE_INTERVAL_MS: u32 = 960;
pub const DEFAULT_LATENCY_MS: u32 = 1500;
pub const DEFAULT_LATENESS_MS: u32 = 0;
pub const DEFAULT_MAX_LINE_CHARS: u32 = 32;
/// An hour, well before the model's position limit of about 2.9 hours.
pub const DEFAULT_MAX_STREAM_DURATION_MS: u32 = 3_600_000;
/// Below this, a `max-stream-duration` is warned about: most likely a value
/// in seconds from before it counted milliseconds.
const SHORT_STREAM_DURATION_MS: u32 = 60_000;
/// `latency=-1`: in gst-plugins-rs 0.16 (speechmatics, awstranslate,
/// awspolly, textaccumulate) output stamped with the running time it goes
/// out at.
/// Here it would be a latency of 49 days, which no live pipeline plays.
const UNSYNCHRONISED_LATENCY: u32 = u32::MAX;
/// Holes in the input up to this long are filled with silence; longer ones
/// end the engine stream and a new one starts after the hole.
pub const MAX_FILLED_HOLE: gst::ClockTime = gst::ClockTime::from_seconds(2);

/// The model a vLLM server serves unless `model` names another.
pub const DEFAULT_SERVED_MODEL: &str = "mistralai/Voxtral-Mini-4B-Realtime-2602";
/// engine=vllm: a server that answers no audio for this long is taken to
/// have gone, as a dropped connection is.
pub const DEFAULT_SERVER_TIMEOUT_MS: u32 = 10_000;

/// Speech without text for this long restarts the model's stream: longer
/// than any sentence's delay (at most 2.4 s) and a pause in it, short
/// enough that a stalled model loses a sentence or two, not minutes.
pub const DEFAULT_STALL_TIMEOUT_MS: u32 = 15_000;
/// speech-only: a second without speech ends the model's stream: longer
/// than the pauses inside a sentence, so that dense speech keeps its
/// context, short enough that sparse speech leaves most silence undecoded.
pub const DEFAULT_SPEECH_HANGOVER_MS: u32 = 1000;
/// The shortest `stall-timeout` taken (besides 0, off): less is shorter
/// than any word's delay, and most likely a value in seconds from before it
/// counted milliseconds.
pub const MIN_STALL_TIMEOUT_MS: u32 = 1000;

/// Speech with no word out for this long raises the caption alarm: gst-plugins-rs's
/// `ccdetect` judges caption presence over 10 s; caption monitors take about
/// 30 s because they cannot tell speech from music, which the voice detector
/// here can; well above the 1.5 s latency (Ofcom asks for at most 3 s), and
/// before the watchdog's first restart (15 s of speech).
pub const DEFAULT_CAPTION_ALARM_MS: u32 = 10_000;
/// The shortest `caption-alarm` taken (besides 0, off), as for
/// `stall-timeout`.
pub const MIN_CAPTION_ALARM_MS: u32 = 1000;

/// A value that must not be shown: Debug prints whether it is set, no more.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(Option<String>);

impl Secret {
    pub fn new(value: Option<String>) -> Secret {
        Secret(value.filter(|v| !v.is_empty()))
    }

    pub fn expose(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Secret(set)"
        } else {
            "Secret(unset)"
        })
    }
}

/// overload=queue's default bound: ten minutes of audio, 37.5 MiB.
pub const DEFAULT_MAX_LAG_MS: u32 = 600_000;

/// The values behind the properties.
#[derive(Debug, Clone)]
pub struct Settings {
    pub engine: EngineChoice,
    pub model_path: Option<PathBuf>,
    /// A model by name: a preset or an `hf://` reference (engine=local), or
    /// the served model's name (engine=vllm).
    pub model: Option<String>,
    /// engine=vllm: the servers' realtime endpoints, separated by commas.
    pub url: Option<String>,
    pub server_choice: ServerChoice,
    /// engine=vllm: the bearer key; `VLLM_API_KEY` when not set.
    pub api_key: Secret,
    pub server_timeout_ms: u32,
    /// Milliseconds of speech without text after which the stream
    /// restarts (0: off).
    pub stall_timeout_ms: u32,
    /// Milliseconds of speech with no word out after which the caption
    /// alarm is raised (0: off).
    pub caption_alarm_ms: u32,
    pub delay_ms: u32,
    pub decode_interval_ms: u32,
    /// Live input the model falls behind on: how far the decode interval
    /// may stretch before audio is skipped.
    pub max_decode_interval_ms: u32,
    pub latency_ms: u32,
    pub lateness_ms: u32,
    pub language_code: Option<String>,
    pub threads: u32,
    pub backend: BackendChoice,
    pub device: i32,
    pub output: OutputMode,
    pub max_line_chars: u32,
    /// The style of `output=lines` cues and of subtitle files.
    pub subtitle_style: StyleName,
    pub max_stream_duration_ms: u32,
    pub overload: Overload,
    /// overload=queue: the most live audio kept waiting, so that memory
    /// stays bounded however long the model stays behind (0: no bound).
    pub max_lag_ms: u32,
    /// Decode only while someone speaks (the gate, core/gate.rs).
    pub speech_only: bool,
    /// speech-only: non-speech for this long finishes the model's stream.
    pub speech_hangover_ms: u32,
    /// The house dictionary's file, as set.
    pub replacements: Option<PathBuf>,
    pub profanity: ProfanityChoice,
    /// The user's profane words, as set.
    pub profanity_list: Option<String>,
    /// The dictionary and profanity rules, shared with the running streams
    /// (a snapshot shares them: a change applies while playing).
    pub rules: SharedRules,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            engine: EngineChoice::Local,
            server_choice: ServerChoice::Spread,
            model_path: None,
            model: None,
            url: None,
            api_key: Secret::default(),
            server_timeout_ms: DEFAULT_SERVER_TIMEOUT_MS,
            stall_timeout_ms: DEFAULT_STALL_TIMEOUT_MS,
            caption_alarm_ms: DEFAULT_CAPTION_ALARM_MS,
            delay_ms: DEFAULT_DELAY_MS,
            decode_interval_ms: DEFAULT_DECODE_INTERVAL_MS,
            max_decode_interval_ms: DEFAULT_MAX_DECODE_INTERVAL_MS,
            latency_ms: DEFAULT_LATENCY_MS,
            lateness_ms: DEFAULT_LATENESS_MS,
            language_code: None,
            threads: 0,
            backend: BackendChoice::Auto,
            device: -1,
            output: OutputMode::Words,
            max_line_chars: DEFAULT_MAX_LINE_CHARS,
            subtitle_style: StyleName::Broadcast,
            max_stream_duration_ms: DEFAULT_MAX_STREAM_DURATION_MS,
            overload: Overload::Skip,
            max_lag_ms: DEFAULT_MAX_LAG_MS,
            speech_only: false,
            speech_hangover_ms: DEFAULT_SPEECH_HANGOVER_MS,
            replacements: None,
            profanity: ProfanityChoice::Off,
            profanity_list: None,
            rules: SharedRules::default(),
        }
    }
}

/// A setting that could not be applied, with the text for a WARNING message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected(pub String);

impl Settings {
    pub fn delay(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.delay_ms))
    }

    pub fn decode_interval(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.decode_interval_ms))
    }

    pub fn latency(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.latency_ms))
    }

    pub fn lateness(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.lateness_ms))
    }

    /// overload=queue's bound (zero: none).
    pub fn max_lag(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.max_lag_ms))
    }

    pub fn max_stream_duration(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.max_stream_duration_ms))
    }

    /// speech-only's hangover, when the gate is on.
    pub fn speech_gate(&self) -> Option<gst::ClockTime> {
        self.speech_only
            .then(|| gst::ClockTime::from_mseconds(u64::from(self.speech_hangover_ms)))
    }

    /// The watchdog's timeout (zero: off).
    pub fn stall_timeout(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.stall_timeout_ms))
    }

    /// The caption alarm's window (zero: off).
    pub fn caption_alarm(&self) -> gst::ClockTime {
        gst::ClockTime::from_mseconds(u64::from(self.caption_alarm_ms))
    }

    pub fn server_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.server_timeout_ms))
    }

    /// The served model's name, for engine=vllm.
    pub fn served_model(&self) -> String {
        self.model
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| DEFAULT_SERVED_MODEL.to_owned())
    }

    /// The properties set that engine=vllm does not use, to warn about.
    pub fn local_only_settings_in_use(&self) -> Vec<&'static str> {
        let d = Settings::default();
        let mut used = Vec::new();
        if self
            .model_path
            .as_ref()
            .is_some_and(|p| !p.as_os_str().is_empty())
        {
            used.push("model-path");
        }
        if self.threads != d.threads {
            used.push("threads");
        }
        if self.backend != d.backend {
            used.push("backend");
        }
        if self.device != d.device {
            used.push("device");
        }
        used
    }

    pub fn stream_config(&self) -> StreamConfig {
        StreamConfig {
            delay_ms: self.delay_ms,
            decode_interval_ms: self.decode_interval_ms,
        }
    }

    /// The subtitle style's rules, for the speech's language.
    pub fn style(&self) -> Style {
        Style::new(
            self.subtitle_style,
            self.language_code.as_deref(),
            self.max_line_chars as usize,
        )
    }

    /// Whether `output=lines` cues are made by a subtitle style from the
    /// transcript's words (broadcast's rows are the transcript's own).
    pub fn styles_lines(&self) -> bool {
        self.output == OutputMode::Lines && self.subtitle_style != StyleName::Broadcast
    }

    /// Live, what the style adds to the latency of `output=lines`: a cue
    /// goes out once its end is decided.
    pub fn style_hold(&self) -> gst::ClockTime {
        if self.styles_lines() {
            gst::ClockTime::from_nseconds(self.style().hold_ns())
        } else {
            gst::ClockTime::ZERO
        }
    }

    pub fn transcript_config(&self) -> TranscriptConfig {
        let interval = self.decode_interval().nseconds();
        // Text about a frame appears once the frame, its look-ahead and the
        // delay are in; a word held after that must leave within the
        // latency.
        let lookahead = voxtral::samples_to_ns(voxtral::TOKEN_LOOKAHEAD_SAMPLES);
        let delay = self.delay().nseconds() + lookahead;
        // What the delay and two decodes leave of the latency is how long
        // to wait for more of a word.
        let budget = self
            .latency()
            .nseconds()
            .saturating_sub(delay)
            .saturating_sub(2 * interval);
        TranscriptConfig {
            release_after_ns: budget.max(interval),
            min_duration_ns: voxtral::samples_to_ns(voxtral::FRAME_SAMPLES),
            segmentation: match self.output {
                _ if self.styles_lines() => Segmentation::Words,
                OutputMode::Words => Segmentation::Words,
                OutputMode::Lines => Segmentation::Lines {
                    max_chars: self.max_line_chars as usize,
                },
            },
        }
    }

    /// The least `latency` (ms) that delay and decode interval allow: a word
    /// can leave this long after its start (the delay, the model's look-ahead
    /// and two decodes).
    pub fn least_latency_ms(&self) -> u32 {
        let lookahead =
            (voxtral::TOKEN_LOOKAHEAD_SAMPLES * 1000 / u64::from(voxtral::SAMPLE_RATE)) as u32;
        self.delay_ms + lookahead + 2 * self.decode_interval_ms
    }
}
