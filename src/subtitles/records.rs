// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Transcript records: plain text and JSON lines, one record per word or
//! line as the transcript gives them (with running times, for machines),
//! not cues of a style. Each record is one self-contained piece of text,
//! so a file cut after any record is valid.

use std::fmt::Write;

/// A record's kind of file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// Plain text: words separated by spaces, a new line after each caption
    /// line or sentence.
    Txt,
    /// One JSON object per line.
    Jsonl,
}

/// A word or line with the times a record keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub text: &'a str,
    /// Position in the media (stream time), ns.
    pub start: u64,
    pub end: u64,
    /// Pipeline running time, ns.
    pub running_start: u64,
    pub running_end: u64,
    /// Who said it, when a speaker source is in use.
    pub speaker: Option<&'a str>,
}

/// Writes records of one kind, keeping who spoke last.
#[derive(Debug, Clone)]
pub struct Records {
    kind: RecordKind,
    /// The speaker of the last record written.
    speaker: Option<String>,
    /// The last text written did not end its line (txt).
    mid_line: bool,
}

impl Records {
    pub fn new(kind: RecordKind) -> Records {
        Records {
            kind,
            speaker: None,
            mid_line: false,
        }
    }

    /// The text of the next record. `line_cue` says it is a whole caption
    /// line rather than one word. A new speaker is named: txt on a line of
    /// their own (`NAME: `), jsonl in a field of every record.
    pub fn next(&mut self, record: &Record<'_>, line_cue: bool) -> String {
        let turn = record.speaker.is_some() && record.speaker != self.speaker.as_deref();
        let mut text = self.kind.text(record, line_cue, turn);
        if turn && self.mid_line && self.kind == RecordKind::Txt {
            text.insert(0, '\n');
        }
        self.speaker = record.speaker.map(str::to_owned);
        self.mid_line = !text.ends_with('\n');
        text
    }
}

impl RecordKind {
    fn text(self, record: &Record<'_>, line_cue: bool, turn: bool) -> String {
        match self {
            RecordKind::Txt => {
                let named = match (turn, record.speaker) {
                    (true, Some(speaker)) => format!("{speaker}: {}", record.text),
                    _ => record.text.to_owned(),
                };
                let ends_sentence = record.text.ends_with(['.', '?', '!', '。', '？', '！']);
                let sep = if line_cue || ends_sentence { "\n" } else { " " };
                format!("{named}{sep}")
            }
            RecordKind::Jsonl => format!(
                "{{\"text\":{},\"start\":{:.3},\"end\":{:.3},\"running_start\":{:.3},\"running_end\":{:.3},\"is_final\":true{}}}\n",
                json_string(record.text),
                seconds(record.start),
                seconds(record.end),
                seconds(record.running_start),
                seconds(record.running_end),
                record
                    .speaker
                    .map_or_else(String::new, |s| format!(",\"speaker\":{}", json_string(s)))
            ),
        }
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: Record<'static> = Record {
        text: "hello",
        start: 3_723_456_000_000,
        end: 3_724_000_000_000,
        running_start: 1_500_000_000,
        running_end: 2_044_000_000,
        speaker: None,
    };

    #[test]
    fn jsonl_escapes_text_and_gives_seconds() {
        let record = Record {
            text: "say \"hi\"\\\n",
            ..RECORD
        };
        assert_eq!(
            Records::new(RecordKind::Jsonl).next(&record, false),
            "{\"text\":\"say \\\"hi\\\"\\\\\\n\",\"start\":3723.456,\"end\":3724.000,\
             \"running_start\":1.500,\"running_end\":2.044,\"is_final\":true}\n"
        );
    }

    #[test]
    fn txt_breaks_lines_after_sentences_and_caption_lines() {
        let word = |text| Record { text, ..RECORD };
        let mut txt = Records::new(RecordKind::Txt);
        assert_eq!(txt.next(&word("hello"), false), "hello ");
        assert_eq!(txt.next(&word("there."), false), "there.\n");
        assert_eq!(txt.next(&word("a line"), true), "a line\n");
    }

    #[test]
    fn each_kind_says_who_speaks() {
        let said = |text, speaker| Record {
            text,
            speaker: Some(speaker),
            ..RECORD
        };
        let mut txt = Records::new(RecordKind::Txt);
        assert_eq!(txt.next(&said("hello", "Alice"), false), "Alice: hello ");
        assert_eq!(txt.next(&said("hello", "Alice"), false), "hello ");
        // A new speaker starts a line of their own.
        assert_eq!(txt.next(&said("hi", "Bob"), false), "\nBob: hi ");
        assert!(Records::new(RecordKind::Jsonl)
            .next(&said("hello", "Alice"), false)
            .ends_with(",\"is_final\":true,\"speaker\":\"Alice\"}\n"));
    }
}
