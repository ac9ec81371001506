// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What the `stats` property reports.

/// The names of the `stats` fields that are read outside the code that
/// writes them (the metrics tracer, `src/metrics/`): writer and reader take
/// them from here, so a rename is one edit and a misspelt name does not
/// compile. Nested structures repeat some names (`pad`, `words`, `lag`).
pub mod field {
    // A model stream: the element's own structure, each of `participants`.
    pub const AUDIO_RECEIVED: &str = "audio-received";
    pub const AUDIO_TRANSCRIBED: &str = "audio-transcribed";
    pub const AUDIO_SKIPPED: &str = "audio-skipped";
    pub const LAG: &str = "lag";
    pub const WORDS: &str = "words";
    pub const STALLS: &str = "stalls";
    pub const SERVERS: &str = "servers";
    pub const ENGINE: &str = "engine";
    pub const MODEL_LOADED: &str = "model-loaded";
    pub const SERVER_CONNECTED: &str = "server-connected";
    pub const FAILOVERS: &str = "failovers";
    pub const MODEL_STEPS: &str = "model-steps";
    pub const MODEL_CALL: &str = "model-call";
    pub const WORD_LAG: &str = "word-lag";
    pub const LAST_WORD_AGE: &str = "last-word-age";
    pub const STALLED: &str = "stalled";
    pub const CAPTION_ALARM: &str = "caption-alarm";
    pub const CAPTION_ALARM_REASON: &str = "caption-alarm-reason";
    // One of `servers`.
    pub const URL: &str = "url";
    pub const CONNECTIONS: &str = "connections";
    pub const FAILURES: &str = "failures";
    // A lag histogram (`word-lag`, a translation's `lag`).
    pub const BOUNDS: &str = "bounds";
    pub const COUNTS: &str = "counts";
    pub const COUNT: &str = "count";
    pub const SUM: &str = "sum";
    // Request pads' streams and translate pads' counts, with their pad.
    pub const PARTICIPANTS: &str = "participants";
    pub const TRANSLATIONS: &str = "translations";
    pub const PAD: &str = "pad";
    pub const LANGUAGE_CODE: &str = "language-code";
    pub const REQUESTS: &str = "requests";
    pub const CATCH_UPS: &str = "catch-ups";
    pub const LAST_TRANSLATION_AGE: &str = "last-translation-age";
    // The transcriber's captions, the cues of all three elements, the
    // encoder's input.
    pub const CAPTION_WORDS_DROPPED: &str = "caption-words-dropped";
    pub const SUBTITLE_CUES: &str = "subtitle-cues";
    pub const SUBTITLE_CUES_TOO_FAST: &str = "subtitle-cues-too-fast";
    pub const SUBTITLE_CUES_SHORT: &str = "subtitle-cues-short";
    pub const SUBTITLE_CHARS_REPLACED: &str = "subtitle-chars-replaced";
    pub const INVALID_UTF8_BUFFERS: &str = "invalid-utf8-buffers";
}

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::lag::LagHistogram;
use crate::voxtral::{samples_to_ns, SAMPLE_RATE};

/// A snapshot of the statistics of one element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Samples that reached the element.
    pub received_samples: u64,
    /// Samples the model has decoded.
    pub transcribed_samples: u64,
    /// Samples waiting for the model.
    pub queued_samples: u64,
    /// Wall time spent in the model.
    pub processing: Duration,
    /// Cues handed on.
    pub cues: u64,
    /// Engine streams ended before EOS to start a new one (long streams,
    /// long holes in the input, new segments).
    pub stream_restarts: u64,
    /// Streams the model ended on its own with its end token, each taken
    /// up at once by a new one from the token it ended on.
    pub model_ended_streams: u64,
    /// Streams restarted because the model wrote nothing for a long
    /// stretch of sound: the fallback for a library whose end token the
    /// engine cannot see (counted in `stream_restarts` too).
    pub stopped_model_restarts: u64,
    /// NaN or infinite samples replaced by silence.
    pub sanitized_samples: u64,
    /// Samples dropped because they overlapped audio already received.
    pub dropped_samples: u64,
    /// Queued samples of an old segment that a non-flushing seek's new
    /// segment replaced before they were transcribed.
    pub seek_dropped_samples: u64,
    /// Live samples skipped because the model fell behind by more than the
    /// latency (overload=skip).
    pub skipped_samples: u64,
    /// Streams the watchdog restarted: speech without text for
    /// `stall-timeout`.
    pub stalls: u64,
    /// engine=vllm: connections to the server lost and made again.
    pub reconnects: u64,
    /// engine=vllm: samples sent to the server again after a reconnection
    /// (the audio it had not answered for).
    pub resent_samples: u64,
    /// engine=vllm: frames from the server that were not events of its
    /// protocol (binary, not JSON, unknown types), ignored.
    pub ignored_frames: u64,
    /// speech-only: samples left out as silence (never fed to the model).
    pub gated_samples: u64,
    /// The decode interval in use (ms): `decode-interval`, or longer while
    /// live input outruns the model.
    pub decode_interval_ms: u32,
    /// Times the decode interval was lengthened.
    pub interval_stretches: u64,
    /// The backend the model runs on.
    pub backend: String,
    /// engine=local: the CPU threads the model computes with.
    pub threads: u32,
    /// engine=vllm: the server of the connection in use.
    pub server: String,
    /// engine=vllm: each server of `url` that was tried, in that order.
    pub servers: Vec<ServerCounts>,
    /// `local` or `vllm`, from the element's `engine`.
    pub engine: &'static str,
    /// The worker has its model (engine=vllm: its client).
    pub model_loaded: bool,
    /// engine=vllm: the last connection made to a server holds (none
    /// failed or was lost since).
    pub server_connected: bool,
    /// engine=vllm: connections lost that went on on another server.
    pub failovers: u64,
    /// 80 ms frames the model has decoded.
    pub model_steps: u64,
    /// engine=local: how the model is held and shared in this process.
    pub model_use: crate::recognizer::ModelUse,
    /// When the model call in progress began (a decode; engine=vllm, the
    /// wait for the server's answers, reconnections included).
    pub model_call_since: Option<Instant>,
    /// Each word's lag: from when its audio's end arrived to when it left.
    pub word_lag: LagHistogram,
    /// When the core started, and when the last word left.
    pub started_at: Option<Instant>,
    pub last_word_at: Option<Instant>,
    /// The watchdog is restarting a model that writes nothing over speech.
    pub stalled: bool,
    /// The caption alarm is on, and why (empty when it is off).
    pub caption_alarm: bool,
    pub caption_alarm_reason: String,
}

/// What one server of `url` did for the element.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerCounts {
    pub url: String,
    /// Connections made to it.
    pub connections: u64,
    /// Connections that could not be made, or were lost.
    pub failures: u64,
}

impl Stats {
    /// The counts of server `url`, first seen now if it is new.
    pub fn server_mut(&mut self, url: &str) -> &mut ServerCounts {
        let k = match self.servers.iter().position(|s| s.url == url) {
            Some(k) => k,
            None => {
                self.servers.push(ServerCounts {
                    url: url.to_owned(),
                    ..Default::default()
                });
                self.servers.len() - 1
            }
        };
        &mut self.servers[k]
    }
}

impl Stats {
    /// Processing time over audio time: below 1.0 keeps up with real time.
    pub fn real_time_factor(&self) -> f64 {
        if self.transcribed_samples == 0 {
            return 0.0;
        }
        self.processing.as_secs_f64() / (self.transcribed_samples as f64 / f64::from(SAMPLE_RATE))
    }

    /// The mean of the streams that each decoder step of the model ran
    /// with (1.0: always alone; 0.0 before the first).
    pub fn decoded_together(&self) -> f64 {
        let u = &self.model_use;
        if u.decode_rounds == 0 {
            return 0.0;
        }
        u.decode_streams as f64 / u.decode_rounds as f64
    }

    pub fn lag(&self) -> gst::ClockTime {
        gst::ClockTime::from_nseconds(samples_to_ns(self.queued_samples))
    }

    pub fn to_structure(&self) -> gst::Structure {
        gst::Structure::builder("application/x-voxtralrt-stats")
            .field(field::AUDIO_RECEIVED, samples_to_ns(self.received_samples))
            .field(
                field::AUDIO_TRANSCRIBED,
                samples_to_ns(self.transcribed_samples),
            )
            .field("real-time-factor", self.real_time_factor())
            .field(field::LAG, self.lag().nseconds())
            .field(field::WORDS, self.cues)
            .field("stream-restarts", self.stream_restarts)
            .field("model-ended-streams", self.model_ended_streams)
            .field("stopped-model-restarts", self.stopped_model_restarts)
            .field("samples-sanitized", self.sanitized_samples)
            .field("samples-dropped", self.dropped_samples)
            .field("samples-dropped-by-seek", self.seek_dropped_samples)
            .field(field::AUDIO_SKIPPED, samples_to_ns(self.skipped_samples))
            .field(field::STALLS, self.stalls)
            .field("reconnects", self.reconnects)
            .field("audio-resent", samples_to_ns(self.resent_samples))
            .field("frames-ignored", self.ignored_frames)
            .field("audio-gated", samples_to_ns(self.gated_samples))
            .field("decode-interval", self.decode_interval_ms)
            .field("decode-interval-stretches", self.interval_stretches)
            .field("backend", &self.backend)
            .field("threads", self.threads)
            .field("server", &self.server)
            .field(field::SERVERS, self.servers_array())
            .field(field::ENGINE, self.engine)
            .field(field::MODEL_LOADED, self.model_loaded)
            .field(field::SERVER_CONNECTED, self.server_connected)
            .field(field::FAILOVERS, self.failovers)
            .field(field::MODEL_STEPS, self.model_steps)
            .field("weights-repacked", self.model_use.repacked_bytes)
            .field("weights-repacked-tensors", self.model_use.repacked_tensors)
            .field("model-streams", self.model_use.streams)
            .field("decoded-together", self.decoded_together())
            .field(field::MODEL_CALL, elapsed_ns(self.model_call_since))
            .field(field::WORD_LAG, self.word_lag.to_structure())
            .field(
                field::LAST_WORD_AGE,
                elapsed_ns(self.last_word_at.or(self.started_at)),
            )
            .field(field::STALLED, self.stalled)
            .field(field::CAPTION_ALARM, self.caption_alarm)
            .field(field::CAPTION_ALARM_REASON, &self.caption_alarm_reason)
            .build()
    }

    /// `servers`: a structure per server, `url`, `connections` and
    /// `failures`.
    fn servers_array(&self) -> gst::Array {
        gst::Array::new(self.servers.iter().map(|s| {
            gst::Structure::builder("server")
                .field(field::URL, &s.url)
                .field(field::CONNECTIONS, s.connections)
                .field(field::FAILURES, s.failures)
                .build()
        }))
    }
}

/// Nanoseconds since `since` (0 without one).
pub fn elapsed_ns(since: Option<Instant>) -> u64 {
    since.map_or(0, |t| t.elapsed().as_nanos() as u64)
}

/// The read-only `stats` property both elements have; its fields are listed
/// in docs/elements.md ("Statistics"), which tests/docs.rs checks.
pub fn param_spec() -> gst::glib::ParamSpec {
    use gst::glib::prelude::*;
    gst::glib::ParamSpecBoxed::builder::<gst::Structure>("stats")
        .nick("Statistics")
        .blurb("Read-only: audio received and transcribed, real-time factor, lag, words, restarts, samples sanitized/dropped/skipped, reconnections, backend (docs/elements.md lists every field)")
        .read_only()
        .build()
}

/// Statistics shared between the streaming thread and the worker.
#[derive(Debug, Default)]
pub(crate) struct SharedStats(Mutex<Stats>);

impl SharedStats {
    pub(crate) fn snapshot(&self) -> Stats {
        self.0.lock().unwrap().clone()
    }

    pub(crate) fn update(&self, f: impl FnOnce(&mut Stats)) {
        f(&mut self.0.lock().unwrap());
    }

    /// Audio waiting for the model, without copying the rest.
    pub(crate) fn lag(&self) -> gst::ClockTime {
        self.0.lock().unwrap().lag()
    }

    /// The worker has its model, which runs on `backend`.
    pub(crate) fn loaded(&self, backend: &str) {
        self.update(|s| {
            s.backend = backend.to_owned();
            s.model_loaded = true;
        });
    }

    pub(crate) fn add_sanitized(&self, n: u64) {
        self.update(|s| s.sanitized_samples += n);
    }
}
