// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Timed text of any grain (a word, a caption line, a whole translation)
//! into a subtitle file of a style, as writes (`voxtralrtsubenc`).
//!
//! Each piece of text is split into words spread over its time by their
//! letters ([`super::spread_words`]), and the words become cues of the
//! style, so the cues follow the style whatever the input's grain. The
//! header goes out with the first text, silence or end, once the
//! language (a tag, or the element's own setting) is known: TTML writes
//! it in its `xml:lang`. A language learnt after the header changes the
//! reading speed of the cues not yet decided, not the header.

use super::file::{FileKind, FileOptions};
use super::writes::{CueWriter, Tail, WriteAt};
use super::{spread_words, Counts, Style, StyleName};

/// `broadcast`'s rows: CEA-608's 32 columns, as the transcriber's
/// `max-line-chars` by default.
const BROADCAST_ROW_CHARS: usize = 32;

/// A subtitle file made of timed text as it comes.
pub struct SubtitleStream {
    kind: FileKind,
    options: FileOptions,
    style: StyleName,
    /// The language was set by the element, not by the stream's tags.
    language_fixed: bool,
    tail: Tail,
    /// Once the header went out.
    writer: Option<CueWriter>,
    /// Who speaks from here on.
    speaker: Option<String>,
}

impl SubtitleStream {
    /// A file of `kind` in `style`; `options.language`, if set, is the
    /// text's language whatever the tags say.
    pub fn new(kind: FileKind, style: StyleName, options: FileOptions, tail: Tail) -> Self {
        SubtitleStream {
            kind,
            language_fixed: options.language.is_some(),
            options,
            style,
            tail,
            writer: None,
            speaker: None,
        }
    }

    /// The style for the language known now, as the format can show it.
    pub fn style(&self) -> Style {
        let style = Style::new(
            self.style,
            self.options.language.as_deref(),
            BROADCAST_ROW_CHARS,
        );
        self.kind.fit(style)
    }

    /// The language a tag names (ignored when the element set one).
    pub fn tag_language(&mut self, language: &str) {
        if self.language_fixed || language.trim().is_empty() {
            return;
        }
        self.options.language = Some(language.trim().to_owned());
        let style = self.style();
        if let Some(writer) = &mut self.writer {
            writer.set_style(style);
        }
    }

    pub fn language(&self) -> Option<&str> {
        self.options.language.as_deref()
    }

    /// Who speaks from now on (none: nobody is named).
    pub fn set_speaker(&mut self, speaker: Option<String>) {
        self.speaker = speaker;
    }

    /// `text` said from `start_ns` to `end_ns` (stream time, in order): the
    /// writes of the cues it decides (the header first, if it is due).
    pub fn text(&mut self, text: &str, start_ns: u64, end_ns: u64) -> Vec<WriteAt> {
        let words = spread_words(text, start_ns, end_ns, self.speaker.as_deref());
        let mut writes = self.start();
        let writer = self.writer.as_mut().expect("started");
        for word in words {
            writes.extend(writer.push(word));
        }
        writes
    }

    /// Nothing is said before `t`.
    pub fn silence_until(&mut self, t: u64) -> Vec<WriteAt> {
        let mut writes = self.start();
        writes.extend(self.writer.as_mut().expect("started").silence_until(t));
        writes
    }

    /// What is held goes out (a new segment), the last cue ending at
    /// `until` at the latest.
    pub fn finish(&mut self, until: Option<u64>) -> Vec<WriteAt> {
        self.writer
            .as_mut()
            .map_or_else(Vec::new, |writer| writer.finish(until))
    }

    /// The end of the stream: what is held, then the tail where it is not
    /// there yet (a file of no cue still has its header and tail).
    pub fn end(&mut self, until: Option<u64>) -> Vec<WriteAt> {
        let mut writes = self.start();
        let writer = self.writer.as_mut().expect("started");
        writes.extend(writer.finish(until));
        writes.extend(writer.end());
        writes
    }

    pub fn counts(&self) -> Counts {
        self.writer
            .as_ref()
            .map_or_else(Counts::default, |w| w.counts())
    }

    /// The header's write, the first time.
    fn start(&mut self) -> Vec<WriteAt> {
        if self.writer.is_some() {
            return Vec::new();
        }
        let format = self
            .kind
            .format(&self.options)
            .expect("a subtitle format, not records");
        let (writer, header) = CueWriter::new(format, self.style(), self.tail);
        self.writer = Some(writer);
        if header.bytes.is_empty() {
            Vec::new()
        } else {
            vec![header]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subtitles::ttml::Profile;

    const MS: u64 = 1_000_000;

    fn text_of(writes: &[WriteAt]) -> String {
        let mut file = Vec::new();
        for w in writes {
            let end = w.offset as usize + w.bytes.len();
            file.resize(file.len().max(end), 0);
            file[w.offset as usize..end].copy_from_slice(&w.bytes);
        }
        String::from_utf8(file).unwrap()
    }

    fn srt() -> SubtitleStream {
        let options = FileOptions::default();
        SubtitleStream::new(
            FileKind::Srt,
            StyleName::Netflix,
            options,
            Tail::AfterEachCue,
        )
    }

    #[test]
    fn a_line_and_its_words_one_by_one_give_the_same_cues() {
        let mut line = srt();
        let mut writes = line.text("Good evening and welcome.", 0, 1_250 * MS);
        writes.extend(line.end(Some(5_000 * MS)));
        let mut words = srt();
        let mut by_word = Vec::new();
        // The line's words where spread_words places them.
        for w in spread_words("Good evening and welcome.", 0, 1_250 * MS, None) {
            by_word.extend(words.text(&w.text, w.start_ns, w.end_ns));
        }
        by_word.extend(words.end(Some(5_000 * MS)));
        assert_eq!(text_of(&writes), text_of(&by_word));
        assert_eq!(
            text_of(&writes),
            "1\n00:00:00,000 --> 00:00:01,250\nGood evening and welcome.\n\n"
        );
    }

    #[test]
    fn a_long_translation_is_cut_into_cues_of_the_style() {
        let mut stream = srt();
        let text = "Buenas noches y bienvenidos a las últimas noticias. Esta noche miramos el \
                    tiempo, las carreteras y los mercados de todo el país.";
        let mut writes = stream.text(text, 1_000 * MS, 9_000 * MS);
        writes.extend(stream.end(Some(12_000 * MS)));
        let file = text_of(&writes);
        let cues: Vec<&str> = file.split("\n\n").filter(|c| !c.is_empty()).collect();
        assert!(cues.len() >= 2, "{file}");
        for cue in cues {
            let lines: Vec<&str> = cue.lines().skip(2).collect();
            assert!(lines.len() <= 2 && lines.iter().all(|l| l.chars().count() <= 42));
        }
    }

    #[test]
    fn the_language_of_a_tag_is_the_documents_unless_the_element_set_one() {
        let ttml = FileKind::Ttml(Profile::Imsc11Text);
        let mut tagged = SubtitleStream::new(
            ttml,
            StyleName::Netflix,
            FileOptions::default(),
            Tail::AtTheEnd,
        );
        tagged.tag_language("es");
        assert_eq!(
            tagged.style().max_speed,
            Style::new(StyleName::Netflix, Some("es"), 32).max_speed
        );
        assert!(text_of(&tagged.end(None)).contains("xml:lang=\"es\""));
        let options = FileOptions {
            language: Some("en".into()),
            ..FileOptions::default()
        };
        let mut fixed = SubtitleStream::new(ttml, StyleName::Netflix, options, Tail::AtTheEnd);
        fixed.tag_language("es");
        let file = text_of(&fixed.end(None));
        assert!(file.contains("xml:lang=\"en\"") && file.trim_end().ends_with("</tt>"));
    }

    #[test]
    fn scc_lines_hold_32_characters_and_a_speaker_change_starts_a_cue() {
        let options = FileOptions::default();
        let scc = SubtitleStream::new(FileKind::Scc, StyleName::Netflix, options, Tail::AtTheEnd);
        assert_eq!(scc.style().max_chars, 32);
        let mut srt = srt();
        srt.set_speaker(Some("Anna".into()));
        let mut writes = srt.text("Hello there", 0, 500 * MS);
        srt.set_speaker(Some("Ben".into()));
        writes.extend(srt.text("Hi", 600 * MS, 800 * MS));
        writes.extend(srt.end(None));
        let file = text_of(&writes);
        assert!(
            file.contains("Anna: Hello there\n") && file.contains("Ben: Hi\n"),
            "{file}"
        );
    }
}
