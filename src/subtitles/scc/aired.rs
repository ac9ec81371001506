// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Roll-up (or paint-on) captions as the transcriber airs them: the caption
//! path's own CEA-608 track ([`Track`]) is fed each cue's words, and its
//! pairs are recorded frame by frame at 29.97 fps.
//!
//! A cue has no word times, so its time is shared among its words by their
//! length, as [`crate::caption::Encoder::push_cue`] does. Unlike the live
//! path, no word is ever dropped to catch up: a file has no deadline.
//!
//! Two additions for file readers: an erase (EDM) on the two frames before
//! captions start on a clear screen, and the file ends with an erase alone
//! (no carriage return): ffmpeg's decoder dates a roll-up caption from the
//! screen's last erase or roll, and writes the last row twice when a
//! carriage return and an erase come together.

use cea608_types::tables::Control;

use super::timecode::{frame_from, frame_time};
use super::Burst;
use crate::caption::cea608::{Pairs, Track, PADDING};
use crate::caption::{Channel608, Mode, Timing, DEFAULT_CLEAR_AFTER_MS};
use crate::subtitles::Cue;

/// The most frames one cue may take to send (a bound for safety: 32
/// columns of 4 rows take well under 200).
const MAX_FRAMES_PER_CUE: u64 = 100_000;

/// What the screen shows, frame by frame.
#[derive(Debug, Clone)]
pub struct Aired {
    channel: Channel608,
    track: Track,
    /// The next frame to send.
    frame: u64,
    /// The last frame that carried something.
    last_sent: Option<u64>,
}

impl Aired {
    pub fn new(mode: Mode, channel: Channel608) -> Self {
        let timing = Timing {
            clear_after_ns: DEFAULT_CLEAR_AFTER_MS * 1_000_000,
            max_lag_ns: u64::MAX / 4,
            ..Timing::default()
        };
        Self {
            channel,
            track: Track::new(mode, timing, channel),
            frame: 0,
            last_sent: None,
        }
    }

    pub fn replaced(&self) -> u64 {
        self.track.replaced()
    }

    /// The bytes from the end of the last cue to the end of this one's
    /// words: a clear after a long silence, then the words as they are
    /// spoken. `turn` starts a new speaker's row with ">> ".
    pub fn cue(&mut self, cue: &Cue, turn: bool) -> Vec<Burst> {
        let mut sent = Recorder::default();
        let start = frame_from(cue.start_ns);
        while self.frame < start {
            self.step(&mut sent);
        }
        let before = start.checked_sub(2);
        if let Some(frame) = before.filter(|f| !self.track.has_captions() && self.is_free_from(*f))
        {
            // The screen is clear: say so just before the words start.
            sent.record_all(frame, &self.erase());
            self.last_sent = Some(frame + 1);
        }
        self.push_words(cue, turn);
        let limit = self.frame + MAX_FRAMES_PER_CUE;
        while self.track.is_busy() && self.frame < limit {
            self.step(&mut sent);
        }
        sent.bursts
    }

    /// What ends a file cut here: the screen erased at the last cue's end,
    /// or once its words are out.
    pub fn ending(&self, end_ns: u64) -> Vec<Burst> {
        if !self.track.has_captions() {
            return Vec::new();
        }
        let frame = self.frame.max(frame_from(end_ns));
        vec![Burst::new(frame, self.erase())]
    }

    fn erase(&self) -> Vec<[u8; 2]> {
        let mut pairs = Pairs::for_channel(self.channel);
        pairs.control(Control::EraseDisplayedMemory);
        pairs.finish()
    }

    fn push_words(&mut self, cue: &Cue, turn: bool) {
        let text = cue.lines.join(" ");
        let words: Vec<&str> = text.split_whitespace().collect();
        let letters: u64 = words.iter().map(|w| w.chars().count() as u64).sum();
        let span = cue.end_ns.saturating_sub(cue.start_ns);
        let at = |before: u64| cue.start_ns + span * before / letters.max(1);
        let mut before = 0;
        for (i, word) in words.iter().enumerate() {
            let len = word.chars().count() as u64;
            let (start, end) = (at(before), at(before + len));
            if i == 0 && turn {
                self.track.push_turn(">> ", word, start, end);
            } else {
                self.track.push_word(word, start, end);
            }
            before += len;
        }
    }

    /// Whether nothing was sent from `frame` on.
    fn is_free_from(&self, frame: u64) -> bool {
        self.last_sent.is_none_or(|last| last < frame)
    }

    fn step(&mut self, sent: &mut Recorder) {
        let pair = self.track.next_pair(frame_time(self.frame));
        if pair != PADDING {
            sent.record(self.frame, pair);
            self.last_sent = Some(self.frame);
        }
        self.frame += 1;
    }
}

/// Pairs into bursts: consecutive frames with something to send.
#[derive(Debug, Default)]
struct Recorder {
    bursts: Vec<Burst>,
}

impl Recorder {
    /// Pairs from `frame` on, one a frame.
    fn record_all(&mut self, frame: u64, pairs: &[[u8; 2]]) {
        for (i, pair) in pairs.iter().enumerate() {
            self.record(frame + i as u64, *pair);
        }
    }

    fn record(&mut self, frame: u64, pair: [u8; 2]) {
        match self.bursts.last_mut() {
            Some(last) if last.frame + last.pairs.len() as u64 == frame => last.pairs.push(pair),
            _ => self.bursts.push(Burst::new(frame, vec![pair])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RU2: [u8; 2] = [0x94, 0x25];
    const EDM: [u8; 2] = [0x94, 0x2c];

    fn cue(text: &str, start_ms: u64, end_ms: u64) -> Cue {
        Cue {
            lines: vec![text.to_owned()],
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            speaker: None,
        }
    }

    #[test]
    fn words_go_out_from_their_cue_start_in_roll_up() {
        let mut aired = Aired::new(Mode::RollUp2, Channel608::Cc1);
        let bursts = aired.cue(&cue("hello there", 2000, 3000), false);
        let start = frame_from(2_000_000_000);
        // An erase on the two frames before, then the mode.
        assert_eq!(bursts[0].frame, start - 2);
        assert_eq!(&bursts[0].pairs[..4], &[EDM, EDM, RU2, RU2]);
        let ending = aired.ending(3_000_000_000);
        assert_eq!(ending[0].frame, frame_from(3_000_000_000));
        assert_eq!(ending[0].pairs, vec![EDM, EDM]);
    }

    #[test]
    fn a_silence_clears_the_screen_before_the_next_cue() {
        let mut aired = Aired::new(Mode::RollUp2, Channel608::Cc1);
        aired.cue(&cue("hello", 0, 500), false);
        let bursts = aired.cue(&cue("again", 10_000, 10_500), false);
        let clear = bursts.iter().find(|b| b.pairs.contains(&EDM)).unwrap();
        assert!(clear.frame < frame_from(10_000_000_000));
    }
}
