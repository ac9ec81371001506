// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Scenarist SCC files: CEA-608 byte pairs (odd parity) on CC1 or CC3,
//! each line a 29.97 fps time code, a tab and the 4-hex-digit words that
//! start going out on that frame, one pair a frame.
//!
//! Pop-on by default ([`pop_on`]): each cue is a caption shown on the
//! frame of its start. Roll-up or paint-on on request ([`aired`]): the
//! words as the transcriber's captions air them. Characters go through the
//! caption path's mapping; what CEA-608 lacks is transliterated and
//! counted ([`SccStats::replaced`]).
//!
//! The file's tail is the erase of the caption still on screen (roll-up:
//! a carriage return and the erase), so a file cut after any cue clears
//! the screen at that cue's end instead of leaving a caption up for good.

mod aired;
mod pop_on;
mod rows;
pub mod timecode;

use std::fmt::Write;

use self::aired::Aired;
use self::pop_on::PopOn;
use super::{Cue, Format};
use crate::caption::{Channel608, Mode};

pub use self::pop_on::{MAX_ROWS as MAX_POP_ON_ROWS, MIN_FRAMES_ON_SCREEN};

/// The first line of every SCC file.
pub const SCC_HEADER: &str = "Scenarist_SCC V1.0";

/// How an SCC file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SccOptions {
    /// CC1 (the main language) or CC3 (a second language, field 2).
    pub channel: Channel608,
    /// Drop-frame time codes (`;` before the frames), which stay on the
    /// clock; else non-drop (`:`), which fall 3.6 s an hour behind it.
    pub drop_frame: bool,
    /// Pop-on (a caption per cue, shown whole at its start) or, as aired
    /// live, roll-up or paint-on.
    pub mode: Mode,
}

impl Default for SccOptions {
    fn default() -> Self {
        Self {
            channel: Channel608::Cc1,
            drop_frame: true,
            mode: Mode::PopOn,
        }
    }
}

/// What writing the file counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SccStats {
    /// Captions sent (pop-on: a cue may take several).
    pub captions: u64,
    /// Source characters CEA-608 showed as a transliteration or "?".
    pub replaced: u64,
    /// Pop-on: the most frames a caption showed after its cue's start (a
    /// long caption right after a short one cannot load sooner).
    pub max_late_frames: u64,
}

/// Byte pairs that go out one a frame from `frame` on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Burst {
    pub frame: u64,
    pub pairs: Vec<[u8; 2]>,
}

impl Burst {
    pub fn new(frame: u64, pairs: Vec<[u8; 2]>) -> Self {
        Self { frame, pairs }
    }
}

#[derive(Debug, Clone)]
enum Writer {
    PopOn(PopOn),
    Aired(Aired),
}

/// The SCC [`Format`].
#[derive(Debug, Clone)]
pub struct Scc {
    options: SccOptions,
    writer: Writer,
    /// The speaker of the last cue, to mark a change with ">>".
    speaker: Option<String>,
    /// Where the last cue ended.
    last_end: Option<u64>,
    stats: SccStats,
}

impl Scc {
    pub fn new(options: SccOptions) -> Self {
        let writer = if options.mode == Mode::PopOn {
            Writer::PopOn(PopOn::new(options.channel))
        } else {
            Writer::Aired(Aired::new(options.mode, options.channel))
        };
        Self {
            options,
            writer,
            speaker: None,
            last_end: None,
            stats: SccStats::default(),
        }
    }

    pub fn options(&self) -> SccOptions {
        self.options
    }

    pub fn stats(&self) -> SccStats {
        let mut stats = self.stats;
        match &self.writer {
            Writer::PopOn(pop) => {
                stats.captions = pop.captions();
                stats.max_late_frames = pop.max_late_frames();
            }
            Writer::Aired(aired) => stats.replaced = aired.replaced(),
        }
        stats
    }

    /// Whether `cue` starts a new speaker's turn.
    fn take_turn(&mut self, cue: &Cue) -> bool {
        let turn = cue.speaker.is_some() && cue.speaker != self.speaker;
        self.speaker.clone_from(&cue.speaker);
        turn
    }

    fn lines(&self, bursts: &[Burst]) -> String {
        let mut out = String::new();
        for burst in bursts {
            let _ = write!(
                out,
                "{}\t",
                timecode::label(burst.frame, self.options.drop_frame)
            );
            let words: Vec<String> = burst
                .pairs
                .iter()
                .map(|[a, b]| format!("{a:02x}{b:02x}"))
                .collect();
            out.push_str(&words.join(" "));
            out.push_str("\n\n");
        }
        out
    }
}

impl Default for Scc {
    fn default() -> Self {
        Self::new(SccOptions::default())
    }
}

impl Format for Scc {
    fn header(&self) -> String {
        format!("{SCC_HEADER}\n\n")
    }

    fn cue(&mut self, cue: &Cue) -> String {
        let turn = self.take_turn(cue);
        let bursts = match &mut self.writer {
            Writer::PopOn(pop) => {
                let laid = rows::lay_out(&cue.lines, if turn { ">> " } else { "" });
                self.stats.replaced += laid.replaced;
                pop.cue(&laid.rows, cue.start_ns, cue.end_ns)
            }
            Writer::Aired(aired) => {
                self.stats.captions += 1;
                aired.cue(cue, turn)
            }
        };
        self.last_end = Some(cue.end_ns);
        self.lines(&bursts)
    }

    fn chars_replaced(&self) -> u64 {
        self.stats().replaced
    }

    fn tail(&self) -> String {
        let bursts = match &self.writer {
            Writer::PopOn(pop) => pop.pending_erase().into_iter().collect(),
            Writer::Aired(aired) => match self.last_end {
                Some(end) => aired.ending(end),
                None => Vec::new(),
            },
        };
        self.lines(&bursts)
    }
}

#[cfg(test)]
mod tests;
