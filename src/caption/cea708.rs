// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A CEA-708 DTVCC service, with windows of its own: the same modes and
//! lines as the CEA-608 track, written with 708 window commands.
//!
//! - roll-up N: window 0, N rows, visible; the pen starts on the last row
//!   and a carriage return rolls the rows up;
//! - paint-on: window 0, one row, visible; a full line is cleared for the
//!   next;
//! - pop-on: windows 0 and 1 take turns: a caption loads into the hidden
//!   one, which is then displayed while the other is hidden;
//! - after a silence the windows are deleted; the next word defines them
//!   again.
//!
//! 708 has about ten times 608's bandwidth, so every word goes out on the
//! first frame at or after its start, however fast the speech.

use cea708_types::tables::{
    Anchor, Code, DefineWindowArgs, EdgeType, FontStyle, PenSize, SetPenAttributesArgs,
    SetPenLocationArgs, TextOffset, TextTag, WindowBits,
};
use cea708_types::DTVCCPacket;

use super::charset::map_708;
use super::layout::{Layout, COLUMNS};
use super::{Mode, Timing, Word};

/// Predefined window styles (CEA-708 8.4.11): NTSC-style pop-up, and
/// roll-up.
const POP_UP_STYLE: u8 = 1;
const ROLL_UP_STYLE: u8 = 4;
/// Predefined pen style 1: the default NTSC-style pen.
const PEN_STYLE: u8 = 1;

/// The CEA-708 caption state of one stream.
#[derive(Debug)]
pub struct Track {
    mode: Mode,
    timing: Timing,
    /// The service the captions go to (1: the primary one).
    service: u8,
    layout: Layout,
    queue: std::collections::VecDeque<Word<Code>>,
    defined: WindowBits,
    /// The window text goes into (pop-on: the hidden one).
    window: u8,
    loading: bool,
    shown: bool,
    last_end: Option<u64>,
    /// The stream ends: see [`Track::finish_display`].
    finishing: bool,
    sequence: u8,
    replaced: u64,
}

impl Track {
    pub fn new(mode: Mode, timing: Timing, service: u8) -> Self {
        Self {
            mode,
            timing,
            service,
            layout: Layout::default(),
            queue: Default::default(),
            defined: WindowBits::NONE,
            window: 0,
            loading: false,
            shown: false,
            last_end: None,
            finishing: false,
            sequence: 0,
            replaced: 0,
        }
    }

    pub fn push_word(&mut self, text: &str, start: u64, end: u64) {
        let (queue, replaced) = (&mut self.queue, &mut self.replaced);
        Word::queue(queue, replaced, map_708(text), text, (start, end), false);
    }

    /// Queues the first word of a new speaker: on a new row, after
    /// `prefix` (">> "), which goes through the same character mapping.
    pub fn push_turn(&mut self, prefix: &str, text: &str, start: u64, end: u64) {
        let text = format!("{prefix}{text}");
        let (queue, replaced) = (&mut self.queue, &mut self.replaced);
        Word::queue(queue, replaced, map_708(&text), &text, (start, end), true);
    }

    /// Source characters that CEA-708 could not show as themselves.
    pub fn replaced(&self) -> u64 {
        self.replaced
    }

    pub fn is_busy(&self) -> bool {
        !self.queue.is_empty() || (self.finishing && self.has_captions())
    }

    /// The stream ends: once the words queued are out, a loaded pop-on
    /// caption is shown and the windows deleted.
    pub fn finish_display(&mut self) {
        self.finishing = true;
    }

    pub fn has_captions(&self) -> bool {
        self.shown || self.loading
    }

    /// The service commands for the frame at `t`: every word whose start
    /// has come, else showing a pop-on caption after a pause or deleting
    /// the windows after a silence.
    pub fn frame(&mut self, t: u64) -> Vec<DTVCCPacket> {
        let mut codes = Vec::new();
        while self.queue.front().is_some_and(|w| w.start <= t) {
            let word = self.queue.pop_front().expect("checked");
            self.write_word(word, &mut codes);
        }
        if codes.is_empty() && self.queue.is_empty() {
            if let Some(last_end) = self.last_end {
                if self.loading && (self.finishing || t >= last_end + self.timing.pop_on_pause_ns) {
                    self.end_caption(&mut codes);
                    self.layout.clear();
                } else if self.shown
                    && (self.finishing || t >= last_end + self.timing.clear_after_ns)
                {
                    self.delete_windows(&mut codes);
                }
            }
        }
        self.packets(codes)
    }

    fn write_word(&mut self, word: Word<Code>, codes: &mut Vec<Code>) {
        if word.new_row {
            self.layout.break_line();
        }
        for piece in self.layout.place(word.glyphs.len()) {
            self.begin_piece(piece.new_line, codes);
            if piece.space_before {
                codes.push(Code::Space);
            }
            codes.extend_from_slice(&word.glyphs[piece.start..piece.end]);
        }
        if self.mode == Mode::PopOn && word.ends_sentence {
            self.end_caption(codes);
            self.layout.clear();
        }
        if self.mode != Mode::PopOn {
            self.shown = true;
        }
        self.last_end = Some(word.end);
    }

    fn begin_piece(&mut self, new_line: bool, codes: &mut Vec<Code>) {
        match self.mode {
            Mode::PopOn => {
                if self.loading && new_line {
                    self.end_caption(codes);
                }
                if !self.loading {
                    self.loading = true;
                    self.prepare_window(self.window, false, codes);
                    codes.push(Code::ClearWindows(bit(self.window)));
                    codes.push(Code::SetPenLocation(SetPenLocationArgs::new(0, 0)));
                }
            }
            Mode::PaintOn => {
                if !self.is_defined(0) {
                    self.prepare_window(0, true, codes);
                } else if new_line {
                    codes.push(Code::ClearWindows(bit(0)));
                    codes.push(Code::SetPenLocation(SetPenLocationArgs::new(0, 0)));
                }
            }
            Mode::RollUp2 | Mode::RollUp3 | Mode::RollUp4 => {
                if !self.is_defined(0) {
                    self.prepare_window(0, true, codes);
                    let last_row = self.rows() - 1;
                    codes.push(Code::SetPenLocation(SetPenLocationArgs::new(last_row, 0)));
                } else if new_line {
                    codes.push(Code::CR);
                }
            }
        }
    }

    /// Defines window `id` if needed, makes it current and sets its pen.
    fn prepare_window(&mut self, id: u8, visible: bool, codes: &mut Vec<Code>) {
        if !self.is_defined(id) {
            self.defined = self.defined | bit(id);
            codes.push(Code::DefineWindow(self.window_args(id, visible)));
            codes.push(Code::SetPenAttributes(pen()));
        } else {
            codes.push(set_current_window(id));
        }
    }

    /// Pop-on: shows the loaded window and hides the other, which the next
    /// caption loads into.
    fn end_caption(&mut self, codes: &mut Vec<Code>) {
        let shown = self.window;
        let other = 1 - shown;
        codes.push(Code::DisplayWindows(bit(shown)));
        codes.push(Code::HideWindows(bit(other)));
        self.window = other;
        self.loading = false;
        self.shown = true;
    }

    fn delete_windows(&mut self, codes: &mut Vec<Code>) {
        codes.push(Code::DeleteWindows(self.defined));
        self.defined = WindowBits::NONE;
        self.window = 0;
        self.shown = false;
        self.loading = false;
        self.layout.clear();
    }

    fn is_defined(&self, id: u8) -> bool {
        self.defined & bit(id) != WindowBits::NONE
    }

    fn rows(&self) -> u8 {
        match self.mode {
            Mode::RollUp2 => 2,
            Mode::RollUp3 => 3,
            Mode::RollUp4 => 4,
            Mode::PopOn | Mode::PaintOn => 1,
        }
    }

    fn window_args(&self, id: u8, visible: bool) -> DefineWindowArgs {
        let style = if self.mode.is_roll_up() {
            ROLL_UP_STYLE
        } else {
            POP_UP_STYLE
        };
        DefineWindowArgs::new(
            id,
            0,
            Anchor::BottomMiddle,
            // Relative anchor: 90 % down, centred; inside the safe area.
            true,
            90,
            50,
            self.rows() - 1,
            (COLUMNS - 1) as u8,
            true,
            true,
            visible,
            style,
            PEN_STYLE,
        )
    }

    /// Packs the codes into DTVCC packets of the service (a packet holds
    /// up to 127 bytes of service blocks).
    fn packets(&mut self, codes: Vec<Code>) -> Vec<DTVCCPacket> {
        let mut packets = Vec::new();
        if codes.is_empty() {
            // A packet uses a sequence number: none for nothing.
            return packets;
        }
        let mut packet = self.new_packet();
        for code in codes {
            if packet.push_code(self.service, code.clone()).is_err() {
                packets.push(std::mem::replace(&mut packet, self.new_packet()));
                packet
                    .push_code(self.service, code)
                    .expect("one code fits an empty packet");
            }
        }
        if !packet.is_empty() {
            packets.push(packet);
        }
        packets
    }

    fn new_packet(&mut self) -> DTVCCPacket {
        let packet = DTVCCPacket::new(self.sequence);
        self.sequence = (self.sequence + 1) % 4;
        packet
    }
}

fn bit(id: u8) -> WindowBits {
    WindowBits::from_window_id(id)
}

fn set_current_window(id: u8) -> Code {
    if id == 0 {
        Code::SetCurrentWindow0
    } else {
        Code::SetCurrentWindow1
    }
}

fn pen() -> SetPenAttributesArgs {
    SetPenAttributesArgs::new(
        PenSize::Standard,
        FontStyle::Default,
        TextTag::Dialog,
        TextOffset::Normal,
        false,
        false,
        EdgeType::None,
    )
}
