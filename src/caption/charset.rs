// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Which characters each caption standard can show, and what stands in for
//! the rest.
//!
//! The code tables are those of `cea608-types` and `cea708-types`. A
//! character either set lacks is replaced by its ASCII transliteration
//! (`deunicode`: "ł" -> "l", "œ" -> "oe", "привет" -> "privet", "北京" ->
//! "Bei Jing"), or by "?" where there is none; each such source character
//! counts as one replaced character.

use cea608_types::tables::{Channel, Code as Code608};
use cea708_types::tables::Code as Code708;

/// What stands in for a character that has neither a caption code nor a
/// transliteration.
pub const UNKNOWN: char = '?';

/// A character the way CEA-608 writes it on CC1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyph608 {
    pub code: Code608,
    /// For a character of the extended sets: the basic character that a
    /// decoder without those sets shows instead. The extended code follows
    /// it and replaces it (the decoder backspaces first).
    pub fallback: Option<Code608>,
}

/// Text mapped onto one character set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped<G> {
    /// One glyph per column.
    pub glyphs: Vec<G>,
    /// Source characters that could not be carried as themselves.
    pub replaced: u64,
}

/// Maps `text` onto the CEA-608 character sets (basic, special and
/// extended).
pub fn map_608(text: &str) -> Mapped<Glyph608> {
    map(text, glyph_608)
}

/// Maps `text` onto the CEA-708 character sets (G0, G1 and G2).
pub fn map_708(text: &str) -> Mapped<Code708> {
    map(text, |c| Code708::from_char(c).filter(is_708_character))
}

fn map<G: PartialEq>(text: &str, direct: impl Fn(char) -> Option<G>) -> Mapped<G> {
    let mut glyphs = Vec::new();
    let mut replaced = 0;
    for c in text.chars() {
        let c = if c.is_whitespace() { ' ' } else { c };
        if let Some(glyph) = direct(c) {
            glyphs.push(glyph);
            continue;
        }
        replaced += 1;
        for t in transliterate(c).chars() {
            let glyph = direct(t)
                .or_else(|| direct(UNKNOWN))
                .expect("'?' is in every caption set");
            glyphs.push(glyph);
        }
    }
    trim_spaces(&mut glyphs, &direct);
    Mapped { glyphs, replaced }
}

/// ASCII for a character the caption sets lack: deunicode's
/// transliteration without the spaces it puts around CJK syllables, or
/// "?" where it has none.
fn transliterate(c: char) -> String {
    let Some(raw) = deunicode::deunicode_char(c) else {
        return UNKNOWN.to_string();
    };
    let ascii = raw.trim();
    if ascii.is_empty() || !ascii.chars().all(|a| a.is_ascii_graphic() || a == ' ') {
        return UNKNOWN.to_string();
    }
    // deunicode ends each CJK syllable with a space, so that they read as
    // words; the space at the end of the word is trimmed later.
    if raw.ends_with(' ') {
        format!("{ascii} ")
    } else {
        ascii.to_owned()
    }
}

/// Spaces at the ends of a word (from transliterated syllables) take no
/// room.
fn trim_spaces<G>(glyphs: &mut Vec<G>, direct: &impl Fn(char) -> Option<G>)
where
    G: PartialEq,
{
    let Some(space) = direct(' ') else {
        return;
    };
    while glyphs.last() == Some(&space) {
        glyphs.pop();
    }
    let leading = glyphs.iter().take_while(|g| **g == space).count();
    glyphs.drain(..leading);
}

fn glyph_608(c: char) -> Option<Glyph608> {
    let code = Code608::from_char(c, Channel::ONE)?;
    if !code.needs_backspace() {
        return Some(Glyph608 {
            code,
            fallback: None,
        });
    }
    Some(Glyph608 {
        code,
        fallback: Some(basic_fallback(c)),
    })
}

/// The basic CEA-608 character closest to `c` (its transliteration's first
/// letter: "É" -> "E", "{" -> "(" has none, so a space).
fn basic_fallback(c: char) -> Code608 {
    deunicode::deunicode_char(c)
        .and_then(|s| s.chars().next())
        .and_then(|f| Code608::from_char(f, Channel::ONE))
        .filter(|code| code.byte_len() == 1 && !code.needs_backspace())
        .unwrap_or(Code608::Space)
}

/// Printable characters only: the 708 table maps a few control values to
/// characters too.
fn is_708_character(code: &Code708) -> bool {
    code.char().is_some()
}
