// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The transcription settings both elements share: one definition of the
//! values, their defaults, their properties and how they are checked.

use std::path::PathBuf;

use gst::glib;
use gst::prelude::*;

use crate::transcript::{Segmentation, TranscriptConfig};
use crate::voxtral::{self, StreamConfig};
use crate::wording::{Dictionary, Profanity, ProfanityMode, SharedRules};

/// What becomes of profane words: the `profanity` property.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtProfanity")]
pub enum ProfanityChoice {
    #[default]
    #[enum_value(name = "Leave every word as the model wrote it", nick = "off")]
    Off = 0,
    #[enum_value(name = "Keep the first letter and star the rest (f***)", nick = "mask")]
    Mask = 1,
    #[enum_value(name = "Leave the word out", nick = "remove")]
    Remove = 2,
    #[enum_value(name = "Write [bleep] in its place", nick = "tag")]
    Tag = 3,
}

impl From<ProfanityChoice> for ProfanityMode {
    fn from(choice: ProfanityChoice) -> Self {
        match choice {
            ProfanityChoice::Off => ProfanityMode::Off,
            ProfanityChoice::Mask => ProfanityMode::Mask,
            ProfanityChoice::Remove => ProfanityMode::Remove,
            ProfanityChoice::Tag => ProfanityMode::Tag,
        }
    }
}

pub const DEFAULT_DELAY_MS: u32 = 480;
/// 160 ms: on the tiny fixture the element's cost over the bare engine stays
/// small from 160 ms up, while word timing keeps a 160 ms grain. 80 ms doubles
/// the number of decode calls for little gain in precision.
pub const DEFAULT_DECODE_INTERVAL_MS: u32 = 160;
pub const DEFAULT_LATENCY_MS: u32 = 1500;
pub const DEFAULT_LATENESS_MS: u32 = 0;
pub const DEFAULT_MAX_LINE_CHARS: u32 = 32;
/// An hour, well before the model's position limit of about 2.9 hours.
pub const DEFAULT_MAX_STREAM_DURATION_MS: u32 = 3_600_000;
/// Below this, a `max-stream-duration` is warned about: most likely a value
/// in seconds from before it counted milliseconds.
const SHORT_STREAM_DURATION_MS: u32 = 60_000;
/// Holes in the input up to this long are filled with silence; longer ones
/// end the engine stream and a new one starts after the hole.
pub const MAX_FILLED_HOLE: gst::ClockTime = gst::ClockTime::from_seconds(2);

/// How the transcript is cut into output buffers.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtOutput")]
pub enum OutputMode {
    #[default]
    #[enum_value(name = "One buffer per word", nick = "words")]
    Words = 0,
    #[enum_value(
        name = "One buffer per caption line of at most max-line-chars",
        nick = "lines"
    )]
    Lines = 1,
}

/// Where the model runs.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtBackend")]
pub enum BackendChoice {
    #[default]
    #[enum_value(name = "The best device found, else the CPU", nick = "auto")]
    Auto = 0,
    #[enum_value(name = "CPU only", nick = "cpu")]
    Cpu = 1,
    #[enum_value(
        name = "NVIDIA GPU through CUDA (build with the cuda feature)",
        nick = "cuda"
    )]
    Cuda = 2,
    #[enum_value(
        name = "GPU through Vulkan (build with the vulkan feature)",
        nick = "vulkan"
    )]
    Vulkan = 3,
}

/// Which engine runs the model.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtEngine")]
pub enum EngineChoice {
    #[default]
    #[enum_value(
        name = "transcribe.cpp in this process (model-path or model)",
        nick = "local"
    )]
    Local = 0,
    #[enum_value(name = "A vLLM realtime server (url, api-key, model)", nick = "vllm")]
    Vllm = 1,
}

/// engine=vllm with several servers in `url`: where a stream starts.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtServerChoice")]
pub enum ServerChoice {
    #[default]
    #[enum_value(
        name = "Spread: each stream starts at the next server of a rotation the process shares (its first pick random)",
        nick = "spread"
    )]
    Spread = 0,
    #[enum_value(
        name = "In order: each stream starts at the first server of url that answers (a primary, then backups)",
        nick = "in-order"
    )]
    InOrder = 1,
}

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

/// What to do with live audio that the model cannot keep up with.
#[derive(Debug, Eq, PartialEq, Ord, PartialOrd, Hash, Clone, Copy, glib::Enum, Default)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtOverload")]
pub enum Overload {
    #[default]
    #[enum_value(
        name = "Skip the oldest waiting audio and go on from the present (subtitles stay live)",
        nick = "skip"
    )]
    Skip = 0,
    #[enum_value(
        name = "Queue everything: every word, however late (memory grows with the lag)",
        nick = "queue"
    )]
    Queue = 1,
}

/// Marks the enums of the shared properties as plugin API, for the
/// documentation tools.
pub fn mark_enums_as_plugin_api() {
    for t in [
        EngineChoice::static_type(),
        OutputMode::static_type(),
        BackendChoice::static_type(),
        Overload::static_type(),
        ProfanityChoice::static_type(),
    ] {
        t.mark_as_plugin_api(gst::PluginAPIFlags::empty());
    }
}

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
    pub delay_ms: u32,
    pub decode_interval_ms: u32,
    pub latency_ms: u32,
    pub lateness_ms: u32,
    pub language_code: Option<String>,
    pub threads: u32,
    pub backend: BackendChoice,
    pub device: i32,
    pub output: OutputMode,
    pub max_line_chars: u32,
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
            delay_ms: DEFAULT_DELAY_MS,
            decode_interval_ms: DEFAULT_DECODE_INTERVAL_MS,
            latency_ms: DEFAULT_LATENCY_MS,
            lateness_ms: DEFAULT_LATENESS_MS,
            language_code: None,
            threads: 0,
            backend: BackendChoice::Auto,
            device: -1,
            output: OutputMode::Words,
            max_line_chars: DEFAULT_MAX_LINE_CHARS,
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

    /// The properties both elements install. Each element class needs its
    /// own instances (GLib ties a property to one class), so this builds
    /// new ones on each call.
    pub fn param_specs() -> Vec<glib::ParamSpec> {
        let d = Settings::default();
        vec![
                glib::ParamSpecEnum::builder_with_default("engine", d.engine)
                    .nick("Engine")
                    .blurb("Where the model runs: local (transcribe.cpp in this process) or vllm (a vLLM realtime server at url)")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("url")
                    .nick("Server URL")
                    .blurb("engine=vllm: the server's realtime endpoint, ws://HOST:PORT/v1/realtime or wss://...; several separated by commas: a stream moves to the next when its server fails")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecEnum::builder_with_default("server-choice", d.server_choice)
                    .nick("Server choice")
                    .blurb("engine=vllm with several servers in url: where each stream starts (spread over them, or in their order); a failed server rests 5 s, doubling to 60 s, before streams start on it again")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("api-key")
                    .nick("API key")
                    .blurb("engine=vllm: the server's API key (default: VLLM_API_KEY). Write-only; never sent over plain ws:// to another host")
                    .write_only()
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("server-timeout")
                    .nick("Server timeout (ms)")
                    .blurb("engine=vllm: a server that answers no audio for this long (ms) is reconnected, as after a dropped connection")
                    .minimum(500)
                    .maximum(600_000)
                    .default_value(d.server_timeout_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("stall-timeout")
                    .nick("Stall timeout (ms)")
                    .blurb("Speech (ms of audio, by a voice detector, pauses not counted) since the model last wrote text after which its stream restarts; 30 s without speech start the count afresh; restarts back off; no added latency. 0: off, else at least 1000")
                    .maximum(3_600_000)
                    .default_value(d.stall_timeout_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("model-path")
                    .nick("Model path")
                    .blurb("engine=local: the Voxtral Mini 4B Realtime GGUF file, or a Hub file (hf://OWNER/REPO[@REV]/FILE, hf://OWNER/REPO:QUANT) fetched once into the Hugging Face cache")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("model")
                    .nick("Model")
                    .blurb("engine=vllm: the served model (default mistralai/Voxtral-Mini-4B-Realtime-2602). engine=local, without model-path: a preset (q4_k_m, q8_0, ...) or an hf:// reference")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("delay")
                    .nick("Transcription delay (ms)")
                    .blurb("How far the text lags the audio (ms): a multiple of 80 up to 1200, or 2400; longer is more accurate. With engine=vllm, the server's value")
                    .minimum(80)
                    .maximum(2400)
                    .default_value(d.delay_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("decode-interval")
                    .nick("Decode interval (ms)")
                    .blurb("Audio gathered between two decodes (ms): the grain of word timestamps and of latency; 80 costs 44% more CPU than 160")
                    .minimum(*voxtral::DECODE_INTERVAL_RANGE.start())
                    .maximum(*voxtral::DECODE_INTERVAL_RANGE.end())
                    .default_value(d.decode_interval_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("latency")
                    .nick("Latency (ms)")
                    .blurb("Time budget (ms) from a word's start to its output, added to upstream's in LATENCY answers; held words are let go to meet it")
                    .default_value(d.latency_ms)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("lateness")
                    .nick("Lateness (ms)")
                    .blurb("Offset (ms) added to the output timestamps, as transcriberbin expects of a transcriber")
                    .default_value(d.lateness_ms)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecString::builder("language-code")
                    .nick("Language code")
                    .blurb("The speech's language, e.g. en-US, written into a language-code tag only: the model detects the language itself")
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("threads")
                    .nick("Threads")
                    .blurb("engine=local only. CPU threads for the model (0 = all CPUs)")
                    .maximum(256)
                    .default_value(d.threads)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecEnum::builder_with_default("backend", d.backend)
                    .nick("Backend")
                    .blurb("engine=local only. Where the model runs; a backend this build lacks is an error when the element starts")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecInt::builder("device")
                    .nick("Device")
                    .blurb("engine=local only. Index of the compute device to use with the backend (-1 = let the backend choose)")
                    .minimum(-1)
                    .maximum(255)
                    .default_value(d.device)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecEnum::builder_with_default("output", d.output)
                    .nick("Output")
                    .blurb("words: a buffer per word (transcriberbin, tttocea608); lines: a buffer per caption line of at most max-line-chars (srtenc, overlays, muxers)")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("max-line-chars")
                    .nick("Maximum line length")
                    .blurb("Longest caption line in characters with output=lines (32 fits CEA-608); a longer word is a line of its own")
                    .minimum(1)
                    .maximum(1000)
                    .default_value(d.max_line_chars)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecEnum::builder_with_default("overload", d.overload)
                    .nick("Overload policy")
                    .blurb("Live input the model falls behind by more than latency: skip the oldest audio and go on from the present, or queue it all up to max-lag")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("max-lag")
                    .nick("Most lag kept with overload=queue (ms)")
                    .blurb("overload=queue: the most live audio (ms) kept waiting, at 64 KiB per second; past it the oldest half is skipped. 0: no bound")
                    .default_value(d.max_lag_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("speech-only")
                    .nick("Speech only")
                    .blurb("Decode only while a voice detector hears speech: a second without it (speech-hangover) finishes the model's stream, the next speech starts a new one with 640 ms of the audio before it; silence costs no model steps (engine=vllm: no audio is sent)")
                    .default_value(d.speech_only)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("speech-hangover")
                    .nick("Speech hangover (ms)")
                    .blurb("speech-only: audio without speech (ms) after which the model's stream is finished; 1500 or more keeps dense speech in one stream, 500 leaves more of sparse speech's pauses undecoded")
                    .minimum(200)
                    .maximum(60_000)
                    .default_value(d.speech_hangover_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("max-stream-duration")
                    .nick("Maximum stream duration (ms)")
                    .blurb("Audio (ms) after which the model's stream is restarted, at a pause if one comes: a stream cannot pass about 2.9 hours")
                    .minimum(1000)
                    .maximum(10_000_000)
                    .default_value(d.max_stream_duration_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("replacements")
                    .nick("House dictionary")
                    .blurb("A UTF-8 file of rules, one a line: from => to (whole words, any case). Read again when set while playing. Words that may start a phrase wait up to 1 s")
                    .mutable_playing()
                    .build(),
                glib::ParamSpecEnum::builder_with_default("profanity", d.profanity)
                    .nick("Profanity")
                    .blurb("What becomes of profane words (rustrict's English list and profanity-list): off, mask (f***), remove or tag ([bleep]). No added latency")
                    .mutable_playing()
                    .build(),
                glib::ParamSpecString::builder("profanity-list")
                    .nick("More profane words")
                    .blurb("Words (comma-separated, any case) treated as profane too, e.g. for the model's other languages")
                    .mutable_playing()
                    .build(),
        ]
    }

    /// Applies one property value. A value the element cannot use is
    /// refused (the old one stays) and the reason returned; a value used in
    /// part comes with warnings.
    pub fn set_property(
        &mut self,
        value: &glib::Value,
        pspec: &glib::ParamSpec,
    ) -> Result<Vec<String>, Rejected> {
        match pspec.name() {
            "model-path" => {
                self.model_path = value
                    .get::<Option<String>>()
                    .expect("type checked")
                    .map(PathBuf::from)
            }
            "engine" => self.engine = value.get().expect("type checked"),
            "url" => self.url = value.get().expect("type checked"),
            "server-choice" => self.server_choice = value.get().expect("type checked"),
            "api-key" => self.api_key = Secret::new(value.get().expect("type checked")),
            "server-timeout" => self.server_timeout_ms = value.get().expect("type checked"),
            "stall-timeout" => {
                let ms = value.get().expect("type checked");
                if ms != 0 && ms < MIN_STALL_TIMEOUT_MS {
                    return Err(Rejected(format!(
                        "stall-timeout counts milliseconds: {ms} ms is shorter than any word's \
                         delay (at least {MIN_STALL_TIMEOUT_MS}, or 0 for off; {} for {ms} s); \
                         {} ms stays",
                        u64::from(ms) * 1000,
                        self.stall_timeout_ms
                    )));
                }
                self.stall_timeout_ms = ms;
            }
            "model" => {
                let name = value.get::<Option<String>>().expect("type checked");
                // A served model's name can be anything; a local one must be
                // a preset or a reference.
                if let Some(name) = name.as_deref().filter(|n| !n.is_empty()) {
                    if self.engine == EngineChoice::Local {
                        crate::loading::ModelRef::from_model_name(name).map_err(|e| {
                            Rejected(format!(
                                "{e} (for a vLLM server's model, set engine=vllm first)"
                            ))
                        })?;
                    }
                }
                self.model = name;
            }
            "delay" => {
                let ms = value.get().expect("type checked");
                self.delay_ms = voxtral::validate_delay(ms).map_err(|e| Rejected(e.to_string()))?;
            }
            "decode-interval" => self.decode_interval_ms = value.get().expect("type checked"),
            "latency" => self.latency_ms = value.get().expect("type checked"),
            "lateness" => self.lateness_ms = value.get().expect("type checked"),
            "language-code" => self.language_code = value.get().expect("type checked"),
            "threads" => self.threads = value.get().expect("type checked"),
            "backend" => self.backend = value.get().expect("type checked"),
            "device" => self.device = value.get().expect("type checked"),
            "output" => self.output = value.get().expect("type checked"),
            "max-line-chars" => self.max_line_chars = value.get().expect("type checked"),
            "max-stream-duration" => {
                let ms = value.get().expect("type checked");
                self.max_stream_duration_ms = ms;
                if ms < SHORT_STREAM_DURATION_MS {
                    return Ok(vec![format!(
                        "max-stream-duration counts milliseconds: the model's stream restarts \
                         every {ms} ms of audio ({} for {ms} s)",
                        u64::from(ms) * 1000
                    )]);
                }
            }
            "overload" => self.overload = value.get().expect("type checked"),
            "max-lag" => self.max_lag_ms = value.get().expect("type checked"),
            "speech-only" => self.speech_only = value.get().expect("type checked"),
            "speech-hangover" => self.speech_hangover_ms = value.get().expect("type checked"),
            "replacements" => return self.set_replacements(value.get().expect("type checked")),
            "profanity" => {
                self.profanity = value.get().expect("type checked");
                let mode = self.profanity.into();
                self.rules.update(|r| r.profanity.mode = mode);
            }
            "profanity-list" => {
                let list: Option<String> = value.get().expect("type checked");
                let extra = Profanity::parse_list(list.as_deref().unwrap_or_default());
                self.rules.update(|r| r.profanity.extra = extra);
                self.profanity_list = list;
            }
            other => unreachable!("no property {other}"),
        }
        Ok(Vec::new())
    }

    /// Loads the dictionary at `path` (none: no dictionary); an unreadable
    /// file leaves the rules as they were.
    fn set_replacements(&mut self, path: Option<String>) -> Result<Vec<String>, Rejected> {
        let path = path.filter(|p| !p.is_empty()).map(PathBuf::from);
        let (dictionary, bad) = match &path {
            Some(path) => Dictionary::load(path)
                .map_err(|e| Rejected(format!("{e}; the dictionary in use stays")))?,
            None => (Dictionary::default(), Vec::new()),
        };
        let shown = path.as_ref().map(|p| p.display().to_string());
        let warnings = bad
            .iter()
            .map(|b| format!("dictionary {}: {b}", shown.as_deref().unwrap_or_default()))
            .collect();
        self.rules.update(|r| r.dictionary = dictionary);
        self.replacements = path;
        Ok(warnings)
    }

    /// The value of one property (`stats` is answered by the element).
    pub fn property(&self, pspec: &glib::ParamSpec) -> glib::Value {
        match pspec.name() {
            "model-path" => self
                .model_path
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .to_value(),
            "engine" => self.engine.to_value(),
            "url" => self.url.to_value(),
            "server-choice" => self.server_choice.to_value(),
            "server-timeout" => self.server_timeout_ms.to_value(),
            "stall-timeout" => self.stall_timeout_ms.to_value(),
            "model" => self.model.to_value(),
            "delay" => self.delay_ms.to_value(),
            "decode-interval" => self.decode_interval_ms.to_value(),
            "latency" => self.latency_ms.to_value(),
            "lateness" => self.lateness_ms.to_value(),
            "language-code" => self.language_code.to_value(),
            "threads" => self.threads.to_value(),
            "backend" => self.backend.to_value(),
            "device" => self.device.to_value(),
            "output" => self.output.to_value(),
            "max-line-chars" => self.max_line_chars.to_value(),
            "max-stream-duration" => self.max_stream_duration_ms.to_value(),
            "overload" => self.overload.to_value(),
            "max-lag" => self.max_lag_ms.to_value(),
            "speech-only" => self.speech_only.to_value(),
            "speech-hangover" => self.speech_hangover_ms.to_value(),
            "replacements" => self
                .replacements
                .as_ref()
                .map(|p| p.to_string_lossy().into_owned())
                .to_value(),
            "profanity" => self.profanity.to_value(),
            "profanity-list" => self.profanity_list.to_value(),
            other => unreachable!("no property {other}"),
        }
    }
}

/// The settings of one element, with the warnings about refused values that
/// could not be posted yet (an element has no bus before it is in a bin).
#[derive(Debug, Default)]
pub struct SettingsCell {
    settings: std::sync::Mutex<Settings>,
    pending_warnings: std::sync::Mutex<Vec<String>>,
}

impl SettingsCell {
    /// A copy to work with, so the lock is not held while it is used.
    pub fn snapshot(&self) -> Settings {
        self.settings.lock().unwrap().clone()
    }

    /// The latency to answer LATENCY queries with: `latency`, plus the
    /// longest the dictionary can hold a word.
    pub fn reported_latency(&self) -> gst::ClockTime {
        let settings = self.settings.lock().unwrap();
        let hold = settings.rules.current().max_hold_ns();
        settings.latency() + gst::ClockTime::from_nseconds(hold)
    }

    /// Sets a shared property; a refused value is kept out and warned about.
    pub fn set_property(
        &self,
        element: &gst::Element,
        value: &glib::Value,
        pspec: &glib::ParamSpec,
    ) {
        let result = self.settings.lock().unwrap().set_property(value, pspec);
        let warnings = match result {
            Ok(warnings) => warnings,
            Err(Rejected(message)) => vec![message],
        };
        if pspec.name() == "replacements" && element.parent().is_some() {
            // The dictionary's hold may have changed the latency.
            let _ = element.post_message(gst::message::Latency::builder().src(element).build());
        }
        for message in warnings {
            gst::warning!(gst::CAT_DEFAULT, obj = element, "{}", message);
            if element.parent().is_some() {
                gst::element_warning!(element, gst::LibraryError::Settings, ("{}", message));
            } else {
                self.pending_warnings.lock().unwrap().push(message);
            }
        }
    }

    pub fn property(&self, pspec: &glib::ParamSpec) -> glib::Value {
        self.settings.lock().unwrap().property(pspec)
    }

    /// Posts the warnings kept for when the element has a bus.
    pub fn post_pending_warnings(&self, element: &gst::Element) {
        for message in std::mem::take(&mut *self.pending_warnings.lock().unwrap()) {
            gst::element_warning!(element, gst::LibraryError::Settings, ("{}", message));
        }
    }
}
