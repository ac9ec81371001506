// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Fills caption lines of a fixed width with words.

/// The widest caption line CEA-608 shows (and the window width used for
/// CEA-708, so that both show the same lines).
pub const COLUMNS: usize = 32;

/// Where a piece of a word goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The piece starts a new line: the current one is full.
    pub new_line: bool,
    /// A space goes before the piece (it follows a word on the same line).
    pub space_before: bool,
    /// The word's glyphs in this piece.
    pub start: usize,
    pub end: usize,
}

/// The line being filled.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Columns taken on the current line.
    column: usize,
}

impl Layout {
    /// Whether nothing has been placed on the current line.
    pub fn line_is_empty(&self) -> bool {
        self.column == 0
    }

    /// The next word starts on an empty line (the display was cleared or
    /// a caption was shown).
    pub fn clear(&mut self) {
        self.column = 0;
    }

    /// The next word starts a new line, as after a full one (a new
    /// speaker's row, or pop-on: a new caption).
    pub fn break_line(&mut self) {
        if self.column > 0 {
            self.column = COLUMNS;
        }
    }

    /// Places a word `width` columns wide: after a space on the current
    /// line when it fits there, else at the start of a new line. A word
    /// wider than a line is cut into line-wide pieces, each on a line of
    /// its own.
    pub fn place(&mut self, width: usize) -> Vec<Piece> {
        let mut pieces = Vec::new();
        if width == 0 {
            return pieces;
        }
        let fits_after_space = self.column > 0 && self.column + 1 + width <= COLUMNS;
        if fits_after_space {
            self.column += 1 + width;
            pieces.push(Piece {
                new_line: false,
                space_before: true,
                start: 0,
                end: width,
            });
            return pieces;
        }
        let mut start = 0;
        while start < width {
            let end = (start + COLUMNS).min(width);
            pieces.push(Piece {
                new_line: self.column > 0,
                space_before: false,
                start,
                end,
            });
            self.column = end - start;
            start = end;
        }
        pieces
    }
}
