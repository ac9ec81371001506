// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Closed captions from timed words: CEA-608 on CC1 or CC3 and a CEA-708
//! service (1 to 6), one chunk of caption data per video frame.
//!
//! Words come in with their start and end (ns, on any timeline); frames
//! go out on a grid of the video frame rate from an origin (the segment
//! start). A word's characters start on the first frame at or after its
//! start. Frames with nothing to say carry padding, so a muxer never waits
//! for captions.
//!
//! - [`cea608`]: CC1 or CC3 byte pairs; one pair (two characters) per frame up to
//!   30 fps, one every other frame above; a backlog is caught up by dropping
//!   the oldest words, never by drifting.
//! - [`cea708`]: a DTVCC service with its own windows; every word on its
//!   frame.
//! - [`format`]: the bytes of a frame in each GStreamer caption format
//!   (raw and s334-1a 608, cc_data and cdp 708).
//! - [`charset`]: what each set can show, and what stands in for the rest.
//!
//! Lines are at most 32 columns ([`layout`]); the captions clear after a
//! silence. Code tables, parity and packet framing come from the crates
//! `cea608-types`, `cea708-types` and `cdp-types`. Nothing here knows about
//! GStreamer pads.

pub mod cea608;
pub mod cea708;
pub mod charset;
pub mod format;
pub mod layout;
#[cfg(test)]
mod tests;

pub use format::{CcFormat, Packer};

use std::collections::VecDeque;

use cea708_types::DTVCCPacket;

/// How captions appear: tttocea608's `mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// A caption line is loaded off screen and shown whole: when the line
    /// is full, at the end of a sentence, or after a pause.
    PopOn,
    /// Characters appear where they are written; a full line is wiped for
    /// the next.
    PaintOn,
    /// Characters appear as they come on the bottom row, which rolls up
    /// when full; this many rows show. What live captioning uses.
    #[default]
    RollUp2,
    RollUp3,
    RollUp4,
}

impl Mode {
    pub fn is_roll_up(self) -> bool {
        matches!(self, Mode::RollUp2 | Mode::RollUp3 | Mode::RollUp4)
    }
}

/// When captions change without a new word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// The screen is cleared this long after the last word ended.
    pub clear_after_ns: u64,
    /// A CEA-608 word whose characters would start later than this after
    /// its start is dropped (oldest first): the bound on the caption
    /// delay that fast speech can cause.
    pub max_lag_ns: u64,
    /// Pop-on: a loaded caption is shown when no word came for this long.
    pub pop_on_pause_ns: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            clear_after_ns: DEFAULT_CLEAR_AFTER_MS * 1_000_000,
            max_lag_ns: 1_000_000_000,
            pop_on_pause_ns: 500_000_000,
        }
    }
}

/// How long the last caption stays after speech stops, by default.
pub const DEFAULT_CLEAR_AFTER_MS: u64 = 4000;

/// A video frame rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framerate {
    pub numer: u32,
    pub denom: u32,
}

impl Framerate {
    /// 29.97 fps, the NTSC rate CEA-608 was made for: the rate used when
    /// downstream leaves it open.
    pub const NTSC: Framerate = Framerate {
        numer: 30000,
        denom: 1001,
    };

    pub const fn new(numer: u32, denom: u32) -> Self {
        Self { numer, denom }
    }

    /// Where frame `n` starts, in ns from frame 0.
    pub fn frame_offset(&self, n: u64) -> u64 {
        (u128::from(n) * u128::from(self.denom) * 1_000_000_000 / u128::from(self.numer.max(1)))
            as u64
    }

    /// CEA-608 field 1 carries at most about 30 pairs a second: one pair
    /// on every frame up to 30 fps, on every other frame above.
    pub fn frames_per_608_pair(&self) -> u64 {
        if u64::from(self.numer) > 31 * u64::from(self.denom) {
            2
        } else {
            1
        }
    }
}

/// The CEA-608 channels captions can go on: CC1 (field 1) for the main
/// language, CC3 (field 2) for a second one. Both use data channel 1's
/// codes, each in its own field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Channel608 {
    #[default]
    Cc1,
    Cc3,
}

impl Channel608 {
    /// Whether the pairs go in field 2.
    pub fn is_field_2(self) -> bool {
        self == Channel608::Cc3
    }
}

/// The CEA-708 services a caption stream can use (the standard's primary
/// and secondary language services are 1 and 2).
pub const SERVICES: std::ops::RangeInclusive<u8> = 1..=6;

/// What the encoder is set up with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    pub mode: Mode,
    pub framerate: Framerate,
    pub timing: Timing,
    pub channel: Channel608,
    /// The CEA-708 service, in [`SERVICES`].
    pub service: u8,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            mode: Mode::default(),
            framerate: Framerate::NTSC,
            timing: Timing::default(),
            channel: Channel608::Cc1,
            service: 1,
        }
    }
}

/// The caption data of one video frame.
#[derive(Debug)]
pub struct Frame {
    /// Its index on the current frame grid.
    pub index: u64,
    pub pts: u64,
    pub duration: u64,
    /// The CC1 or CC3 pair, where the frame has room for one (padding when
    /// there is nothing to say).
    pub cea608: Option<[u8; 2]>,
    /// The service's packets that start on this frame.
    pub cea708: Vec<DTVCCPacket>,
}

/// What could not be carried as it came.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Losses {
    /// Source characters CEA-608 showed as a replacement.
    pub cea608_replaced: u64,
    /// Source characters CEA-708 showed as a replacement.
    pub cea708_replaced: u64,
    /// Words CEA-608 dropped to catch up with the speech.
    pub cea608_dropped_words: u64,
}

/// Timed words in, caption data per frame out.
#[derive(Debug)]
pub struct Encoder {
    config: Config,
    /// Where frame 0 of the current grid starts.
    origin: u64,
    /// The next frame to go out.
    index: u64,
    cea608: cea608::Track,
    cea708: cea708::Track,
    /// The prefix of the next word, the first of a new speaker.
    turn: Option<String>,
}

/// Frames `drain` may add after the last word at most (a minute): a bound
/// for safety; the 608 lag bound ends it much sooner.
const MAX_DRAIN_FRAMES: usize = 3600;

impl Encoder {
    /// Frames start at `origin` (ns).
    pub fn new(config: Config, origin: u64) -> Self {
        Self {
            config,
            origin,
            index: 0,
            cea608: cea608::Track::new(config.mode, config.timing, config.channel),
            cea708: cea708::Track::new(config.mode, config.timing, config.service),
            turn: None,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Queues one word starting at `start` and ending at `end` (ns).
    pub fn push_word(&mut self, text: &str, start: u64, end: u64) {
        match self.turn.take() {
            Some(prefix) => {
                self.cea608.push_turn(&prefix, text, start, end);
                self.cea708.push_turn(&prefix, text, start, end);
            }
            None => {
                self.cea608.push_word(text, start, end);
                self.cea708.push_word(text, start, end);
            }
        }
    }

    /// A new speaker starts with the next word: it goes on a new row (a
    /// new caption in pop-on) after `prefix` (">> ", or "" for the row
    /// alone).
    pub fn speaker_change(&mut self, prefix: &str) {
        self.turn = Some(prefix.to_owned());
    }

    /// Queues a cue of one or more words: its time is shared among them by
    /// their length, as the transcript places letters.
    pub fn push_cue(&mut self, text: &str, start: u64, end: u64) {
        let words: Vec<&str> = text.split_whitespace().collect();
        let total: u64 = words.iter().map(|w| w.chars().count() as u64).sum();
        let span = end.saturating_sub(start);
        let mut before = 0;
        for word in words {
            let len = word.chars().count() as u64;
            let at = |letters: u64| start + span * letters / total.max(1);
            self.push_word(word, at(before), at(before + len));
            before += len;
        }
    }

    /// Where the next frame starts.
    pub fn next_frame_time(&self) -> u64 {
        self.frame_time(self.index)
    }

    /// Every frame that starts before `t`: nothing that starts before `t`
    /// is still to come.
    pub fn frames_until(&mut self, t: u64) -> Vec<Frame> {
        let mut frames = Vec::new();
        while self.next_frame_time() < t {
            frames.push(self.next_frame());
        }
        frames
    }

    /// The frames that send what is still queued (at the end of the
    /// stream).
    pub fn drain(&mut self) -> Vec<Frame> {
        self.cea608.finish_display();
        self.cea708.finish_display();
        let mut frames = Vec::new();
        while (self.cea608.is_busy() || self.cea708.is_busy()) && frames.len() < MAX_DRAIN_FRAMES {
            frames.push(self.next_frame());
        }
        frames
    }

    /// Whether captions are on screen (or loaded for it).
    pub fn has_captions(&self) -> bool {
        self.cea608.has_captions() || self.cea708.has_captions()
    }

    /// Goes on at `framerate` (another one, or another caption format at
    /// the same): the new grid starts where the next frame would have.
    pub fn regrid(&mut self, framerate: Framerate) {
        self.origin = self.next_frame_time();
        self.index = 0;
        self.config.framerate = framerate;
    }

    pub fn losses(&self) -> Losses {
        Losses {
            cea608_replaced: self.cea608.replaced(),
            cea708_replaced: self.cea708.replaced(),
            cea608_dropped_words: self.cea608.dropped(),
        }
    }

    fn frame_time(&self, index: u64) -> u64 {
        self.origin + self.config.framerate.frame_offset(index)
    }

    fn next_frame(&mut self) -> Frame {
        let index = self.index;
        let pts = self.frame_time(index);
        let duration = self.frame_time(index + 1) - pts;
        self.index += 1;
        let has_pair = index.is_multiple_of(self.config.framerate.frames_per_608_pair());
        Frame {
            index,
            pts,
            duration,
            cea608: has_pair.then(|| self.cea608.next_pair(pts)),
            cea708: self.cea708.frame(pts),
        }
    }
}

/// A word that ends a sentence closes a pop-on caption.
/// A word waiting for its frames, in one service's glyphs.
#[derive(Debug, Clone)]
struct Word<G> {
    glyphs: Vec<G>,
    start: u64,
    end: u64,
    ends_sentence: bool,
    /// The first word of a new speaker: it starts a new row.
    new_row: bool,
}

impl<G> Word<G> {
    /// Queues `text`, mapped to `mapped`, from `start` to `end` (ns),
    /// unless none of it can be shown; counts what could not be carried.
    fn queue(
        queue: &mut VecDeque<Word<G>>,
        replaced: &mut u64,
        mapped: charset::Mapped<G>,
        text: &str,
        (start, end): (u64, u64),
        new_row: bool,
    ) {
        *replaced += mapped.replaced;
        if mapped.glyphs.is_empty() {
            return;
        }
        queue.push_back(Word {
            glyphs: mapped.glyphs,
            start,
            end: end.max(start),
            ends_sentence: ends_sentence(text),
            new_row,
        });
    }
}

fn ends_sentence(text: &str) -> bool {
    text.ends_with(['.', '?', '!', '…', '。', '？', '！'])
}
