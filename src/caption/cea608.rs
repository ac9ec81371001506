// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! CEA-608 on CC1 (field 1, data channel 1) or CC3 (field 2, data channel
//! 1): words become byte pairs, one pair per frame that has room for one.
//!
//! A word's pairs start on the first such frame at or after its start.
//! Field 1 carries one pair (two characters) per frame, so fast speech can
//! queue words behind each other; a word whose pairs would start more than
//! `max_lag` after its start is dropped instead, oldest first, so that the
//! captions stay that close to the speech instead of drifting behind it.
//!
//! Control codes (mode, row, carriage return, erase, end of caption, and
//! the two-byte special and extended characters) are sent twice in a row, as
//! the standard asks: decoders ignore the repeat, and a pair lost to a bit
//! error costs nothing.

use std::collections::VecDeque;

use cea608_types::tables::{
    Channel, Code, Control, ControlCode, Field, PreambleAddressCode, PreambleType,
};

use super::charset::{map_608, Glyph608};
use super::layout::Layout;
use super::{Channel608, Mode, Timing, Word};

/// The pair sent when there is nothing to say: two NULs with odd parity.
pub const PADDING: [u8; 2] = [0x80, 0x80];

/// The row captions are written on (the last of the 15; roll-up rolls
/// upwards from it).
const BASE_ROW: u8 = 14;

/// The CEA-608 caption state of one stream.
#[derive(Debug, Clone)]
pub struct Track {
    mode: Mode,
    timing: Timing,
    /// The field of the channel: control codes differ between fields.
    field: Field,
    layout: Layout,
    queue: VecDeque<Word<Glyph608>>,
    /// The pairs of the word (or command) being sent.
    pairs: VecDeque<[u8; 2]>,
    /// The mode and row are set up (roll-up and paint-on).
    started: bool,
    /// Pop-on: text waits in non-displayed memory.
    loading: bool,
    /// Something is on screen.
    shown: bool,
    /// Where the last word placed ended.
    last_end: Option<u64>,
    /// The stream ends: what is on screen is finished as soon as the last
    /// word is out, not after the usual pause.
    finishing: bool,
    replaced: u64,
    dropped: u64,
}

impl Track {
    pub fn new(mode: Mode, timing: Timing, channel: Channel608) -> Self {
        Self {
            mode,
            timing,
            field: field_of(channel),
            layout: Layout::default(),
            queue: VecDeque::new(),
            pairs: VecDeque::new(),
            started: false,
            loading: false,
            shown: false,
            last_end: None,
            finishing: false,
            replaced: 0,
            dropped: 0,
        }
    }

    /// The stream ends: once the words queued are out, a loaded pop-on
    /// caption is shown, a roll-up row committed (carriage return) and the
    /// screen erased, so that every decoder has the last words, also those
    /// that write a caption only when it leaves the screen.
    pub fn finish_display(&mut self) {
        self.finishing = true;
    }

    /// Queues a word that starts at `start` (ns) and ends at `end`.
    pub fn push_word(&mut self, text: &str, start: u64, end: u64) {
        let (queue, replaced) = (&mut self.queue, &mut self.replaced);
        Word::queue(queue, replaced, map_608(text), text, (start, end), false);
    }

    /// Queues the first word of a new speaker: on a new row, after
    /// `prefix` (">> "), which goes through the same character mapping.
    pub fn push_turn(&mut self, prefix: &str, text: &str, start: u64, end: u64) {
        let text = format!("{prefix}{text}");
        let (queue, replaced) = (&mut self.queue, &mut self.replaced);
        Word::queue(queue, replaced, map_608(&text), &text, (start, end), true);
    }

    /// The pair for a frame at `t` that has room for one.
    pub fn next_pair(&mut self, t: u64) -> [u8; 2] {
        if self.pairs.is_empty() {
            self.schedule(t);
        }
        self.pairs.pop_front().unwrap_or(PADDING)
    }

    /// Whether words or pairs wait to be sent (or, finishing, a screen to
    /// finish).
    pub fn is_busy(&self) -> bool {
        !self.pairs.is_empty() || !self.queue.is_empty() || (self.finishing && self.has_captions())
    }

    /// Whether captions are on screen or loaded for it.
    pub fn has_captions(&self) -> bool {
        self.shown || self.loading
    }

    /// Source characters that CEA-608 could not show as themselves.
    pub fn replaced(&self) -> u64 {
        self.replaced
    }

    /// Words dropped to catch up with the speech.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Decides what the frame at `t` starts sending: the next word when
    /// its time has come, else showing a pop-on caption after a pause or
    /// clearing the screen after a silence.
    fn schedule(&mut self, t: u64) {
        self.drop_late_words(t);
        if self.queue.front().is_some_and(|w| w.start <= t) {
            let word = self.queue.pop_front().expect("checked");
            self.send_word(word);
            return;
        }
        if !self.queue.is_empty() {
            return;
        }
        let Some(last_end) = self.last_end else {
            return;
        };
        if self.loading && (self.finishing || t >= last_end + self.timing.pop_on_pause_ns) {
            self.show_loaded();
        } else if self.shown && (self.finishing || t >= last_end + self.timing.clear_after_ns) {
            self.clear_screen();
        }
    }

    fn drop_late_words(&mut self, t: u64) {
        while self
            .queue
            .front()
            .is_some_and(|w| t > w.start + self.timing.max_lag_ns)
        {
            self.queue.pop_front();
            self.dropped += 1;
        }
    }

    fn send_word(&mut self, word: Word<Glyph608>) {
        let mut out = Pairs::new(self.field);
        if word.new_row {
            self.layout.break_line();
        }
        for piece in self.layout.place(word.glyphs.len()) {
            self.begin_piece(piece.new_line, &mut out);
            if piece.space_before {
                out.text(&Glyph608 {
                    code: Code::Space,
                    fallback: None,
                });
            }
            for glyph in &word.glyphs[piece.start..piece.end] {
                out.text(glyph);
            }
        }
        if self.mode == Mode::PopOn && word.ends_sentence {
            self.end_caption(&mut out);
            self.layout.clear();
        }
        if self.mode != Mode::PopOn {
            self.shown = true;
        }
        self.last_end = Some(word.end);
        self.pairs.extend(out.finish());
    }

    /// The codes that go before a piece of text: set the mode and row up
    /// if needed, and start a new line when the current one is full.
    fn begin_piece(&mut self, new_line: bool, out: &mut Pairs) {
        match self.mode {
            Mode::PopOn => {
                if self.loading && new_line {
                    self.end_caption(out);
                }
                if !self.loading {
                    self.loading = true;
                    out.control(Control::ResumeCaptionLoading);
                    out.control(Control::EraseNonDisplayedMemory);
                    out.control(base_row());
                }
            }
            Mode::PaintOn => {
                if !self.started {
                    self.started = true;
                    out.control(Control::ResumeDirectionCaptioning);
                    out.control(base_row());
                } else if new_line {
                    // One row: a full line is wiped for the next.
                    out.control(Control::EraseDisplayedMemory);
                    out.control(base_row());
                }
            }
            Mode::RollUp2 | Mode::RollUp3 | Mode::RollUp4 => {
                if !self.started {
                    self.started = true;
                    out.control(roll_up(self.mode));
                    out.control(base_row());
                } else if new_line {
                    out.control(Control::CarriageReturn);
                }
            }
        }
    }

    /// Pop-on: shows the loaded caption; the next word loads a new one.
    fn end_caption(&mut self, out: &mut Pairs) {
        out.control(Control::EndOfCaption);
        self.loading = false;
        self.shown = true;
    }

    fn show_loaded(&mut self) {
        let mut out = Pairs::new(self.field);
        self.end_caption(&mut out);
        self.pairs.extend(out.finish());
        self.layout.clear();
    }

    fn clear_screen(&mut self) {
        let mut out = Pairs::new(self.field);
        if self.finishing && self.mode.is_roll_up() {
            // The row is committed, as a decoder that writes a roll-up
            // caption when its row rolls needs.
            out.control(Control::CarriageReturn);
        }
        out.control(Control::EraseDisplayedMemory);
        self.pairs.extend(out.finish());
        self.shown = false;
        self.started = false;
        self.layout.clear();
    }
}

fn field_of(channel: Channel608) -> Field {
    if channel.is_field_2() {
        Field::TWO
    } else {
        Field::ONE
    }
}

fn roll_up(mode: Mode) -> Control {
    match mode {
        Mode::RollUp3 => Control::RollUp3,
        Mode::RollUp4 => Control::RollUp4,
        _ => Control::RollUp2,
    }
}

fn base_row() -> Control {
    Control::PreambleAddress(PreambleAddressCode::new(
        BASE_ROW,
        false,
        PreambleType::Indent0,
    ))
}

/// Byte pairs being put together: one-byte characters two to a pair,
/// two-byte codes alone and twice. Also what the SCC writer
/// (`subtitles::scc`) sends its captions with.
#[derive(Debug)]
pub struct Pairs {
    field: Field,
    pairs: Vec<[u8; 2]>,
    /// A one-byte character waiting for a second one.
    half: Option<u8>,
}

impl Pairs {
    fn new(field: Field) -> Self {
        Self {
            field,
            pairs: Vec::new(),
            half: None,
        }
    }

    /// Pairs for `channel` (its control codes differ by field).
    pub fn for_channel(channel: Channel608) -> Self {
        Self::new(field_of(channel))
    }

    pub fn control(&mut self, control: Control) {
        self.two_byte(Code::Control(ControlCode::new(
            self.field,
            Channel::ONE,
            control,
        )));
    }

    pub fn text(&mut self, glyph: &Glyph608) {
        if let Some(fallback) = glyph.fallback {
            self.one_byte(fallback);
        }
        if glyph.code.byte_len() == 2 {
            self.two_byte(glyph.code);
        } else {
            self.one_byte(glyph.code);
        }
    }

    fn one_byte(&mut self, code: Code) {
        let mut bytes = [0; 2];
        code.write_into(&mut bytes);
        match self.half.take() {
            Some(first) => self.pairs.push([first, bytes[0]]),
            None => self.half = Some(bytes[0]),
        }
    }

    fn two_byte(&mut self, code: Code) {
        self.flush_half();
        let mut bytes = [0; 2];
        code.write_into(&mut bytes);
        self.pairs.push(bytes);
        self.pairs.push(bytes);
    }

    fn flush_half(&mut self) {
        if let Some(first) = self.half.take() {
            self.pairs.push([first, PADDING[1]]);
        }
    }

    pub fn finish(mut self) -> Vec<[u8; 2]> {
        self.flush_half();
        self.pairs
    }
}
