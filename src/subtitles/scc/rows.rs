// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A cue's lines as rows of CEA-608 glyphs, at most 32 columns each.
//!
//! A cue line that fits stays one row; a longer one (a style's 37- or
//! 42-character lines) wraps at spaces, as the caption path fills its lines
//! ([`Layout`]). Characters go through the caption path's mapping
//! ([`map_608`]): what CEA-608 lacks is transliterated and counted.

use cea608_types::tables::Code;

use crate::caption::charset::{map_608, Glyph608};
use crate::caption::layout::{Layout, COLUMNS};

/// One row of a caption.
pub type Row = Vec<Glyph608>;

/// A cue's rows, and how many source characters could not be shown as
/// themselves.
#[derive(Debug, Default)]
pub struct Rows {
    pub rows: Vec<Row>,
    pub replaced: u64,
}

/// Lays `lines` out in rows, `prefix` (">> " for a new speaker) before the
/// first.
pub fn lay_out(lines: &[String], prefix: &str) -> Rows {
    let mut out = Rows::default();
    let mut layout = Layout::default();
    let mut row = Row::new();
    for (i, line) in lines.iter().enumerate() {
        let text = if i == 0 {
            format!("{prefix}{line}")
        } else {
            line.clone()
        };
        layout.break_line();
        for word in text.split_whitespace() {
            let mapped = map_608(word);
            out.replaced += mapped.replaced;
            for piece in layout.place(mapped.glyphs.len()) {
                if piece.new_line && !row.is_empty() {
                    out.rows.push(std::mem::take(&mut row));
                }
                if piece.space_before {
                    row.push(space());
                }
                row.extend_from_slice(&mapped.glyphs[piece.start..piece.end]);
            }
        }
    }
    if !row.is_empty() {
        out.rows.push(row);
    }
    debug_assert!(out.rows.iter().all(|r| r.len() <= COLUMNS));
    out
}

/// The column a block of rows `width` wide starts at to be centred,
/// rounded down to the 4-column steps a preamble address can indent by (a
/// tab offset would cost two more frames a row).
pub fn centred_indent(width: usize) -> u8 {
    let column = COLUMNS.saturating_sub(width) / 2;
    (column / 4 * 4) as u8
}

fn space() -> Glyph608 {
    Glyph608 {
        code: Code::Space,
        fallback: None,
    }
}

/// The characters a row shows.
#[cfg(test)]
fn row_text(row: &Row) -> String {
    row.iter().filter_map(|g| g.code.char()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &Rows) -> Vec<String> {
        rows.rows.iter().map(row_text).collect()
    }

    #[test]
    fn lines_that_fit_stay_rows_of_their_own() {
        let rows = lay_out(&["Hello there,".into(), "how are you?".into()], "");
        assert_eq!(texts(&rows), ["Hello there,", "how are you?"]);
        assert_eq!(rows.replaced, 0);
    }

    #[test]
    fn a_line_wider_than_32_columns_wraps_at_a_space() {
        let line = "The committee will now consider the amendment".to_owned();
        let rows = lay_out(&[line], "");
        assert_eq!(
            texts(&rows),
            ["The committee will now consider", "the amendment"]
        );
    }

    #[test]
    fn a_new_speaker_starts_with_chevrons() {
        let rows = lay_out(&["Yes.".into()], ">> ");
        assert_eq!(texts(&rows), [">> Yes."]);
    }

    #[test]
    fn characters_outside_608_are_transliterated_and_counted() {
        let rows = lay_out(&["Straße kostet 5 € — gut".into()], "");
        // ß and — are in the extended sets; € is not.
        assert_eq!(texts(&rows), ["Straße kostet 5 EUR — gut"]);
        assert_eq!(rows.replaced, 1);
    }

    #[test]
    fn rows_are_centred_in_steps_of_four_columns() {
        assert_eq!(centred_indent(32), 0);
        assert_eq!(centred_indent(12), 8);
        assert_eq!(centred_indent(20), 4);
        assert_eq!(centred_indent(1), 12);
    }
}
