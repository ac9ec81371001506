// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! How often the model decodes live audio: `decode-interval`, stretched
//! while the model falls behind, before the overload policy skips audio.
//!
//! Each decode call of transcribe.cpp 0.4.1 pays a fixed cost: its encoder
//! unpacks all of its weights for the batch of new frames (ggml's tiled
//! matmul), whatever the batch's size. A longer interval pays it less often,
//! so a model just too slow at 160 ms often keeps up at 320 or 640 ms, at
//! the price of later words. State and decisions only: the worker measures.

use crate::settings::Settings;

#[cfg(test)]
use crate::settings::DEFAULT_MAX_DECODE_INTERVAL_MS as STRETCH_BOUND_MS;
/// A real-time factor measured at an interval stays good for this much
/// audio; then that interval may be tried again (the machine's load
/// changes).
const MEASURE_KEPT_NS: u64 = 60_000_000_000;
/// Back to a shorter interval only where it was measured faster than this
/// (or not measured lately): room for bursts of work.
const RELAX_BELOW_RTF: f64 = 0.8;
/// Falling behind at this real-time factor or more.
const BEHIND_RTF: f64 = 0.95;
/// A longer interval counts as a gain when the model runs at most this
/// fraction of the time it took at the shorter one.
const GAIN: f64 = 0.95;

/// A change of interval, for the element's message and `stats`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Change {
    pub(super) from_ms: u32,
    pub(super) to_ms: u32,
    /// The real-time factor measured at `from_ms`.
    pub(super) rtf: f64,
    pub(super) lag_ns: u64,
}

impl Change {
    pub(super) fn stretched(&self) -> bool {
        self.to_ms > self.from_ms
    }
}

#[derive(Debug, Clone, Copy)]
struct Measured {
    rtf: f64,
    /// Audio time (of all fed) when it was measured.
    at_ns: u64,
}

#[derive(Debug)]
pub(super) struct Cadence {
    base_ms: u32,
    bound_ms: u32,
    now_ms: u32,
    latency_ns: u64,
    /// Audio fed and model time spent since the last decision.
    window_audio_ns: u64,
    window_busy_ns: u64,
    /// Audio fed in all.
    total_ns: u64,
    /// Audio of the stream's start still to come, judged only by its lag.
    warm_up_ns: u64,
    /// The real-time factor last measured at each interval tried.
    measured: Vec<(u32, Measured)>,
}

impl Cadence {
    pub(super) fn new(settings: &Settings) -> Cadence {
        let base_ms = settings.decode_interval_ms;
        Cadence {
            base_ms,
            bound_ms: base_ms.max(settings.max_decode_interval_ms),
            now_ms: base_ms,
            latency_ns: settings.latency().nseconds(),
            window_audio_ns: 0,
            window_busy_ns: 0,
            total_ns: 0,
            warm_up_ns: 0,
            measured: Vec::new(),
        }
    }

    pub(super) fn interval_ms(&self) -> u32 {
        self.now_ms
    }

    /// Back to `decode-interval` at once, the measures kept (overload: a
    /// skip, after which streams restart there). The change, if any.
    pub(super) fn back_to_base(&mut self) -> Option<Change> {
        self.new_window();
        let rtf = self.recent(self.now_ms).unwrap_or(0.0);
        self.change_to(self.base_ms, rtf, 0)
    }

    /// A stream begins: its first `warm_up_ns` of audio are judged only by
    /// the lag they leave, as their decodes pay what a stream pays once
    /// (the model encodes its left padding at the first decode and its
    /// prompt once the delay's audio is in: on 2 CPUs, three streams of the
    /// 4+2-layer model took 1.2 s for their first 0.64 s of audio, then
    /// 0.7 s a second).
    pub(super) fn stream_begins(&mut self, warm_up_ns: u64) {
        self.new_window();
        self.warm_up_ns = warm_up_ns;
    }

    /// Stretched as far as it goes: only skipping is left.
    pub(super) fn at_bound(&self) -> bool {
        self.now_ms >= self.bound_ms
    }

    /// After a feed of `audio_ns` of audio that took the model `busy_ns`,
    /// with `lag_ns` of audio waiting: the new interval, if it changes.
    /// Only live input is paced; a file waits for the model instead.
    pub(super) fn after_feed(
        &mut self,
        audio_ns: u64,
        busy_ns: u64,
        lag_ns: u64,
        live: bool,
    ) -> Option<Change> {
        if !live {
            return None;
        }
        self.window_audio_ns += audio_ns;
        self.window_busy_ns += busy_ns;
        self.total_ns += audio_ns;
        if self.warm_up_ns > 0 {
            self.warm_up_ns = self.warm_up_ns.saturating_sub(audio_ns);
            return self.far_behind_at_the_start(lag_ns);
        }
        if self.window_audio_ns < self.window_ns() {
            return None;
        }
        let rtf = self.window_rtf();
        self.new_window();
        self.remember(rtf);
        let to_ms = self.next_interval(rtf, lag_ns);
        self.change_to(to_ms, rtf, lag_ns)
    }

    /// During a stream's start: what it costs says nothing of the pace and
    /// is not kept, but falling behind by more than half the latency goes
    /// to the bound, as after the start. The first window after the start
    /// begins afresh.
    fn far_behind_at_the_start(&mut self, lag_ns: u64) -> Option<Change> {
        let rtf = self.window_rtf();
        if self.warm_up_ns == 0 {
            self.new_window();
        }
        if !self.far_behind(rtf, lag_ns) {
            return None;
        }
        self.change_to(self.bound_ms, rtf, lag_ns)
    }

    fn window_rtf(&self) -> f64 {
        self.window_busy_ns as f64 / self.window_audio_ns.max(1) as f64
    }

    fn new_window(&mut self) {
        self.window_audio_ns = 0;
        self.window_busy_ns = 0;
    }

    /// Moves to `to_ms`, if that is a change: the change.
    fn change_to(&mut self, to_ms: u32, rtf: f64, lag_ns: u64) -> Option<Change> {
        (to_ms != self.now_ms).then(|| {
            let change = Change {
                from_ms: self.now_ms,
                to_ms,
                rtf,
                lag_ns,
            };
            self.now_ms = to_ms;
            change
        })
    }

    /// Behind by more than half the latency: straight to the bound, before
    /// the latency runs out (where the bound was not lately as slow).
    fn far_behind(&self, rtf: f64, lag_ns: u64) -> bool {
        rtf >= BEHIND_RTF && lag_ns > self.latency_ns / 2 && self.may_gain(self.bound_ms, rtf)
    }

    /// Decisions come after two intervals of audio, and at least a second:
    /// enough decodes for a real-time factor to mean something.
    fn window_ns(&self) -> u64 {
        (2 * u64::from(self.now_ms) * 1_000_000).max(1_000_000_000)
    }

    fn remember(&mut self, rtf: f64) {
        let m = Measured {
            rtf,
            at_ns: self.total_ns,
        };
        match self.measured.iter_mut().find(|(ms, _)| *ms == self.now_ms) {
            Some((_, old)) => *old = m,
            None => self.measured.push((self.now_ms, m)),
        }
    }

    fn next_interval(&self, rtf: f64, lag_ns: u64) -> u32 {
        let interval_ns = u64::from(self.now_ms) * 1_000_000;
        // A stretch that made the model no faster only coarsens the words'
        // times: back to the best interval below.
        if let Some((ms, best)) = self.best_measured_below() {
            if rtf >= GAIN * best {
                return ms;
            }
        }
        // Audio that waits while the model runs faster than real time came
        // in a burst: the model catches up by itself.
        if self.far_behind(rtf, lag_ns) {
            return self.bound_ms;
        }
        if rtf >= BEHIND_RTF && lag_ns > interval_ns && self.may_gain(self.longer(), rtf) {
            return self.longer();
        }
        let shorter = self.shorter();
        if shorter < self.now_ms && lag_ns < interval_ns && self.fast_enough_at(shorter) {
            return shorter;
        }
        self.now_ms
    }

    /// The recent figure at `ms`, if any.
    fn recent(&self, ms: u32) -> Option<f64> {
        self.measured
            .iter()
            .find(|(at, _)| *at == ms)
            .filter(|(_, m)| self.total_ns.saturating_sub(m.at_ns) < MEASURE_KEPT_NS)
            .map(|(_, m)| m.rtf)
    }

    /// The fastest interval below the current one, measured lately.
    fn best_measured_below(&self) -> Option<(u32, f64)> {
        self.measured
            .iter()
            .filter(|(ms, _)| *ms < self.now_ms)
            .filter_map(|(ms, _)| Some((*ms, self.recent(*ms)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Whether going to `ms` may make the model faster than `rtf`: no
    /// interval as long or longer was measured lately as no faster (the
    /// cost of a decode only falls as the interval grows).
    fn may_gain(&self, ms: u32, rtf: f64) -> bool {
        ms > self.now_ms
            && !self
                .measured
                .iter()
                .filter(|(at, _)| *at >= ms)
                .filter_map(|(at, _)| self.recent(*at))
                .any(|r| r >= GAIN * rtf)
    }

    fn longer(&self) -> u32 {
        (self.now_ms * 2).min(self.bound_ms)
    }

    fn shorter(&self) -> u32 {
        // The steps a stretch took, back down: base, 2 base, 4 base ...
        let mut ms = self.base_ms;
        while ms * 2 < self.now_ms {
            ms *= 2;
        }
        ms
    }

    /// Whether `ms` was measured fast enough lately, or not at all.
    fn fast_enough_at(&self, ms: u32) -> bool {
        self.recent(ms).is_none_or(|rtf| rtf < RELAX_BELOW_RTF)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn cadence() -> Cadence {
        Cadence::new(&Settings {
            decode_interval_ms: 160,
            latency_ms: 1500,
            ..Settings::default()
        })
    }

    /// A model like the real one on a CPU: a fixed cost per decode (here
    /// 70 ms) on top of 0.75 s per second of audio. Too slow at 160 ms
    /// (1.19), just keeping up at 320 (0.97).
    fn engine_like(interval_ms: u32) -> f64 {
        0.75 + 70.0 / f64::from(interval_ms)
    }

    /// Feeds `seconds` of live audio in 20 ms pieces at the real-time
    /// factor `rtf` gives for the interval in use, the lag growing by what
    /// the model falls behind (from `lag`); returns the changes and the lag
    /// at the end.
    fn run_with(
        c: &mut Cadence,
        seconds: u64,
        rtf: impl Fn(u32) -> f64,
        mut lag: u64,
    ) -> (Vec<Change>, u64) {
        let mut changes = Vec::new();
        for _ in 0..seconds * 50 {
            let busy = (20.0 * rtf(c.interval_ms()) * MS as f64) as u64;
            lag = (lag + busy).saturating_sub(20 * MS);
            changes.extend(c.after_feed(20 * MS, busy, lag, true));
        }
        (changes, lag)
    }

    fn run(c: &mut Cadence, seconds: u64, rtf: f64, lag: u64) -> (Vec<Change>, u64) {
        run_with(c, seconds, |_| rtf, lag)
    }

    #[test]
    fn a_model_that_keeps_up_keeps_the_interval() {
        let mut c = cadence();
        let (changes, _) = run(&mut c, 30, 0.7, 0);
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(c.interval_ms(), 160);
    }

    #[test]
    fn a_model_that_falls_behind_stretches_step_by_step_until_it_keeps_up() {
        let mut c = cadence();
        let (changes, lag) = run_with(&mut c, 30, engine_like, 0);
        // 320 ms keeps up: no further.
        let steps: Vec<u32> = changes.iter().map(|c| c.to_ms).collect();
        assert_eq!(steps, [320], "{changes:?}");
        assert!(lag < 160 * MS, "{} ms behind", lag / MS);
    }

    #[test]
    fn far_behind_goes_to_the_bound_at_once() {
        let mut c = cadence();
        let change = c.after_feed(1000 * MS, 3000 * MS, 900 * MS, true).unwrap();
        assert_eq!(change.to_ms, STRETCH_BOUND_MS);
        assert!(c.at_bound());
    }

    #[test]
    fn headroom_brings_the_interval_back_once_the_slow_figures_are_old() {
        let mut c = cadence();
        run_with(&mut c, 10, engine_like, 0);
        assert_eq!(c.interval_ms(), 320);
        // The load goes: the shorter intervals, measured too slow lately,
        // are not tried at once...
        let (changes, _) = run(&mut c, 20, 0.3, 0);
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(c.interval_ms(), 320);
        // ...but once those figures are a minute old.
        let (changes, _) = run(&mut c, 70, 0.3, 0);
        assert!(changes.iter().all(|c| !c.stretched()), "{changes:?}");
        assert_eq!(c.interval_ms(), 160);
    }

    #[test]
    fn headroom_at_a_shorter_interval_measured_fast_brings_it_back() {
        let mut c = cadence();
        // 160 ms measured fast, then a burst of work stretches it.
        run(&mut c, 5, 0.5, 0);
        let change = c.after_feed(1000 * MS, 1100 * MS, 900 * MS, true).unwrap();
        assert!(change.stretched());
        let (changes, _) = run(&mut c, 10, 0.5, 0);
        assert!(!changes.is_empty());
        assert!(c.interval_ms() < STRETCH_BOUND_MS);
    }

    #[test]
    fn a_stretch_that_brings_nothing_is_undone_and_not_tried_again_soon() {
        let mut c = cadence();
        // As slow at every interval (a model that pays nothing per decode).
        let (changes, _) = run(&mut c, 10, 2.0, 0);
        assert!(changes[0].stretched(), "{changes:?}");
        assert!(!changes[1].stretched(), "{changes:?}");
        assert_eq!(c.interval_ms(), 160);
        assert_eq!(changes.len(), 2, "{changes:?}");
    }

    /// A stream's start like three streams' of the 4+2-layer model on 2
    /// CPUs: its first 640 ms of audio cost 1.2 s; then the model runs at
    /// `rtf`. Returns the changes.
    fn start_slowly_then(c: &mut Cadence, rtf: f64) -> Vec<Change> {
        let mut changes = Vec::new();
        let mut lag = 0;
        for i in 0..30 * 50 {
            let busy = if i < 32 {
                37.5 * MS as f64
            } else {
                20.0 * rtf * MS as f64
            } as u64;
            lag = (lag + busy).saturating_sub(20 * MS);
            changes.extend(c.after_feed(20 * MS, busy, lag, true));
        }
        changes
    }

    #[test]
    fn a_streams_start_does_not_stretch_a_model_that_keeps_up() {
        let mut c = cadence();
        c.stream_begins(800 * MS);
        let changes = start_slowly_then(&mut c, 0.6);
        assert!(changes.is_empty(), "{changes:?}");
        assert_eq!(c.interval_ms(), 160);
    }

    #[test]
    fn without_its_start_left_out_the_same_stream_would_stretch() {
        let mut c = cadence();
        let changes = start_slowly_then(&mut c, 0.6);
        assert!(changes[0].stretched(), "{changes:?}");
    }

    #[test]
    fn a_start_that_threatens_the_latency_goes_to_the_bound_at_once() {
        let mut c = cadence();
        c.stream_begins(800 * MS);
        let mut lag = 0;
        let mut changes = Vec::new();
        for _ in 0..40 {
            lag += 40 * MS;
            changes.extend(c.after_feed(20 * MS, 60 * MS, lag, true));
        }
        let steps: Vec<u32> = changes.iter().map(|c| c.to_ms).collect();
        assert_eq!(steps, [STRETCH_BOUND_MS], "{changes:?}");
    }

    #[test]
    fn after_its_start_a_stream_too_slow_is_stretched() {
        let mut c = cadence();
        c.stream_begins(800 * MS);
        let (changes, _) = run_with(&mut c, 30, engine_like, 0);
        let steps: Vec<u32> = changes.iter().map(|c| c.to_ms).collect();
        assert_eq!(steps, [320], "{changes:?}");
    }

    #[test]
    fn a_burst_of_audio_to_a_fast_model_changes_nothing() {
        let mut c = cadence();
        assert!(c.after_feed(1000 * MS, 100 * MS, 5000 * MS, true).is_none());
        assert_eq!(c.interval_ms(), 160);
    }

    #[test]
    fn files_are_never_paced() {
        let mut c = cadence();
        assert!(c
            .after_feed(10_000 * MS, 30_000 * MS, 9000 * MS, false)
            .is_none());
        assert_eq!(c.interval_ms(), 160);
    }

    #[test]
    fn an_interval_longer_than_the_bound_is_the_bound() {
        let mut c = Cadence::new(&Settings {
            decode_interval_ms: 2000,
            ..Settings::default()
        });
        assert!(c.at_bound());
        let (changes, _) = run(&mut c, 10, 2.0, 0);
        assert!(changes.is_empty());
    }
}
