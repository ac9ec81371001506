// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Speech-only decoding (`speech-only`): the model runs while someone
//! speaks. Once the voice detector has heard no speech for the hangover,
//! the stream is finished as at EOS; the audio after it is kept back as a
//! pre-roll, and at the next onset a new stream starts with it, so that
//! the first syllable, which the detector hears late, is decoded too.
//! The hangover's last pre-roll is held back from the model while the gate
//! is open: if the hangover passes it is the next stream's pre-roll, so a
//! pause just longer than the hangover leaves the next stream a whole one.
//! Decisions are per input buffer; times are the input's timeline.

use std::collections::VecDeque;

use super::voice::Frame;
use crate::voxtral::{ns_to_samples, samples_to_ns, FRAME_SAMPLES};

/// A frame with a voice score from this on may be speech. Lower than the
/// watchdog's: a false "speech" here only costs compute, a missed one
/// costs words. Silence scores about 0.17, sox's pink noise reaches it in
/// 1 % of its frames, a 1 kHz tone in most (0.41 to 0.64), espeak-ng words
/// in 26 % of a clip with a word every 2 s (measured here).
const GATE_SCORE: f32 = 0.4;
/// An onset: `ONSET_FRAMES` of the last `ONSET_WINDOW` frames (80 ms) at
/// `GATE_SCORE`. Reported 32 ms after an espeak-ng word's first sound at
/// the median, 64 ms at most (20 words, measured here).
const ONSET_WINDOW: u32 = 5;
const ONSET_FRAMES: u32 = 3;
/// Audio before the onset that a new stream starts with (8 frames): the
/// onset's delay (64 ms at most, measured) twice over, and the default
/// delay's worth (480 ms) of context before the first word, where the
/// model's text for a frame can fall up to a delay before the sound that
/// made it (the tone fixture's words do).
pub const PREROLL_NS: u64 = 640_000_000;
/// The least of the hangover held back from the model while the gate is
/// open (2 frames): the onset's delay, measured, and more than a frame
/// left after the grid, for a pause just longer than the hangover.
const LEAST_HELD_NS: u64 = 160_000_000;

/// What the worker does with a buffer heard while the gate is open.
#[derive(Debug, PartialEq)]
pub enum Open {
    /// The model takes `held` (audio held back before, oldest first), then
    /// the buffer.
    Feed { held: Vec<f32> },
    /// The buffer is held back: it may be the next stream's pre-roll.
    Hold,
    /// The hangover has passed: the stream is to be finished where its
    /// audio ends; what is held back is kept as the pre-roll.
    Close,
}

/// What the worker does with a buffer heard while the gate is closed.
#[derive(Debug, PartialEq)]
pub enum Closed {
    /// Nothing for the model: the text stream may advance to `gap_to`.
    Hold { gap_to: u64 },
    /// Speech: a new stream starts at `base` with `audio` (the pre-roll
    /// and the buffer).
    Open { base: u64, audio: Vec<f32> },
}

pub struct Gate {
    hangover_ns: u64,
    /// While open: quiet audio from this on is held back from the model.
    hold_after_ns: u64,
    /// The last frames' onset votes, a bit each (newest lowest).
    recent: u32,
    /// While open: audio since the last frame that sounded like speech.
    quiet_ns: u64,
    /// While closed: the latest audio, at most the pre-roll and a buffer,
    /// starting at `kept_from` on the timeline. While open: the quiet
    /// audio held back from the model.
    kept: VecDeque<f32>,
    kept_from: Option<u64>,
    /// Where stream times are counted from: pre-rolls start on its 80 ms
    /// grid, so that words fall on the frames they would without the gate.
    origin: Option<u64>,
}

impl Gate {
    /// A gate for a model whose text comes `delay` after the sound.
    pub fn new(hangover: gst::ClockTime, delay: gst::ClockTime) -> Gate {
        let hangover_ns = hangover.nseconds();
        Gate {
            hangover_ns,
            hold_after_ns: hold_after(hangover_ns, delay.nseconds()),
            recent: 0,
            quiet_ns: 0,
            kept: VecDeque::new(),
            kept_from: None,
            origin: None,
        }
    }

    /// A flush, a new segment or a skip: nothing heard before counts.
    pub fn reset(&mut self) {
        self.recent = 0;
        self.quiet_ns = 0;
        self.kept.clear();
        self.kept_from = None;
        self.origin = None;
    }

    /// Counts `frames` as onset votes; whether one of them is an onset.
    fn hears_speech(&mut self, frames: &[Frame]) -> bool {
        let mut speech = false;
        for f in frames {
            let window = (1 << ONSET_WINDOW) - 1;
            self.recent = ((self.recent << 1) | u32::from(f.score >= GATE_SCORE)) & window;
            speech |= self.recent.count_ones() >= ONSET_FRAMES;
        }
        speech
    }

    /// While open: a buffer heard, with its `frames`.
    pub fn heard_while_open(&mut self, samples: &[f32], frames: &[Frame]) -> Open {
        if self.hears_speech(frames) {
            self.quiet_ns = 0;
            return Open::Feed {
                held: self.take_held(),
            };
        }
        self.quiet_ns += samples_to_ns(samples.len() as u64);
        if self.quiet_ns < self.hold_after_ns {
            return Open::Feed { held: Vec::new() };
        }
        self.kept.extend(samples);
        if self.quiet_ns >= self.hangover_ns {
            Open::Close
        } else {
            Open::Hold
        }
    }

    /// While open: the audio held back, for a stream that is to take it
    /// now (an EOS, a hole, a stalled input).
    pub fn take_held(&mut self) -> Vec<f32> {
        if self.kept_from.is_some() {
            return Vec::new();
        }
        self.kept.drain(..).collect()
    }

    /// While open: how much audio is held back.
    pub fn held_samples(&self) -> u64 {
        if self.kept_from.is_some() {
            return 0;
        }
        self.kept.len() as u64
    }

    /// The stream was finished where its audio ended (`at`): the audio held
    /// back from there on is kept.
    pub fn closed_at(&mut self, at: u64) {
        self.quiet_ns = 0;
        self.kept_from = Some(at);
    }

    /// A stream begins at `base` (the first, or one the gate opened).
    pub fn stream_begins(&mut self, base: u64) {
        self.origin.get_or_insert(base);
        self.quiet_ns = 0;
        self.kept.clear();
        self.kept_from = None;
    }

    /// The end of the audio kept back (the input's position while closed).
    pub fn kept_until(&self) -> Option<u64> {
        self.kept_from
            .map(|from| from + samples_to_ns(self.kept.len() as u64))
    }

    /// While closed: a buffer of `samples` at `pts` with its `frames`.
    pub fn heard_while_closed(&mut self, pts: u64, samples: &[f32], frames: &[Frame]) -> Closed {
        let continues = self
            .kept_until()
            .is_some_and(|end| end.abs_diff(pts) <= samples_to_ns(FRAME_SAMPLES / 2));
        if !continues {
            // A hole: as without the gate, times start afresh after it.
            self.kept.clear();
            self.kept_from = Some(pts);
            self.origin = None;
        }
        self.origin.get_or_insert(pts);
        self.kept.extend(samples);
        let from = self.kept_from.expect("set above");
        if self.hears_speech(frames) {
            let onset = self.onset_in(pts, frames);
            // Less pre-roll than that after a short pause: still on the
            // grid, the kept audio's first partial frame left out.
            let wanted = onset.saturating_sub(PREROLL_NS);
            let base = self.on_grid(wanted, false).max(self.on_grid(from, true));
            let skip = ns_to_samples(base - from) as usize;
            let audio: Vec<f32> = self.kept.drain(..).skip(skip).collect();
            self.kept_from = None;
            return Closed::Open { base, audio };
        }
        // A frame more than the pre-roll, so that its start on the grid is
        // always kept.
        let keep = (ns_to_samples(PREROLL_NS) + FRAME_SAMPLES) as usize;
        let surplus = self.kept.len().saturating_sub(keep);
        self.kept.drain(..surplus);
        let kept_from = from + samples_to_ns(surplus as u64);
        self.kept_from = Some(kept_from);
        Closed::Hold { gap_to: kept_from }
    }

    /// Where in the buffer at `pts` the onset was heard: the start of the
    /// frames that voted for it.
    fn onset_in(&self, pts: u64, frames: &[Frame]) -> u64 {
        let first_vote = frames
            .iter()
            .find(|f| f.score >= GATE_SCORE)
            .map_or(0, |f| f.ends_at.saturating_sub(super::voice::VAD_FRAME));
        pts + samples_to_ns(first_vote as u64)
    }

    /// The point of the origin's 80 ms grid at or before `t` (at or after,
    /// with `up`), never before the origin.
    fn on_grid(&self, t: u64, up: bool) -> u64 {
        let origin = self.origin.unwrap_or(0);
        let since = t.saturating_sub(origin);
        let frame = samples_to_ns(FRAME_SAMPLES);
        let frames = if up {
            since.div_ceil(frame)
        } else {
            since / frame
        };
        origin + frames * frame
    }
}

/// How much quiet audio the model takes before the rest of the hangover is
/// held back: a delay's worth, so that the last word before a pause comes
/// out as soon as without the gate, unless that leaves less than the
/// least held; never more than leaves a pre-roll held.
fn hold_after(hangover_ns: u64, delay_ns: u64) -> u64 {
    let least_held = hangover_ns.saturating_sub(LEAST_HELD_NS);
    delay_ns
        .min(least_held)
        .max(hangover_ns.saturating_sub(PREROLL_NS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::voice::{Frame, VAD_FRAME};

    const MS: u64 = 1_000_000;
    const DELAY: gst::ClockTime = gst::ClockTime::from_mseconds(480);

    /// Frames of a 100 ms buffer (6 whole frames), all with `score`.
    fn frames(score: f32) -> Vec<Frame> {
        (1..=6)
            .map(|i| Frame {
                score,
                ends_at: i * VAD_FRAME,
            })
            .collect()
    }

    fn buffer() -> Vec<f32> {
        vec![0.0; 1600]
    }

    #[test]
    fn silence_is_held_back_a_pre_roll_and_a_frame_behind_the_input() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        let mut gap_to = 0;
        for k in 0..20u64 {
            match gate.heard_while_closed(k * 100 * MS, &buffer(), &frames(0.1)) {
                Closed::Hold { gap_to: to } => gap_to = to,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(gap_to, 2000 * MS - PREROLL_NS - 80 * MS);
        assert_eq!(gate.kept_until(), Some(2000 * MS));
    }

    #[test]
    fn an_onset_opens_with_the_pre_roll_on_the_80_ms_grid() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        for k in 0..20u64 {
            gate.heard_while_closed(k * 100 * MS, &buffer(), &frames(0.1));
        }
        let Closed::Open { base, audio } =
            gate.heard_while_closed(2000 * MS, &buffer(), &frames(0.6))
        else {
            panic!("no onset");
        };
        // The onset at 2000 ms less 640 ms, on the grid from 0: 1360 ms.
        assert_eq!(base, 1360 * MS);
        assert_eq!(audio.len() as u64, ns_to_samples(2100 * MS - base));
    }

    #[test]
    fn the_hangover_counts_audio_without_speech_and_speech_starts_it_again() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        gate.stream_begins(0);
        let quiet = |gate: &mut Gate| gate.heard_while_open(&buffer(), &frames(0.1));
        for _ in 0..9 {
            assert_ne!(quiet(&mut gate), Open::Close);
        }
        assert!(matches!(
            gate.heard_while_open(&buffer(), &frames(0.6)),
            Open::Feed { .. }
        ));
        // The buffer after it still holds the onset window's last votes.
        for _ in 0..10 {
            assert_ne!(quiet(&mut gate), Open::Close);
        }
        assert_eq!(quiet(&mut gate), Open::Close, "1000 ms quiet");
    }

    #[test]
    fn the_hangovers_last_pre_roll_is_held_back_and_fed_when_speech_resumes() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        gate.stream_begins(0);
        // A delay's worth (480 ms) is fed, the rest of the hangover is
        // held back.
        for k in 1..=9u64 {
            let heard = gate.heard_while_open(&buffer(), &frames(0.1));
            let fed = k * 100 * MS < DELAY.nseconds();
            assert_eq!(heard == Open::Hold, !fed, "after {k}00 ms");
        }
        assert_eq!(gate.held_samples(), 5 * 1600);
        let Open::Feed { held } = gate.heard_while_open(&buffer(), &frames(0.6)) else {
            panic!("no speech");
        };
        assert_eq!(held.len(), 5 * 1600);
        assert_eq!(gate.held_samples(), 0);
    }

    #[test]
    fn a_pause_just_longer_than_the_hangover_leaves_the_next_stream_a_whole_pre_roll() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        gate.stream_begins(0);
        let mut fed = 0;
        loop {
            match gate.heard_while_open(&buffer(), &frames(0.1)) {
                Open::Feed { held } => fed += 1600 + held.len() as u64,
                Open::Hold => {}
                Open::Close => break,
            }
        }
        let end = samples_to_ns(fed);
        gate.closed_at(end);
        assert_eq!(gate.kept_until(), Some(1000 * MS));
        // Speech 100 ms after the hangover.
        gate.heard_while_closed(1000 * MS, &buffer(), &frames(0.1));
        let Closed::Open { base, audio } =
            gate.heard_while_closed(1100 * MS, &buffer(), &frames(0.6))
        else {
            panic!("no onset");
        };
        // 1100 ms less the pre-roll, down onto the grid from 0.
        assert_eq!(base, 400 * MS);
        assert!(base >= end, "the pre-roll was not fed before");
        assert_eq!(audio.len() as u64, ns_to_samples(1200 * MS - base));
    }

    #[test]
    fn the_audio_held_back_is_a_delay_short_of_the_hangover_and_at_least_two_frames() {
        let ms = |ms| ms * MS;
        // The default: 480 ms fed, 520 ms held.
        assert_eq!(hold_after(ms(1000), ms(480)), ms(480));
        // A long hangover still holds a whole pre-roll.
        assert_eq!(hold_after(ms(3000), ms(480)), ms(3000) - PREROLL_NS);
        // A short one holds its last two frames, a delay or not.
        assert_eq!(hold_after(ms(500), ms(480)), ms(340));
        assert_eq!(hold_after(ms(200), ms(2400)), ms(40));
    }

    #[test]
    fn a_hole_starts_the_grid_afresh() {
        let mut gate = Gate::new(gst::ClockTime::from_mseconds(1000), DELAY);
        gate.heard_while_closed(0, &buffer(), &frames(0.1));
        // 10.05 s later: a hole, and the new audio is the grid's origin.
        for k in 0..10u64 {
            gate.heard_while_closed(10_050 * MS + k * 100 * MS, &buffer(), &frames(0.1));
        }
        let Closed::Open { base, .. } =
            gate.heard_while_closed(11_050 * MS, &buffer(), &frames(0.6))
        else {
            panic!("no onset");
        };
        assert_eq!((base - 10_050 * MS) % (80 * MS), 0, "{base}");
    }
}
