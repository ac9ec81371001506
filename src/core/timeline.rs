// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The input's timeline: where a stream's text goes on it. A word's time is
//! its place in the stream's audio (`src/transcript/`) plus the time of the
//! stream's first sample (`base`) plus `lateness`.

use super::overload::Skipped;
use super::TimedCue;
use crate::transcript::Cue;

#[derive(Debug)]
pub(super) struct Timeline {
    /// The input segment the times are in.
    pub(super) segment: gst::FormattedSegment<gst::ClockTime>,
    lateness_ns: u64,
}

impl Timeline {
    pub(super) fn new(lateness: gst::ClockTime) -> Timeline {
        Timeline {
            segment: gst::FormattedSegment::new(),
            lateness_ns: lateness.nseconds(),
        }
    }

    /// Input time `t` on the output timeline.
    pub(super) fn output_time(&self, t: u64) -> gst::ClockTime {
        gst::ClockTime::from_nseconds(t + self.lateness_ns)
    }

    /// A stream's cue (times from its first sample, at `base`).
    pub(super) fn timed_cue(&self, base: u64, cue: Cue) -> TimedCue {
        TimedCue {
            pts: self.output_time(base + cue.start),
            duration: gst::ClockTime::from_nseconds(cue.end - cue.start),
            text: cue.text,
            segment: self.segment.clone(),
            speaker: None,
        }
    }

    /// How old audio at `pts` is at running time `now`, if it is in the
    /// segment.
    pub(super) fn age(&self, pts: gst::ClockTime, now: gst::ClockTime) -> Option<u64> {
        let at = self.segment.to_running_time(pts)?;
        Some(now.nseconds().saturating_sub(at.nseconds()))
    }

    /// Output time `t` as running time (as it is when outside the segment).
    pub(super) fn running_time(&self, t: gst::ClockTime) -> u64 {
        super::running_ns(&self.segment, t)
    }

    /// The `voxtralrt-skipped` message for a skipped stretch.
    pub(super) fn skipped_message(&self, skipped: &Skipped) -> gst::Structure {
        let (start, end) = (
            self.output_time(skipped.start),
            self.output_time(skipped.end),
        );
        let running = |t: gst::ClockTime| {
            self.segment
                .to_running_time(t)
                .map_or(t.nseconds(), gst::ClockTime::nseconds)
        };
        gst::Structure::builder("voxtralrt-skipped")
            .field("start", start.nseconds())
            .field("end", end.nseconds())
            .field("running-time", running(start))
            .field("running-time-end", running(end))
            .field("audio-skipped", skipped.skipped_ns)
            .build()
    }
}
