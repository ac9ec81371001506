// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! How late text leaves behind its audio: each word's lag (from the moment
//! its last sound reached the element to the moment it left), counted in
//! a histogram for `stats` and the metrics.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::stats::field;

/// The histogram's upper bounds, in ms: around the 1.5 s default latency
/// and Ofcom's 3 s, with room for an overloaded model or a slow server.
pub const LAG_BOUNDS_MS: [u64; 9] = [250, 500, 1000, 1500, 2000, 3000, 5000, 10_000, 30_000];

/// Lags counted into buckets, as Prometheus histograms count them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LagHistogram {
    /// Observations at or below each bound (not cumulative).
    in_bucket: [u64; LAG_BOUNDS_MS.len()],
    count: u64,
    sum: Duration,
}

impl LagHistogram {
    pub fn observe(&mut self, lag: Duration) {
        let ms = lag.as_millis();
        if let Some(k) = LAG_BOUNDS_MS.iter().position(|&b| ms <= u128::from(b)) {
            self.in_bucket[k] += 1;
        }
        self.count += 1;
        self.sum += lag;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `stats` structure: `bounds` (ns), `counts` (cumulative, one per
    /// bound; all of them is `count`), `count` and `sum` (ns).
    pub fn to_structure(&self) -> gst::Structure {
        let bounds = LAG_BOUNDS_MS.iter().map(|ms| ms * 1_000_000);
        let cumulative = self.in_bucket.iter().scan(0u64, |total, n| {
            *total += n;
            Some(*total)
        });
        gst::Structure::builder("histogram")
            .field(field::BOUNDS, gst::Array::new(bounds))
            .field(field::COUNTS, gst::Array::new(cumulative))
            .field(field::COUNT, self.count)
            .field(field::SUM, self.sum.as_nanos() as u64)
            .build()
    }
}

/// Entries closer than this in arrival are kept as one.
const ARRIVAL_GRAIN: Duration = Duration::from_millis(20);
/// The most arrivals kept: minutes of audio at live pace, a few hundred KiB.
const MAX_ARRIVALS: usize = 8192;

/// When the audio up to each point of the input arrived, so that a word's
/// lag can be told from where its audio ends.
#[derive(Debug, Default)]
pub struct Arrivals {
    /// (where audio that arrived then ends, when it arrived), in order.
    entries: VecDeque<(u64, Instant)>,
}

impl Arrivals {
    /// Audio up to `end` (ns, input time) arrived at `at`.
    pub fn arrived(&mut self, end: u64, at: Instant) {
        if let Some(last) = self.entries.back_mut() {
            if end <= last.0 {
                // Earlier audio again (a seek, a new segment): what was
                // kept no longer says anything about what comes.
                self.entries.clear();
            } else if at.saturating_duration_since(last.1) < ARRIVAL_GRAIN {
                last.0 = end;
                return;
            }
        }
        if self.entries.len() == MAX_ARRIVALS {
            self.entries.pop_front();
        }
        self.entries.push_back((end, at));
    }

    /// How long ago the audio up to `end` arrived; what arrived before it
    /// is forgotten (words leave in order).
    pub fn lag_of(&mut self, end: u64, now: Instant) -> Option<Duration> {
        while self.entries.len() > 1 && self.entries[0].0 < end {
            self.entries.pop_front();
        }
        let (_, at) = self.entries.front()?;
        Some(now.saturating_duration_since(*at))
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lag_falls_in_the_first_bucket_whose_bound_holds_it() {
        gst::init().unwrap();
        let mut h = LagHistogram::default();
        for ms in [100, 250, 251, 40_000] {
            h.observe(Duration::from_millis(ms));
        }
        let s = h.to_structure();
        let counts: Vec<u64> = s
            .get::<gst::Array>("counts")
            .unwrap()
            .iter()
            .map(|v| v.get::<u64>().unwrap())
            .collect();
        assert_eq!(counts, [2, 3, 3, 3, 3, 3, 3, 3, 3]);
        assert_eq!(s.get::<u64>("count").unwrap(), 4);
        assert_eq!(s.get::<u64>("sum").unwrap(), 40_601_000_000);
    }

    #[test]
    fn a_word_takes_the_arrival_of_the_audio_it_ends_in() {
        let start = Instant::now();
        let mut arrivals = Arrivals::default();
        arrivals.arrived(100, start);
        arrivals.arrived(200, start + Duration::from_millis(100));
        arrivals.arrived(300, start + Duration::from_millis(200));
        let now = start + Duration::from_millis(1000);
        assert_eq!(arrivals.lag_of(150, now), Some(Duration::from_millis(900)));
        assert_eq!(arrivals.lag_of(300, now), Some(Duration::from_millis(800)));
        // Later than anything kept: the newest arrival stands for it.
        assert_eq!(arrivals.lag_of(900, now), Some(Duration::from_millis(800)));
    }

    #[test]
    fn close_arrivals_are_kept_as_one_and_the_oldest_go_past_the_bound() {
        let start = Instant::now();
        let mut arrivals = Arrivals::default();
        arrivals.arrived(100, start);
        arrivals.arrived(200, start + Duration::from_millis(5));
        assert_eq!(arrivals.entries.len(), 1);
        for k in 0..MAX_ARRIVALS as u64 + 10 {
            arrivals.arrived(300 + k, start + Duration::from_millis(100 * (k + 1)));
        }
        assert_eq!(arrivals.entries.len(), MAX_ARRIVALS);
    }
}
