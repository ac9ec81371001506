// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Subtitles for delivery: timed words into cues a person can read (the
//! subtitle styles), and the files they are delivered in. Pure: no pads,
//! no threads; used by the sink's files and the transcriber's pads.
//!
//! - `style.rs`: the styles (lines, characters, times, reading speed);
//! - `lines.rs`: where a person breaks a line, and a cue's lines;
//! - `cues/`: timed words into cues of a style, as they come;
//! - `writes.rs`: a subtitle file's bytes as writes at offsets (the tail
//!   rewritten after each cue), for a file on disk or a byte stream;
//! - `stream.rs`: timed text of any grain into a subtitle file's writes
//!   (`voxtralrtsubenc`);
//! - `file.rs`: a transcript file as it is written (records, or the writes
//!   of `writes.rs`); `records.rs` txt and jsonl, `srt.rs`,
//!   `webvtt.rs`, `scc/` and `ttml.rs` (IMSC 1.1 Text, EBU-TT-D) the
//!   subtitle formats.

pub mod cues;
pub mod file;
pub mod lines;
pub mod records;
mod srt;
pub mod stream;
pub mod style;
mod webvtt;
pub mod writes;

pub use cues::{split_text, spread_words, Counts, CueBuilder};
pub use style::{Style, StyleName};

pub mod scc;
pub mod ttml;

/// A subtitle: up to a style's number of lines, on screen from `start_ns`
/// to `end_ns` (media time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cue {
    /// The lines as shown, top first; never empty.
    pub lines: Vec<String>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Who speaks, when a speaker source is in use.
    pub speaker: Option<String>,
}

impl Cue {
    /// The lines as one text, a line feed between them (a text buffer's
    /// content).
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }
}

/// A subtitle file format, written cue by cue so that a file cut after any
/// write is valid: `header` once, then each cue's text, and after the cues
/// so far the `tail` (what closes the file: TTML's closing tags, SCC's last
/// erase), written anew after each cue.
pub trait Format: Send {
    /// What the file starts with.
    fn header(&self) -> String;
    /// The text that `cue` adds (cues come in time order, never
    /// overlapping).
    fn cue(&mut self, cue: &Cue) -> String;
    /// What ends the file after the cues so far.
    fn tail(&self) -> String;
    /// Characters of the cues so far the format could not carry, written
    /// as a transliteration (SCC: CEA-608's character set).
    fn chars_replaced(&self) -> u64 {
        0
    }
}
