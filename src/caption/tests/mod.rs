// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The encoder's captions as a decoder shows them: CEA-608 screens
//! (`screen608.rs`), 708 service 1 (`service708.rs`), the byte formats
//! (`packing.rs`), word delays and the end of a stream (`delays.rs`).

mod delays;
mod packing;
mod screen608;
mod service708;

use cea608_types::{Cea608, Cea608State, Mode as Mode608};
use cea708_types::tables::Code as Code708;

use super::*;

pub(super) const MS: u64 = 1_000_000;
/// One frame at 29.97 fps, rounded down.
pub(super) const NTSC_FRAME: u64 = 33_366_666;

pub(super) fn encoder(mode: Mode) -> Encoder {
    Encoder::new(
        Config {
            mode,
            ..Config::default()
        },
        0,
    )
}

pub(super) fn at(fps: Framerate, mode: Mode) -> Encoder {
    Encoder::new(
        Config {
            mode,
            framerate: fps,
            ..Config::default()
        },
        0,
    )
}

/// What a CEA-608 decoder shows, frame by frame.
#[derive(Debug, Default)]
pub(super) struct Screen {
    state: Cea608State,
    mode: Option<Mode608>,
    /// Rows on screen, oldest first.
    shown: Vec<String>,
    /// Pop-on: the row loading off screen.
    hidden: String,
    /// Every character that reached the screen (or the loading row), with
    /// the time of its frame: when a word was complete.
    written: Vec<(u64, char)>,
}

impl Screen {
    fn feed(&mut self, t: u64, pair: [u8; 2]) {
        let Some(cmd) = self.state.decode(pair).expect("valid parity") else {
            return;
        };
        if !matches!(cmd, Cea608::Text(_)) {
            // A new row, a cleared screen or a shown caption separates
            // words as a space does.
            self.written.push((t, ' '));
        }
        match cmd {
            Cea608::NewMode(_, mode) => self.mode = Some(mode),
            Cea608::Text(text) => {
                if text.needs_backspace {
                    self.row().pop();
                    self.written.pop();
                }
                for c in [text.char1, text.char2].into_iter().flatten() {
                    self.row().push(c);
                    self.written.push((t, c));
                }
            }
            Cea608::CarriageReturn(_) => {
                let rows = self.mode.and_then(|m| m.rollup_rows()).unwrap_or(1);
                self.shown.push(String::new());
                while self.shown.len() > rows as usize {
                    self.shown.remove(0);
                }
            }
            Cea608::EraseDisplay(_) => self.shown.clear(),
            Cea608::EraseNonDisplay(_) => self.hidden.clear(),
            Cea608::EndOfCaption(_) => {
                let old = self.shown.pop().unwrap_or_default();
                self.shown = vec![std::mem::replace(&mut self.hidden, old)];
            }
            Cea608::Preamble(..) if self.mode != Some(Mode608::PopOn) && self.shown.is_empty() => {
                self.shown.push(String::new());
            }
            _ => {}
        }
    }

    fn row(&mut self) -> &mut String {
        if self.mode == Some(Mode608::PopOn) {
            return &mut self.hidden;
        }
        if self.shown.is_empty() {
            self.shown.push(String::new());
        }
        self.shown.last_mut().unwrap()
    }

    fn text(&self) -> String {
        self.shown
            .iter()
            .map(|r| r.trim())
            .collect::<Vec<_>>()
            .join(" / ")
    }

    /// When each word (as written, in order) was complete.
    fn word_times(&self) -> Vec<(String, u64)> {
        let mut words = Vec::new();
        let mut current = String::new();
        let mut last = 0;
        for &(t, c) in &self.written {
            if c == ' ' {
                if !current.is_empty() {
                    words.push((std::mem::take(&mut current), last));
                }
            } else {
                current.push(c);
                last = t;
            }
        }
        if !current.is_empty() {
            words.push((current, last));
        }
        words
    }
}

/// Runs frames until `until` (ns) through a screen; returns the screen and
/// the frames' 608 pairs with their times.
pub(super) fn play(enc: &mut Encoder, until: u64) -> (Screen, Vec<(u64, [u8; 2])>) {
    let mut screen = Screen::default();
    let mut pairs = Vec::new();
    for frame in enc.frames_until(until) {
        if let Some(pair) = frame.cea608 {
            screen.feed(frame.pts, pair);
            pairs.push((frame.pts, pair));
        }
    }
    (screen, pairs)
}

pub(super) fn is_padding(pair: &[u8; 2]) -> bool {
    *pair == cea608::PADDING
}

/// The pairs carrying text (not padding, not the repeat of a control).
pub(super) fn strip(pair: [u8; 2]) -> [u8; 2] {
    [pair[0] & 0x7f, pair[1] & 0x7f]
}

/// Service 1's codes, in order, from every frame until `until`.
pub(super) fn service_codes(enc: &mut Encoder, until: u64) -> Vec<(u64, Code708)> {
    let mut codes = Vec::new();
    for frame in enc.frames_until(until) {
        for packet in frame.cea708 {
            for service in packet.services() {
                assert_eq!(service.number(), 1);
                codes.extend(service.codes().iter().cloned().map(|c| (frame.pts, c)));
            }
        }
    }
    codes
}

/// Service 1's text; carriage returns as "\r".
pub(super) fn service_text(enc: &mut Encoder, until: u64) -> String {
    service_codes(enc, until)
        .into_iter()
        .filter_map(|(_, c)| match c {
            Code708::CR => Some('\r'),
            c => c.char(),
        })
        .collect()
}
