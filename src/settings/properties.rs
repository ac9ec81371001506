// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The shared properties: their specs, how a value is applied and read.

use std::path::PathBuf;

use gst::glib;
use gst::prelude::*;

use super::*;
use crate::voxtral;
use crate::wording::{Dictionary, Profanity};

impl Settings {
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
                    .blurb("Speech (ms, pauses not counted) since the model last wrote text after which its stream restarts; restarts back off; no added latency. 0: off, else at least 1000")
                    .maximum(3_600_000)
                    .default_value(d.stall_timeout_ms)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("caption-alarm")
                    .nick("Caption alarm (ms)")
                    .blurb("Speech heard this long (ms) with no word out: a WARNING, a voxtralrt-caption-alarm message (active=true), the metric; the next word ends it (active=false). 0: off, else at least 1000")
                    .maximum(3_600_000)
                    .default_value(d.caption_alarm_ms)
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
                    .blurb("How far the text lags the audio (ms), one of 80, 160, 240 ... 1200 (the multiples of 80) or 2400; longer is more accurate. Others are refused, naming the nearest. With engine=vllm, the server's value")
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
                glib::ParamSpecUInt::builder("max-decode-interval")
                    .nick("Longest decode interval (ms)")
                    .blurb("Live input the model falls behind: the decode interval doubles up to this (ms) before overload skips audio; longer costs less per second, words come later and are timed more coarsely. 0 (or decode-interval or less): never")
                    .maximum(*voxtral::DECODE_INTERVAL_RANGE.end())
                    .default_value(d.max_decode_interval_ms)
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
                    .blurb("The speech's language, e.g. en-US: written into a language-code tag and picks the subtitle styles' reading speed; the model detects the language itself")
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("threads")
                    .nick("Threads")
                    .blurb("engine=local only. CPU threads for the model. 0: half the CPUs the process may use, shared by its local streams, 1 to 4 (more, on a busy machine, spin waiting for each other)")
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
                    .blurb("Decode only while a voice detector hears speech: speech-hangover without it finishes the model's stream, and the next speech starts a new one. Silence costs no model steps (engine=vllm: no audio sent)")
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

    /// `subtitle-style`, with the element's default and its blurb (each
    /// element class needs its own instance).
    pub fn subtitle_style_param_spec(default: StyleName, blurb: &'static str) -> glib::ParamSpec {
        glib::ParamSpecEnum::builder_with_default("subtitle-style", SubtitleStyle::from(default))
            .nick("Subtitle style")
            .blurb(blurb)
            .mutable_ready()
            .build()
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
            "caption-alarm" => {
                let ms = value.get().expect("type checked");
                if ms != 0 && ms < MIN_CAPTION_ALARM_MS {
                    return Err(Rejected(format!(
                        "caption-alarm counts milliseconds: {ms} ms is shorter than a word's \
                         delay (at least {MIN_CAPTION_ALARM_MS}, or 0 for off; {} for {ms} s); \
                         {} ms stays",
                        u64::from(ms) * 1000,
                        self.caption_alarm_ms
                    )));
                }
                self.caption_alarm_ms = ms;
            }
            // A served model's name can be anything, a local one must be a
            // preset or a reference: which, `engine` says, whenever it is
            // set. The name is checked when the element starts.
            "model" => self.model = value.get().expect("type checked"),
            "delay" => {
                let ms = value.get().expect("type checked");
                self.delay_ms = voxtral::validate_delay(ms)
                    .map_err(|e| Rejected(format!("{e}; {} ms stays", self.delay_ms)))?;
            }
            "decode-interval" => self.decode_interval_ms = value.get().expect("type checked"),
            "max-decode-interval" => {
                self.max_decode_interval_ms = value.get().expect("type checked")
            }
            "latency" => {
                let ms = value.get().expect("type checked");
                if ms == UNSYNCHRONISED_LATENCY {
                    return Err(Rejected(format!(
                        "latency=-1 (unsynchronised output, as speechmatics and textaccumulate \
                         take it in gst-plugins-rs 0.16) is not supported: words keep their \
                         own timestamps; the latency stays {} ms",
                        self.latency_ms
                    )));
                }
                self.latency_ms = ms;
            }
            "lateness" => self.lateness_ms = value.get().expect("type checked"),
            "language-code" => self.language_code = value.get().expect("type checked"),
            "threads" => self.threads = value.get().expect("type checked"),
            "backend" => self.backend = value.get().expect("type checked"),
            "device" => self.device = value.get().expect("type checked"),
            "output" => self.output = value.get().expect("type checked"),
            "max-line-chars" => self.max_line_chars = value.get().expect("type checked"),
            "subtitle-style" => {
                self.subtitle_style = value.get::<SubtitleStyle>().expect("type checked").into()
            }
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
            "caption-alarm" => self.caption_alarm_ms.to_value(),
            "model" => self.model.to_value(),
            "delay" => self.delay_ms.to_value(),
            "decode-interval" => self.decode_interval_ms.to_value(),
            "max-decode-interval" => self.max_decode_interval_ms.to_value(),
            "latency" => self.latency_ms.to_value(),
            "lateness" => self.lateness_ms.to_value(),
            "language-code" => self.language_code.to_value(),
            "threads" => self.threads.to_value(),
            "backend" => self.backend.to_value(),
            "device" => self.device.to_value(),
            "output" => self.output.to_value(),
            "max-line-chars" => self.max_line_chars.to_value(),
            "subtitle-style" => SubtitleStyle::from(self.subtitle_style).to_value(),
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
