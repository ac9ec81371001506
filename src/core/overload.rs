// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The overload policy: what to do with live audio a model slower than real
//! time cannot keep up with. State and decisions only, in nanoseconds and
//! samples: the worker measures, this decides.

use crate::settings::{Overload, Settings};
use crate::voxtral::{ns_to_samples, samples_to_ns};

/// What the worker sees when the oldest waiting audio is taken.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Situation {
    /// The input is live.
    pub(super) live: bool,
    /// Audio waiting for the model.
    pub(super) lag_ns: u64,
    /// Samples the running model stream has had, if one runs.
    pub(super) stream_samples: Option<u64>,
    /// The decode interval is stretched as far as it goes.
    pub(super) stretched_out: bool,
    /// The decode interval now, stretched or not.
    pub(super) interval_ns: u64,
}

/// A stretch of audio skipped, reported once transcription goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Skipped {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) skipped_ns: u64,
}

#[derive(Debug)]
pub(super) struct OverloadPolicy {
    mode: Overload,
    latency_ns: u64,
    max_lag_ns: u64,
    interval_samples: u64,
    delay_samples: u64,
    /// Audio skipped since transcription last went on: where the old
    /// stream's audio ended (if one ran) and how many samples went.
    skipped: Option<(Option<u64>, u64)>,
    /// Skipping since the worker last caught up: one WARNING per episode.
    overloaded: bool,
    lag_warned: bool,
}

impl OverloadPolicy {
    pub(super) fn new(settings: &Settings) -> OverloadPolicy {
        let interval_samples = settings.stream_config().interval_samples() as u64;
        OverloadPolicy {
            mode: settings.overload,
            latency_ns: settings.latency().nseconds(),
            max_lag_ns: settings.max_lag().nseconds(),
            interval_samples,
            delay_samples: ns_to_samples(settings.delay().nseconds()),
            skipped: None,
            overloaded: false,
            lag_warned: false,
        }
    }

    /// The worker waited for input: an episode of falling behind is over.
    pub(super) fn caught_up(&mut self) {
        self.overloaded = false;
    }

    /// Whether the oldest waiting live audio must go: with skip when the
    /// model fell behind the live edge, with queue when more than `max-lag`
    /// of audio waits (memory stays bounded).
    /// `age` tells how old the audio is on the pipeline clock (running
    /// time now minus the audio's), if both are known; it is asked only
    /// when needed, since it reads the clock.
    pub(super) fn must_skip(&self, now: &Situation, age: impl FnOnce() -> Option<u64>) -> bool {
        if !now.live {
            return false;
        }
        match self.mode {
            Overload::Skip => {
                (now.stretched_out || self.overloaded)
                    && self.fell_behind(now)
                    && age().is_some_and(|a| a > self.latency_ns + self.stretch_ns(now))
            }
            Overload::Queue => self.max_lag_ns > 0 && now.lag_ns > self.max_lag_ns,
        }
    }

    /// With skip: the audio is more than the latency old on the pipeline's
    /// clock (its words would come too late to be live subtitles), and more
    /// than the latency and a decode interval of it waits. The second keeps
    /// a worker that a synchronising sink held back (for up to the latency:
    /// that is what the latency is for) from counting as a slow model; the
    /// first keeps audio that comes faster than real time from ever
    /// counting as late. A stretched interval adds its stretch to both: a
    /// model that keeps up at a second holds about two of them waiting
    /// (one gathering, one arriving while it decodes), which is not
    /// falling behind.
    fn fell_behind(&self, now: &Situation) -> bool {
        if now
            .stream_samples
            .is_some_and(|s| s < self.first_audio_samples())
        {
            return false;
        }
        now.lag_ns > self.latency_ns + samples_to_ns(self.interval_samples) + self.stretch_ns(now)
    }

    /// How far the decode interval is stretched past `decode-interval`.
    fn stretch_ns(&self, now: &Situation) -> u64 {
        now.interval_ns
            .saturating_sub(samples_to_ns(self.interval_samples))
    }

    /// A new model stream's first audio, never skipped: it writes nothing
    /// before the delay and a decode or two (and at real scale its start-up
    /// costs seconds); skipped sooner, a model slower than real time would
    /// be restarted again and again and never write a word. Two intervals of
    /// `decode-interval`, however far the interval is stretched: a stream
    /// that restarts after a skip decodes at `decode-interval` (see
    /// [`Self::skipping`]), and a stretched stream long past its start keeps
    /// up or falls behind by its lag alone.
    fn first_audio_samples(&self) -> u64 {
        self.delay_samples + 2 * self.interval_samples
    }

    /// Skipping since the worker last caught up. The stretched interval did
    /// not keep up, so until then the streams decode at `decode-interval`:
    /// a restart after a skip needs the delay and two intervals decoded at
    /// the model's pace before it may be skipped again, which at a stretched
    /// interval costs several times as much lag.
    pub(super) fn skipping(&self) -> bool {
        self.overloaded
    }

    /// How much of the newest waiting audio a skip keeps: skip goes on from
    /// the present (one decode interval); queue keeps half of `max-lag`,
    /// losing as few words as a bounded memory allows.
    pub(super) fn samples_kept_by_a_skip(&self) -> u64 {
        match self.mode {
            Overload::Skip => self.interval_samples,
            Overload::Queue => ns_to_samples(self.max_lag_ns / 2),
        }
    }

    /// Notes `samples` skipped from `from` (where the old stream's audio
    /// ended, if one ran). Returns the WARNING text on an episode's first
    /// skip.
    pub(super) fn record_skip(
        &mut self,
        from: Option<u64>,
        samples: u64,
        advice: &str,
    ) -> Option<String> {
        let (earlier_from, earlier) = self.skipped.take().unwrap_or((from, 0));
        self.skipped = Some((earlier_from, earlier + samples));
        if std::mem::replace(&mut self.overloaded, true) {
            return None;
        }
        let so_far = samples_to_ns(earlier + samples) / 1_000_000;
        Some(match self.mode {
            Overload::Skip => format!(
                "the model fell more than the latency of {} ms behind the live audio: skipping \
                 the oldest audio to stay live ({so_far} ms so far; overload=queue keeps every \
                 word instead). {advice}",
                self.latency_ns / 1_000_000
            ),
            Overload::Queue => format!(
                "more than max-lag, {} ms, of live audio waits for the model: skipping the \
                 oldest to keep memory bounded ({so_far} ms so far; a larger max-lag keeps \
                 more). {advice}",
                self.max_lag_ns / 1_000_000
            ),
        })
    }

    /// Transcription goes on with audio at `pts`: the stretch skipped
    /// before it, if any.
    pub(super) fn take_skipped(&mut self, pts: Option<u64>) -> Option<Skipped> {
        let (from, samples) = self.skipped.take()?;
        let skipped_ns = samples_to_ns(samples);
        let end = pts.unwrap_or_else(|| from.unwrap_or(0) + skipped_ns);
        let start = from.unwrap_or(end.saturating_sub(skipped_ns)).min(end);
        Some(Skipped {
            start,
            end,
            skipped_ns,
        })
    }

    /// With queue, the WARNING text when live input falls behind by more
    /// than the latency; again after it recovered to half of it. (With
    /// skip the lag never stays above the latency: skips are warned about.)
    pub(super) fn check_lag(
        &mut self,
        live: bool,
        lag_ns: u64,
        advice: impl FnOnce() -> String,
    ) -> Option<String> {
        if !live || self.mode == Overload::Skip {
            return None;
        }
        if !self.lag_warned && lag_ns > self.latency_ns {
            self.lag_warned = true;
            return Some(format!(
                "the model is {} ms behind the audio, more than the latency of {} ms. {}",
                lag_ns / 1_000_000,
                self.latency_ns / 1_000_000,
                advice()
            ));
        }
        if self.lag_warned && lag_ns < self.latency_ns / 2 {
            self.lag_warned = false;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn policy(mode: Overload, max_lag_ms: u32) -> OverloadPolicy {
        OverloadPolicy::new(&Settings {
            overload: mode,
            max_lag_ms,
            latency_ms: 1500,
            ..Settings::default()
        })
    }

    fn behind(lag_ms: u64) -> Situation {
        Situation {
            live: true,
            lag_ns: lag_ms * MS,
            stream_samples: Some(16_000 * 60),
            stretched_out: true,
            interval_ns: 160 * MS,
        }
    }

    fn aged(ms: u64) -> impl FnOnce() -> Option<u64> {
        move || Some(ms * MS)
    }

    #[test]
    fn skip_needs_both_old_audio_and_a_long_queue() {
        let p = policy(Overload::Skip, 0);
        // Latency 1500 ms plus a 160 ms decode interval of queue.
        assert!(p.must_skip(&behind(1700), aged(1600)));
        assert!(
            !p.must_skip(&behind(1600), aged(1600)),
            "a queue within latency + interval"
        );
        assert!(
            !p.must_skip(&behind(1700), aged(1400)),
            "audio younger than the latency"
        );
        assert!(!p.must_skip(&behind(1700), || None));
    }

    #[test]
    fn the_clock_is_read_only_when_the_queue_is_long() {
        let p = policy(Overload::Skip, 0);
        let read = std::cell::Cell::new(false);
        assert!(!p.must_skip(&behind(100), || {
            read.set(true);
            Some(60_000 * MS)
        }));
        assert!(!read.get());
    }

    #[test]
    fn non_live_input_is_never_skipped() {
        let not_live = Situation {
            live: false,
            ..behind(60_000)
        };
        assert!(!policy(Overload::Skip, 0).must_skip(&not_live, aged(60_000)));
        assert!(!policy(Overload::Queue, 1000).must_skip(&not_live, aged(60_000)));
    }

    #[test]
    fn a_new_stream_first_gets_the_delay_and_two_decodes() {
        let p = policy(Overload::Skip, 0);
        // 480 ms delay + 2 x 160 ms = 800 ms = 12800 samples.
        let young = Situation {
            stream_samples: Some(12_799),
            ..behind(5000)
        };
        assert!(!p.must_skip(&young, aged(5000)));
        let grown = Situation {
            stream_samples: Some(12_800),
            ..young
        };
        assert!(p.must_skip(&grown, aged(5000)));
        let none = Situation {
            stream_samples: None,
            ..young
        };
        assert!(p.must_skip(&none, aged(5000)));
    }

    #[test]
    fn queue_skips_only_past_max_lag_and_keeps_half_of_it() {
        let q = policy(Overload::Queue, 2000);
        assert!(!q.must_skip(&behind(2000), aged(60_000)));
        assert!(q.must_skip(&behind(2001), aged(0)));
        assert_eq!(q.samples_kept_by_a_skip(), 16_000);
        let unbounded = policy(Overload::Queue, 0);
        assert!(!unbounded.must_skip(&behind(3_600_000), aged(3_600_000)));
        assert_eq!(policy(Overload::Skip, 0).samples_kept_by_a_skip(), 2560);
    }

    #[test]
    fn one_warning_per_episode_and_the_skips_add_up() {
        let mut p = policy(Overload::Skip, 0);
        let first = p.record_skip(Some(10 * 1000 * MS), 16_000, "advice");
        assert!(first.unwrap().contains("1000 ms so far"));
        assert_eq!(p.record_skip(Some(99), 8_000, "advice"), None);
        let skipped = p.take_skipped(Some(12 * 1000 * MS)).unwrap();
        assert_eq!(
            skipped,
            Skipped {
                start: 10 * 1000 * MS,
                end: 12 * 1000 * MS,
                skipped_ns: 1500 * MS
            }
        );
        assert_eq!(p.take_skipped(None), None);
        assert_eq!(
            p.record_skip(None, 1, "advice"),
            None,
            "still the same episode"
        );
        p.caught_up();
        assert!(p.record_skip(None, 1, "advice").is_some());
    }

    #[test]
    fn queue_warns_of_lag_once_until_it_halves() {
        let mut q = policy(Overload::Queue, 0);
        assert_eq!(q.check_lag(true, 1400 * MS, || "a".into()), None);
        assert!(q.check_lag(true, 1600 * MS, || "a".into()).is_some());
        assert_eq!(q.check_lag(true, 1800 * MS, || "a".into()), None);
        assert_eq!(q.check_lag(true, 700 * MS, || "a".into()), None);
        assert!(q.check_lag(true, 1600 * MS, || "a".into()).is_some());
        assert_eq!(
            policy(Overload::Skip, 0).check_lag(true, 9000 * MS, || "a".into()),
            None
        );
        assert_eq!(q.check_lag(false, 9000 * MS, || "a".into()), None);
    }

    #[test]
    fn a_stretched_interval_is_not_falling_behind() {
        let p = policy(Overload::Skip, 0);
        // At 960 ms a model that keeps up holds up to two intervals
        // waiting, older than the latency of 1500 ms on the clock.
        let stretched = Situation {
            interval_ns: 960 * MS,
            ..behind(1950)
        };
        assert!(!p.must_skip(&stretched, aged(1950)));
        // Latency 1500 + decode-interval 160 + the stretch of 800.
        let fell_behind = Situation {
            interval_ns: 960 * MS,
            ..behind(2500)
        };
        assert!(p.must_skip(&fell_behind, aged(2400)));
        assert!(
            !p.must_skip(&fell_behind, aged(2200)),
            "audio younger than latency + stretch"
        );
    }

    #[test]
    fn a_new_stream_keeps_the_delay_and_two_base_intervals_however_stretched() {
        let p = policy(Overload::Skip, 0);
        // Delay 480 ms + 2 x 160 ms = 0.8 s = 12 800 samples, at 960 ms too.
        let young = Situation {
            interval_ns: 960 * MS,
            stream_samples: Some(12_799),
            ..behind(9000)
        };
        assert!(!p.must_skip(&young, aged(9000)));
        let grown = Situation {
            stream_samples: Some(12_800),
            ..young
        };
        assert!(p.must_skip(&grown, aged(9000)));
    }

    #[test]
    fn once_skipping_audio_goes_at_the_base_interval_until_the_model_catches_up() {
        let mut p = policy(Overload::Skip, 0);
        let unstretched = Situation {
            stretched_out: false,
            ..behind(2000)
        };
        assert!(
            !p.must_skip(&unstretched, aged(2000)),
            "the stretch comes before a skip"
        );
        assert!(p.record_skip(Some(0), 16_000, "").is_some());
        assert!(p.skipping());
        assert!(p.must_skip(&unstretched, aged(2000)));
        p.caught_up();
        assert!(!p.skipping());
        assert!(!p.must_skip(&unstretched, aged(2000)));
    }
}
