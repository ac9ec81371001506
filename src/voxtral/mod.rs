// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What both engines share about Voxtral Realtime and a stream of it: 16 kHz
//! mono audio in 80 ms frames, the delays the model was trained for, how a
//! stream is configured and stopped, and what it answers.
//!
//! Pure Rust, so that the client build (without the `local` feature, hence
//! without `src/engine/` and transcribe.cpp) has it too.

mod samples;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

pub use samples::{Converted, SampleConverter, SampleFormat};

/// The debug category for lines about either engine's behaviour
/// (`GST_DEBUG=voxtralrt-engine:6`); the local engine bridges
/// transcribe.cpp's own log into it too.
pub static LOG_CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "voxtralrt-engine",
        gst::DebugColorFlags::empty(),
        Some("the engine used by the voxtralrt elements (transcribe.cpp or a vLLM server)"),
    )
});

/// The only sample rate the model takes.
pub const SAMPLE_RATE: u32 = 16_000;

/// Audio the model consumes per generated token.
pub const FRAME_MS: u32 = 80;
/// The same in samples.
pub const FRAME_SAMPLES: u64 = FRAME_MS as u64 * SAMPLE_RATE as u64 / 1000;

/// `samples` of model audio as nanoseconds.
pub fn samples_to_ns(samples: u64) -> u64 {
    samples * 1_000_000_000 / u64::from(SAMPLE_RATE)
}

/// `ns` of model audio as samples (rounded down).
pub fn ns_to_samples(ns: u64) -> u64 {
    ns * u64::from(SAMPLE_RATE) / 1_000_000_000
}

/// Audio that must be in, beyond the delay, before the token of a frame can
/// be decoded: the 80 ms frame itself and the rest of its last mel window
/// (15 ms). Measured on the local engine with the timing fixture
/// (tests/fixtures/README-tone.md): the token of frame `f` appears once
/// `1280 f + 1520` samples are fed. The element's latency counts it for
/// either engine.
pub const TOKEN_LOOKAHEAD_SAMPLES: u64 = 1520;

/// The bounds of the decode interval, in milliseconds.
pub const DECODE_INTERVAL_RANGE: std::ops::RangeInclusive<u32> = 40..=10_000;

/// A delay that the model was not trained for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidDelay {
    pub ms: u32,
}

impl fmt::Display for InvalidDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nearest: Vec<String> = nearest_delays(self.ms).iter().map(u32::to_string).collect();
        write!(
            f,
            "delay {} ms is not supported: use a multiple of 80 from 80 to 1200, or 2400 \
             (the nearest: {})",
            self.ms,
            nearest.join(" or ")
        )
    }
}

/// The delays the model was trained for.
pub fn trained_delays() -> impl Iterator<Item = u32> {
    (FRAME_MS..=1200).step_by(FRAME_MS as usize).chain([2400])
}

/// The trained delays nearest to `ms`: one, or the two either side of it
/// when they are as near.
pub fn nearest_delays(ms: u32) -> Vec<u32> {
    let distance = |d: u32| d.abs_diff(ms);
    let least = trained_delays().map(distance).min().expect("delays");
    trained_delays().filter(|&d| distance(d) == least).collect()
}

impl std::error::Error for InvalidDelay {}

/// Checks a transcription delay against the values the model was trained
/// for: a multiple of 80 ms from 80 to 1200 ms, or 2400 ms.
pub fn validate_delay(ms: u32) -> Result<u32, InvalidDelay> {
    let on_grid = ms.is_multiple_of(FRAME_MS) && (FRAME_MS..=1200).contains(&ms);
    if on_grid || ms == 2400 {
        Ok(ms)
    } else {
        Err(InvalidDelay { ms })
    }
}

/// How a stream is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    /// The model's transcription delay (see [`validate_delay`]).
    pub delay_ms: u32,
    /// How much audio is gathered before the model decodes.
    pub decode_interval_ms: u32,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            delay_ms: 480,
            decode_interval_ms: 160,
        }
    }
}

impl StreamConfig {
    /// Samples in one decode interval.
    pub fn interval_samples(&self) -> usize {
        (self.decode_interval_ms as usize * SAMPLE_RATE as usize / 1000).max(1)
    }

    /// The audio at a stream's start whose decodes do what a stream does
    /// once: the delay, by when the prompt is decoded, and two intervals.
    pub fn warm_up_ns(&self) -> u64 {
        u64::from(self.delay_ms + 2 * self.decode_interval_ms) * 1_000_000
    }
}

/// New text from one decode of the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextUpdate {
    /// Text appended to the transcript by this decode (may be empty).
    pub text: String,
    /// Samples fed to the stream, in total, when the text was published.
    pub audio_end: u64,
    /// The end of the audio the text so far is about, counted like
    /// `audio_end`: the end of the last 80 ms frame the model has decoded
    /// (the delay and the look-ahead behind `audio_end`), or `audio_end`
    /// itself after `finalize`.
    pub heard_until: u64,
    /// True for the update of `finalize`, after which no text follows.
    pub is_final: bool,
    /// Where the model ended its stream on its own during this decode: each
    /// time the stream went on in a new one from that sample (counted like
    /// `audio_end`), replaying the audio the model had not transcribed.
    pub resumed_from: Vec<u64>,
}

/// Lets another thread stop a running feed or finalize promptly. The flag
/// stays set until the stream is reset or begun again with
/// [`AbortHandle::clear`].
#[derive(Debug, Clone, Default)]
pub struct AbortHandle(Arc<AbortFlag>);

#[derive(Debug, Default)]
struct AbortFlag {
    aborted: AtomicBool,
    polls: AtomicU64,
}

impl AbortHandle {
    pub fn abort(&self) {
        self.0.aborted.store(true, Ordering::SeqCst);
    }

    pub fn is_aborted(&self) -> bool {
        self.0.aborted.load(Ordering::SeqCst)
    }

    pub fn clear(&self) {
        self.0.aborted.store(false, Ordering::SeqCst);
    }

    /// An engine asking whether to stop: counted, since the local engine
    /// follows its decoder through how often the library asks.
    #[cfg_attr(not(feature = "local"), allow(dead_code))]
    pub(crate) fn poll(&self) -> bool {
        self.0.polls.fetch_add(1, Ordering::Relaxed);
        self.is_aborted()
    }

    /// How often [`AbortHandle::poll`] was called.
    #[cfg_attr(not(feature = "local"), allow(dead_code))]
    pub(crate) fn polls(&self) -> u64 {
        self.0.polls.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_on_the_trained_grid_are_accepted() {
        assert_eq!(trained_delays().count(), 16);
        for ms in trained_delays() {
            assert_eq!(validate_delay(ms), Ok(ms));
        }
    }

    #[test]
    fn a_refused_delay_names_the_nearest_trained_ones() {
        assert_eq!(nearest_delays(1000), [960, 1040]);
        assert_eq!(nearest_delays(500), [480]);
        assert_eq!(nearest_delays(0), [80]);
        assert_eq!(nearest_delays(2000), [2400]);
        assert_eq!(nearest_delays(1800), [1200, 2400]);
        assert_eq!(
            InvalidDelay { ms: 1000 }.to_string(),
            "delay 1000 ms is not supported: use a multiple of 80 from 80 to 1200, or 2400 \
             (the nearest: 960 or 1040)"
        );
    }

    #[test]
    fn other_delays_are_refused() {
        for ms in [0, 40, 100, 479, 1280, 2000, 4800] {
            assert_eq!(validate_delay(ms), Err(InvalidDelay { ms }));
        }
    }

    #[test]
    fn polls_are_counted_and_say_whether_to_stop() {
        let handle = AbortHandle::default();
        assert!(!handle.poll());
        handle.clone().abort();
        assert!(handle.poll());
        assert_eq!(handle.polls(), 2);
        handle.clear();
        assert!(!handle.is_aborted());
    }
}
