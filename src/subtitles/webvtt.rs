// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! WebVTT (`.vtt`): a `WEBVTT` header, then cues with `HH:MM:SS.mmm`
//! times; the speaker in a voice span on every cue.

use super::srt::clock;
use super::{Cue, Format};

#[derive(Debug, Default)]
pub struct WebVtt;

impl Format for WebVtt {
    fn header(&self) -> String {
        "WEBVTT\n\n".to_owned()
    }

    fn cue(&mut self, cue: &Cue) -> String {
        let voice = cue
            .speaker
            .as_deref()
            .map_or_else(String::new, |s| format!("<v {}>", escape(s)));
        let lines: Vec<String> = cue.lines.iter().map(|l| escape(l)).collect();
        format!(
            "{} --> {}\n{voice}{}\n\n",
            clock(cue.start_ns, '.'),
            clock(cue.end_ns, '.'),
            lines.join("\n")
        )
    }

    fn tail(&self) -> String {
        String::new()
    }
}

/// WebVTT reserves `&`, `<` and `>` in cue text (so `-->` cannot appear).
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vtt_has_a_header_dot_milliseconds_and_escaped_text() {
        let mut vtt = WebVtt;
        assert_eq!(vtt.header(), "WEBVTT\n\n");
        let cue = Cue {
            lines: vec!["fish & chips".into(), "a --> b".into()],
            start_ns: 3_723_456_000_000,
            end_ns: 3_724_000_000_000,
            speaker: Some("Bob <2>".into()),
        };
        assert_eq!(
            vtt.cue(&cue),
            "01:02:03.456 --> 01:02:04.000\n<v Bob &lt;2&gt;>fish &amp; chips\na --&gt; b\n\n"
        );
    }
}
