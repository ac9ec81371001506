// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Pop-on captions on a frame schedule: each caption is loaded into
//! non-displayed memory while the one before is on screen, and swapped onto
//! the screen (EOC) on the frame of its cue's start.
//!
//! CEA-608 sends one byte pair a frame, so a caption of two full rows takes
//! about 40 frames to load. The load must end before the swap, and can only
//! start after the previous swap (the memory it loads into held the caption
//! now on screen). Where the caption before is erased first (a gap between
//! cues), the erase (EDM) goes either after the load or before it, whichever
//! shows the new caption sooner.
//!
//! A cue of many rows may not load in time (two full rows take 40 frames,
//! and a short caption before it may be on screen for only 25). Then its
//! first rows are shown on time as a caption of their own and the rest
//! follows as a second caption, each on screen for at least 5/6 s where
//! the cue is long enough. A caption that still cannot be loaded in time
//! is shown as soon as its load ends; how late is counted.
//!
//! Each unit (the load, an erase, a swap) is sent whole, never interleaved
//! with another, so a control code and its repeat stay adjacent.

use cea608_types::tables::{Control, PreambleAddressCode, PreambleType};

use super::rows::{centred_indent, Row};
use super::timecode::{frame_at, frame_time};
use super::Burst;
use crate::caption::cea608::Pairs;
use crate::caption::Channel608;

/// The shortest time a caption stays on screen when nothing replaces it
/// sooner: 5/6 s (25 frames at 29.97 fps).
pub const MIN_FRAMES_ON_SCREEN: u64 = 25;

/// Rows of the caption area: pop-on captions sit on the bottom rows.
const SCREEN_ROWS: u8 = 15;

/// The frames of a doubled control code.
const CONTROL_FRAMES: u64 = 2;

/// Rows a caption may take; a cue that needs more (a long line wrapped at
/// 32 columns) is shown as several captions in turn.
pub const MAX_ROWS: usize = 4;

/// A caption that would show more frames late than this is split, where
/// the cue allows.
const SPLIT_WHEN_LATE_FRAMES: u64 = 2;

/// The caption on screen, whose erase is still to be sent.
#[derive(Debug, Clone, Copy)]
struct Shown {
    /// The frame it should be erased on, when no caption replaces it first.
    erase: u64,
}

/// Pop-on captions, one after another, on CC1 or CC3.
#[derive(Debug, Clone)]
pub struct PopOn {
    channel: Channel608,
    /// The first frame with nothing scheduled on it.
    free: u64,
    shown: Option<Shown>,
    /// The most frames a caption was shown after its cue's start frame.
    max_late_frames: u64,
    /// Captions sent.
    captions: u64,
}

/// When each unit of a caption goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    load: u64,
    /// The erase of the caption before, where one is sent.
    erase: Option<u64>,
    display: u64,
}

impl Plan {
    /// Better plans show the caption sooner, then erase the one before
    /// sooner.
    fn key(&self) -> (u64, u64) {
        (self.display, self.erase.unwrap_or(self.display))
    }
}

impl PopOn {
    pub fn new(channel: Channel608) -> Self {
        Self {
            channel,
            free: 0,
            shown: None,
            max_late_frames: 0,
            captions: 0,
        }
    }

    pub fn max_late_frames(&self) -> u64 {
        self.max_late_frames
    }

    pub fn captions(&self) -> u64 {
        self.captions
    }

    /// The bytes that show a cue's `rows` from `start_ns` to `end_ns`: one
    /// caption, or several in turn (at most [`MAX_ROWS`] rows each, and
    /// split where one would show late), sharing the cue's time by their
    /// length.
    pub fn cue(&mut self, rows: &[Row], start_ns: u64, end_ns: u64) -> Vec<Burst> {
        let mut bursts = Vec::new();
        for (chunk, start, end) in share(rows.chunks(MAX_ROWS), start_ns, end_ns) {
            self.place(chunk, start, end, &mut bursts);
        }
        bursts
    }

    fn place(&mut self, rows: &[Row], start_ns: u64, end_ns: u64, bursts: &mut Vec<Burst>) {
        if let Some(k) = self.split_point(rows, start_ns, end_ns) {
            let min = frame_time(MIN_FRAMES_ON_SCREEN);
            let parts = share([&rows[..k], &rows[k..]].into_iter(), start_ns, end_ns);
            // Each part readable: at least 5/6 s (split_point checked the
            // cue is long enough for both).
            let cut = parts[0].2.clamp(start_ns + min, end_ns - min);
            self.place(&rows[..k], start_ns, cut, bursts);
            self.place(&rows[k..], cut, end_ns, bursts);
            return;
        }
        bursts.extend(self.caption(rows, start_ns, end_ns));
    }

    /// Where to split `rows` so that the first part shows on time: the
    /// most rows that can, when the whole would be late and the cue lasts
    /// long enough for two captions.
    fn split_point(&self, rows: &[Row], start_ns: u64, end_ns: u64) -> Option<usize> {
        let long_enough = end_ns.saturating_sub(start_ns) >= frame_time(2 * MIN_FRAMES_ON_SCREEN);
        if rows.len() < 2 || !long_enough || self.lateness(rows, start_ns) <= SPLIT_WHEN_LATE_FRAMES
        {
            return None;
        }
        (1..rows.len())
            .rev()
            .find(|&k| self.lateness(&rows[..k], start_ns) <= SPLIT_WHEN_LATE_FRAMES)
    }

    /// How many frames late `rows` would show if wanted at `start_ns`.
    fn lateness(&self, rows: &[Row], start_ns: u64) -> u64 {
        let wanted = frame_at(start_ns);
        self.plan(self.load_pairs(rows).len() as u64, wanted)
            .display
            - wanted
    }

    /// The bytes that load `rows`, show them at `start_ns` and (later)
    /// erase them at `end_ns`, or at least [`MIN_FRAMES_ON_SCREEN`] later.
    /// The caption before is erased first when a gap separates them.
    pub fn caption(&mut self, rows: &[Row], start_ns: u64, end_ns: u64) -> Vec<Burst> {
        let load = self.load_pairs(rows);
        let wanted = frame_at(start_ns);
        let plan = self.plan(load.len() as u64, wanted);
        self.max_late_frames = self.max_late_frames.max(plan.display - wanted);

        let mut bursts = vec![Burst::new(plan.load, load)];
        if let Some(erase) = plan.erase {
            bursts.push(Burst::new(
                erase,
                self.control(Control::EraseDisplayedMemory),
            ));
        }
        bursts.push(Burst::new(
            plan.display,
            self.control(Control::EndOfCaption),
        ));
        bursts.sort_by_key(|b| b.frame);

        self.captions += 1;
        self.free = plan.display + CONTROL_FRAMES;
        self.shown = Some(Shown {
            erase: frame_at(end_ns).max(plan.display + MIN_FRAMES_ON_SCREEN),
        });
        bursts
    }

    /// The erase of the caption on screen, when nothing replaces it: what
    /// ends a file cut here.
    pub fn pending_erase(&self) -> Option<Burst> {
        let shown = self.shown?;
        let frame = shown.erase.max(self.free);
        Some(Burst::new(
            frame,
            self.control(Control::EraseDisplayedMemory),
        ))
    }

    /// When to load a caption of `load` pairs wanted on screen at frame
    /// `wanted`, and whether to erase the caption before first.
    fn plan(&self, load: u64, wanted: u64) -> Plan {
        // Without an erase: the new caption replaces the old one.
        let start = self.free.max(wanted.saturating_sub(load));
        let replace = Plan {
            load: start,
            erase: None,
            display: wanted.max(start + load),
        };
        let Some(shown) = self.shown else {
            return replace;
        };
        if wanted < shown.erase + CONTROL_FRAMES {
            return replace;
        }
        // Load, then erase the old caption, then show the new one.
        let load_first = {
            let start = self.free.max(shown.erase.saturating_sub(load));
            let erase = shown.erase.max(start + load);
            Plan {
                load: start,
                erase: Some(erase),
                display: wanted.max(erase + CONTROL_FRAMES),
            }
        };
        // Erase, then load and show.
        let erase_first = {
            let erase = self.free.max(shown.erase);
            let start = (erase + CONTROL_FRAMES).max(wanted.saturating_sub(load));
            Plan {
                load: start,
                erase: Some(erase),
                display: wanted.max(start + load),
            }
        };
        [load_first, erase_first, replace]
            .into_iter()
            .min_by_key(Plan::key)
            .expect("three plans")
    }

    /// Resume caption loading, erase what non-displayed memory holds, and
    /// each row after its preamble address: the rows as a block, left
    /// aligned, the block centred (readers see one alignment for all
    /// rows).
    fn load_pairs(&self, rows: &[Row]) -> Vec<[u8; 2]> {
        let mut pairs = Pairs::for_channel(self.channel);
        pairs.control(Control::ResumeCaptionLoading);
        pairs.control(Control::EraseNonDisplayedMemory);
        let first_row = SCREEN_ROWS.saturating_sub(rows.len() as u8);
        let widest = rows.iter().map(Vec::len).max().unwrap_or(0);
        let indent =
            PreambleType::from_indent(centred_indent(widest)).unwrap_or(PreambleType::Indent0);
        for (i, row) in rows.iter().enumerate() {
            let pac = PreambleAddressCode::new(first_row + i as u8, false, indent);
            pairs.control(Control::PreambleAddress(pac));
            for glyph in row {
                pairs.text(glyph);
            }
        }
        pairs.finish()
    }

    fn control(&self, control: Control) -> Vec<[u8; 2]> {
        let mut pairs = Pairs::for_channel(self.channel);
        pairs.control(control);
        pairs.finish()
    }
}

/// Parts of a cue, each with its share of the cue's time by its length.
fn share<'a>(
    parts: impl Iterator<Item = &'a [Row]>,
    start_ns: u64,
    end_ns: u64,
) -> Vec<(&'a [Row], u64, u64)> {
    let parts: Vec<&[Row]> = parts.collect();
    let lengths: Vec<u64> = parts
        .iter()
        .map(|p| p.iter().map(|r| r.len() as u64).sum::<u64>().max(1))
        .collect();
    let total: u64 = lengths.iter().sum();
    let span = end_ns.saturating_sub(start_ns);
    let at = |before: u64| {
        start_ns + (u128::from(span) * u128::from(before) / u128::from(total.max(1))) as u64
    };
    let mut before = 0;
    let mut out = Vec::new();
    for (part, length) in parts.into_iter().zip(lengths) {
        out.push((part, at(before), at(before + length)));
        before += length;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::rows::lay_out;
    use super::*;

    const EOC: [u8; 2] = [0x94, 0x2f];
    const EDM: [u8; 2] = [0x94, 0x2c];

    fn rows(text: &str) -> Vec<Row> {
        lay_out(&[text.to_owned()], "").rows
    }

    fn frames(n: u64) -> u64 {
        frame_time(n)
    }

    fn find(bursts: &[Burst], pair: [u8; 2]) -> Option<u64> {
        bursts.iter().find(|b| b.pairs[0] == pair).map(|b| b.frame)
    }

    #[test]
    fn a_caption_is_loaded_before_its_start_and_shown_on_its_frame() {
        let mut pop = PopOn::new(Channel608::Cc1);
        let bursts = pop.caption(&rows("Hello world"), frames(90), frames(150));
        assert_eq!(find(&bursts, EOC), Some(90));
        let load = &bursts[0];
        assert_eq!(load.pairs[0], [0x94, 0x20], "resume caption loading first");
        assert_eq!(
            load.frame + load.pairs.len() as u64,
            90,
            "the load ends as the caption shows"
        );
        assert_eq!(pop.max_late_frames(), 0);
    }

    #[test]
    fn the_next_caption_loads_while_the_first_is_on_screen() {
        let mut pop = PopOn::new(Channel608::Cc1);
        pop.caption(&rows("First caption"), frames(60), frames(120));
        let bursts = pop.caption(&rows("Second caption"), frames(120), frames(200));
        assert_eq!(
            find(&bursts, EDM),
            None,
            "a caption that follows at once replaces"
        );
        assert_eq!(find(&bursts, EOC), Some(120));
        assert!(bursts[0].frame > 62 && bursts[0].frame < 120);
    }

    #[test]
    fn a_gap_between_cues_erases_the_first_caption_on_its_end() {
        let mut pop = PopOn::new(Channel608::Cc1);
        pop.caption(&rows("First caption"), frames(60), frames(120));
        let bursts = pop.caption(&rows("After a pause"), frames(300), frames(400));
        assert_eq!(find(&bursts, EDM), Some(120));
        assert_eq!(find(&bursts, EOC), Some(300));
        assert_eq!(pop.pending_erase().map(|b| b.frame), Some(400));
    }

    #[test]
    fn a_short_cue_stays_on_screen_five_sixths_of_a_second() {
        let mut pop = PopOn::new(Channel608::Cc1);
        pop.caption(&rows("Yes."), frames(60), frames(70));
        assert_eq!(pop.pending_erase().map(|b| b.frame), Some(60 + 25));
    }

    #[test]
    fn a_caption_too_long_to_load_in_time_is_shown_when_loaded() {
        let mut pop = PopOn::new(Channel608::Cc1);
        pop.caption(&rows("No."), frames(30), frames(55));
        let long = lay_out(
            &[
                "a long caption that fills a row".into(),
                "and then another row as well".into(),
            ],
            "",
        )
        .rows;
        let bursts = pop.caption(&long, frames(57), frames(200));
        let shown = find(&bursts, EOC).unwrap();
        // The load starts after the first EOC (frames 30 and 31); the new
        // caption replaces the first as soon as it is loaded (an erase
        // between would only show it later).
        assert_eq!(bursts[0].frame, 32);
        assert_eq!(find(&bursts, EDM), None);
        assert_eq!(shown, 32 + bursts[0].pairs.len() as u64);
        assert_eq!(pop.max_late_frames(), shown - 57);
    }

    /// Cue lists of every shape (a fixed pseudo-random sequence): short and
    /// long, gaps and none, overlapping ones (against the contract).
    fn random_cues(seed: u64) -> Vec<(Vec<Row>, u64, u64)> {
        let mut state = seed;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let words = ["a", "word", "caption", "é", "€", "longer words here", "—"];
        let mut t = next(3000);
        let mut cues = Vec::new();
        for _ in 0..40 {
            let lines: Vec<String> = (0..1 + next(3))
                .map(|_| {
                    (0..1 + next(8))
                        .map(|_| words[next(7) as usize])
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            let start = t;
            let end = start + 200 + next(7000);
            cues.push((lay_out(&lines, "").rows, start * 1_000_000, end * 1_000_000));
            t = if next(10) == 0 {
                end.saturating_sub(next(500))
            } else {
                end + next(3000)
            };
        }
        cues
    }

    #[test]
    fn units_never_overlap_and_every_caption_is_shown_no_sooner_than_wanted() {
        for seed in 0..50 {
            let mut pop = PopOn::new(Channel608::Cc1);
            let mut last_end = 0;
            for (rows, start, end) in random_cues(seed) {
                for burst in pop.cue(&rows, start, end) {
                    assert!(burst.frame >= last_end, "seed {seed}: {burst:?} overlaps");
                    last_end = burst.frame + burst.pairs.len() as u64;
                }
            }
            if let Some(erase) = pop.pending_erase() {
                assert!(erase.frame >= last_end, "seed {seed}");
            }
        }
    }

    #[test]
    fn a_cue_with_nothing_to_show_sends_nothing() {
        let mut pop = PopOn::new(Channel608::Cc1);
        assert!(pop.cue(&[], frames(30), frames(90)).is_empty());
        assert!(pop.pending_erase().is_none());
        assert_eq!(pop.captions(), 0);
    }

    #[test]
    fn cc3_sends_the_field_2_control_codes() {
        let mut pop = PopOn::new(Channel608::Cc3);
        let bursts = pop.caption(&rows("Hola"), frames(90), frames(150));
        assert_eq!(bursts[0].pairs[0], [0x15, 0x20]);
        assert_eq!(find(&bursts, [0x15, 0x2f]), Some(90));
    }
}
