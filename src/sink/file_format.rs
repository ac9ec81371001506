// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Transcript files: how a cue is written in each format. Each cue is one
//! self-contained piece of text, so a file cut after any cue is valid.

use std::fmt::Write;

/// A transcript file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    /// Plain text: words separated by spaces, a new line after each caption
    /// line or sentence.
    Txt,
    /// SubRip subtitles.
    Srt,
    /// WebVTT subtitles.
    Vtt,
    /// One JSON object per line.
    Jsonl,
}

/// A cue with the times a file records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCue<'a> {
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

impl FileFormat {
    /// What a file starts with.
    pub fn header(self) -> &'static str {
        match self {
            FileFormat::Vtt => "WEBVTT\n\n",
            _ => "",
        }
    }

    /// The text of cue number `index` (from 1). `line_cue` says the cue is
    /// a whole caption line rather than one word; `turn` that its speaker
    /// is not the previous cue's (txt and srt then name the speaker;
    /// WebVTT names it in a voice span on every cue, jsonl in a field).
    pub fn cue(self, index: u64, cue: &FileCue<'_>, line_cue: bool, turn: bool) -> String {
        let named = match (turn, cue.speaker) {
            (true, Some(speaker)) => format!("{speaker}: {}", cue.text),
            _ => cue.text.to_owned(),
        };
        match self {
            FileFormat::Txt => {
                let ends_sentence = cue.text.ends_with(['.', '?', '!', '。', '？', '！']);
                let sep = if line_cue || ends_sentence { "\n" } else { " " };
                format!("{named}{sep}")
            }
            FileFormat::Srt => format!(
                "{index}\n{} --> {}\n{named}\n\n",
                clock(cue.start, ','),
                clock(cue.end, ','),
            ),
            FileFormat::Vtt => format!(
                "{} --> {}\n{}{}\n\n",
                clock(cue.start, '.'),
                clock(cue.end, '.'),
                cue.speaker.map_or_else(String::new, |s| format!("<v {}>", vtt_escape(s))),
                cue.text
            ),
            FileFormat::Jsonl => format!(
                "{{\"text\":{},\"start\":{:.3},\"end\":{:.3},\"running_start\":{:.3},\"running_end\":{:.3},\"is_final\":true{}}}\n",
                json_string(cue.text),
                seconds(cue.start),
                seconds(cue.end),
                seconds(cue.running_start),
                seconds(cue.running_end),
                cue.speaker.map_or_else(String::new, |s| format!(",\"speaker\":{}", json_string(s)))
            ),
        }
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// `HH:MM:SS,mmm` (SRT) or `HH:MM:SS.mmm` (WebVTT).
fn clock(ns: u64, separator: char) -> String {
    let ms = ns / 1_000_000;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// A voice span's annotation: WebVTT reserves `&`, `<` and `>`.
fn vtt_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
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

    const CUE: FileCue<'static> = FileCue {
        text: "hello",
        start: 3_723_456_000_000,
        end: 3_724_000_000_000,
        running_start: 1_500_000_000,
        running_end: 2_044_000_000,
        speaker: None,
    };

    #[test]
    fn srt_cues_are_numbered_with_comma_milliseconds() {
        assert_eq!(
            FileFormat::Srt.cue(7, &CUE, false, false),
            "7\n01:02:03,456 --> 01:02:04,000\nhello\n\n"
        );
    }

    #[test]
    fn vtt_has_a_header_and_dot_milliseconds() {
        assert_eq!(FileFormat::Vtt.header(), "WEBVTT\n\n");
        assert_eq!(
            FileFormat::Vtt.cue(1, &CUE, false, false),
            "01:02:03.456 --> 01:02:04.000\nhello\n\n"
        );
    }

    #[test]
    fn jsonl_escapes_text_and_gives_seconds() {
        let cue = FileCue {
            text: "say \"hi\"\\\n",
            ..CUE
        };
        assert_eq!(
            FileFormat::Jsonl.cue(1, &cue, false, false),
            "{\"text\":\"say \\\"hi\\\"\\\\\\n\",\"start\":3723.456,\"end\":3724.000,\
             \"running_start\":1.500,\"running_end\":2.044,\"is_final\":true}\n"
        );
    }

    #[test]
    fn txt_breaks_lines_after_sentences_and_caption_lines() {
        let word = |text| FileCue { text, ..CUE };
        assert_eq!(
            FileFormat::Txt.cue(1, &word("hello"), false, false),
            "hello "
        );
        assert_eq!(
            FileFormat::Txt.cue(2, &word("there."), false, false),
            "there.\n"
        );
        assert_eq!(
            FileFormat::Txt.cue(3, &word("a line"), true, false),
            "a line\n"
        );
    }

    #[test]
    fn each_format_says_who_speaks() {
        let said = |text, speaker| FileCue {
            text,
            speaker: Some(speaker),
            ..CUE
        };
        let alice = said("hello", "Alice");
        let bob = said("hi", "Bob <2>");
        assert_eq!(FileFormat::Txt.cue(1, &alice, false, true), "Alice: hello ");
        assert_eq!(FileFormat::Txt.cue(2, &alice, false, false), "hello ");
        assert_eq!(
            FileFormat::Srt.cue(3, &bob, true, true),
            "3\n01:02:03,456 --> 01:02:04,000\nBob <2>: hi\n\n"
        );
        assert_eq!(
            FileFormat::Vtt.cue(1, &bob, true, false),
            "01:02:03.456 --> 01:02:04.000\n<v Bob &lt;2&gt;>hi\n\n"
        );
        assert!(FileFormat::Jsonl
            .cue(1, &alice, false, false)
            .ends_with(",\"is_final\":true,\"speaker\":\"Alice\"}\n"));
    }
}
