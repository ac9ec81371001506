// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! When the worker ends the model's stream and starts a new one: once it
//! is long (at a pause, if one comes soon), and when a model that cannot be
//! seen to end its stream has heard sound for a long while without writing.

use crate::settings::Settings;
use crate::voxtral::samples_to_ns;

/// Sound louder than this (RMS, -40 dBFS) is something the model should
/// write about, unless it is music or noise.
const VOICED_RMS: f32 = 0.01;
/// Sound heard without any text after which the model is taken to have
/// stopped.
pub(super) const STOPPED_MODEL_AFTER_NS: u64 = 4_000_000_000;
/// Past the maximum stream duration, a pause is waited for at most this long
/// (or a tenth of the maximum, if that is shorter).
const RESTART_GRACE_NS: u64 = 30_000_000_000;

fn is_voiced(samples: &[f32]) -> bool {
    if samples.is_empty() {
        return false;
    }
    let energy: f32 = samples.iter().map(|v| v * v).sum();
    (energy / samples.len() as f32).sqrt() > VOICED_RMS
}

#[derive(Debug)]
pub(super) struct StreamWatch {
    max_stream_ns: u64,
    /// Audio with sound in it that the model has heard since it last wrote
    /// text, in the running stream.
    voiced_without_text_ns: u64,
}

impl StreamWatch {
    pub(super) fn new(settings: &Settings) -> StreamWatch {
        StreamWatch {
            max_stream_ns: settings.max_stream_duration().nseconds(),
            voiced_without_text_ns: 0,
        }
    }

    /// A new stream began.
    pub(super) fn begun(&mut self) {
        self.voiced_without_text_ns = 0;
    }

    /// The library stops decoding a stream for good when the model writes
    /// its end token mid-stream, and does not say so. The recognizer
    /// normally sees it and goes on at once; where it cannot, a model that
    /// has heard sound for a long while without writing anything has
    /// probably stopped: a new stream costs little (in true silence nothing
    /// is lost). Whether that is so after a feed of `samples`.
    pub(super) fn model_seems_stopped(&mut self, samples: &[f32], wrote: bool) -> bool {
        if wrote {
            self.voiced_without_text_ns = 0;
            return false;
        }
        if is_voiced(samples) {
            self.voiced_without_text_ns += samples_to_ns(samples.len() as u64);
        }
        self.voiced_without_text_ns >= STOPPED_MODEL_AFTER_NS
    }

    /// Whether a stream `length_ns` long should end now: past the maximum
    /// at a pause (`quiet`: no word held), or once the grace runs out.
    pub(super) fn long_enough(&self, length_ns: u64, quiet: bool) -> bool {
        let grace = RESTART_GRACE_NS.min(self.max_stream_ns / 10);
        length_ns >= self.max_stream_ns && (quiet || length_ns >= self.max_stream_ns + grace)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_seconds_of_sound_without_text_means_a_stopped_model() {
        let mut w = StreamWatch::new(&Settings::default());
        let loud = vec![0.5f32; 16_000];
        let quiet = vec![0.001f32; 16_000];
        for _ in 0..3 {
            assert!(!w.model_seems_stopped(&loud, false));
        }
        assert!(
            !w.model_seems_stopped(&quiet, false),
            "silence does not count"
        );
        assert!(w.model_seems_stopped(&loud, false));
        assert!(
            !w.model_seems_stopped(&loud, true),
            "text starts the count again"
        );
    }

    #[test]
    fn a_long_stream_ends_at_a_pause_or_after_the_grace() {
        let w = StreamWatch::new(&Settings {
            max_stream_duration_ms: 3_600_000,
            ..Settings::default()
        });
        let s = 1_000_000_000u64;
        assert!(!w.long_enough(3599 * s, true));
        assert!(w.long_enough(3600 * s, true));
        assert!(!w.long_enough(3600 * s, false));
        assert!(w.long_enough(3630 * s, false));
    }
}
