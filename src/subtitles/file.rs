// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A transcript file as it is written: records (txt, jsonl) appended one
//! write each; subtitle cues (srt, vtt, scc, ttml, ebu-tt-d) each written
//! with the format's tail in one write at the end of the cues so far, so
//! that a file cut at any moment (a killed process) ends with whole cues
//! and its tail.

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::records::{Record, RecordKind, Records};
use super::scc::{Scc, SccOptions};
use super::srt::Srt;
use super::ttml::{Profile, Ttml};
use super::webvtt::WebVtt;
use super::writes::{CueWriter, Tail, WriteAt};
use super::{Counts, Cue, Format, Style};
use crate::transcript::Word;

/// The `format` properties' values (the sink's all, the encoder's auto
/// and the subtitle formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileChoice {
    /// From the location's extension (the sink), from downstream's caps
    /// (the encoder).
    #[default]
    Auto,
    Txt,
    Srt,
    Vtt,
    Jsonl,
    Scc,
    /// IMSC 1.1 Text.
    Ttml,
    EbuTtD,
}

impl FileChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            FileChoice::Auto => "auto",
            FileChoice::Txt => "txt",
            FileChoice::Srt => "srt",
            FileChoice::Vtt => "vtt",
            FileChoice::Jsonl => "jsonl",
            FileChoice::Scc => "scc",
            FileChoice::Ttml => "ttml",
            FileChoice::EbuTtD => "ebu-tt-d",
        }
    }
}

impl fmt::Display for FileChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a transcript file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Records(RecordKind),
    Srt,
    Vtt,
    Scc,
    Ttml(Profile),
}

/// What a format needs besides the cues.
#[derive(Debug, Clone, Default)]
pub struct FileOptions {
    /// The text's language (TTML's `xml:lang`; none: undetermined).
    pub language: Option<String>,
    pub scc: SccOptions,
}

impl FileKind {
    /// The kind `choice` names, or (auto) the one of `path`'s extension:
    /// `.srt`, `.vtt`, `.scc`, `.ttml` (IMSC 1.1 Text; `.ebu.ttml`:
    /// EBU-TT-D), `.jsonl` or `.json`, else plain text.
    pub fn of(choice: FileChoice, path: &Path) -> FileKind {
        let by_extension = || match path.extension().and_then(|e| e.to_str()) {
            Some("srt") => FileKind::Srt,
            Some("vtt") => FileKind::Vtt,
            Some("scc") => FileKind::Scc,
            Some("ttml") if path.to_string_lossy().ends_with(".ebu.ttml") => {
                FileKind::Ttml(Profile::EbuTtD)
            }
            Some("ttml") => FileKind::Ttml(Profile::Imsc11Text),
            Some("jsonl") | Some("json") => FileKind::Records(RecordKind::Jsonl),
            _ => FileKind::Records(RecordKind::Txt),
        };
        match choice {
            FileChoice::Auto => by_extension(),
            FileChoice::Txt => FileKind::Records(RecordKind::Txt),
            FileChoice::Srt => FileKind::Srt,
            FileChoice::Vtt => FileKind::Vtt,
            FileChoice::Jsonl => FileKind::Records(RecordKind::Jsonl),
            FileChoice::Scc => FileKind::Scc,
            FileChoice::Ttml => FileKind::Ttml(Profile::Imsc11Text),
            FileChoice::EbuTtD => FileKind::Ttml(Profile::EbuTtD),
        }
    }

    /// The subtitle format of this kind (none: records).
    pub fn format(self, options: &FileOptions) -> Option<Box<dyn Format>> {
        let language = options.language.as_deref().unwrap_or_default();
        match self {
            FileKind::Records(_) => None,
            FileKind::Srt => Some(Box::new(Srt::default())),
            FileKind::Vtt => Some(Box::new(WebVtt)),
            FileKind::Scc => Some(Box::new(Scc::new(options.scc))),
            FileKind::Ttml(profile) => Some(Box::new(Ttml::new(profile, language))),
        }
    }

    /// The style as this format can show it: SCC's rows hold 32 columns
    /// (CEA-608).
    pub fn fit(self, style: Style) -> Style {
        match self {
            FileKind::Scc => style.with_line_limit(32),
            _ => style,
        }
    }
}

enum Writer {
    Records(Records),
    Cues(Box<CueWriter>),
}

/// A transcript file, written as the transcript comes.
pub struct TranscriptFile {
    file: File,
    path: PathBuf,
    writer: Writer,
}

impl TranscriptFile {
    /// Creates the file at `path` with its header; cues made of words
    /// follow `style` (as the format can show it).
    pub fn create(
        path: &Path,
        kind: FileKind,
        style: Style,
        options: &FileOptions,
    ) -> io::Result<TranscriptFile> {
        let file = File::create(path)?;
        let style = kind.fit(style);
        let writer = match kind.format(options) {
            None => Writer::Records(Records::new(match kind {
                FileKind::Records(kind) => kind,
                _ => unreachable!("subtitle formats have a Format"),
            })),
            Some(format) => {
                let (cues, header) = CueWriter::new(format, style, Tail::AfterEachCue);
                write_at(&file, &header)?;
                Writer::Cues(Box::new(cues))
            }
        };
        Ok(TranscriptFile {
            file,
            path: path.to_owned(),
            writer,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A word or a line of the transcript. `styled`: the transcript gives
    /// cues already (lines, a line feed between them), written as they
    /// are; else words, made cues of by the style.
    pub fn take(&mut self, record: &Record<'_>, styled: bool) -> io::Result<()> {
        match &mut self.writer {
            Writer::Records(records) => {
                let text = records.next(record, styled);
                self.file.write_all(text.as_bytes())
            }
            Writer::Cues(cues) if styled => {
                let cue = Cue {
                    lines: record.text.lines().map(str::to_owned).collect(),
                    start_ns: record.start,
                    end_ns: record.end,
                    speaker: record.speaker.map(str::to_owned),
                };
                write_at(&self.file, &cues.cue(&cue))
            }
            Writer::Cues(cues) => {
                let mut word = Word::new(record.text, record.start, record.end);
                word.speaker = record.speaker.map(str::to_owned);
                write_all_at(&self.file, &cues.push(word))
            }
        }
    }

    /// Nothing is said before `t` (stream time): the cues that decides.
    pub fn silence_until(&mut self, t: u64) -> io::Result<()> {
        if let Writer::Cues(cues) = &mut self.writer {
            write_all_at(&self.file, &cues.silence_until(t))?;
        }
        Ok(())
    }

    /// The end of the transcript (or a flush): what is held is written,
    /// the last cue ending at `until` at the latest (stream time).
    pub fn finish(&mut self, until: Option<u64>) -> io::Result<()> {
        if let Writer::Cues(cues) = &mut self.writer {
            write_all_at(&self.file, &cues.finish(until))?;
        }
        Ok(())
    }

    /// What the cues made of words were like, and the characters the
    /// format could not carry (subtitle formats).
    pub fn counts(&self) -> Option<Counts> {
        match &self.writer {
            Writer::Cues(cues) => Some(cues.counts()),
            Writer::Records(_) => None,
        }
    }
}

fn write_at(file: &File, write: &WriteAt) -> io::Result<()> {
    file.write_all_at(&write.bytes, write.offset)
}

fn write_all_at(file: &File, writes: &[WriteAt]) -> io::Result<()> {
    writes.iter().try_for_each(|w| write_at(file, w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subtitles::StyleName;

    const MS: u64 = 1_000_000;

    fn record(text: &str, start_ms: u64, end_ms: u64) -> Record<'_> {
        Record {
            text,
            start: start_ms * MS,
            end: end_ms * MS,
            running_start: start_ms * MS,
            running_end: end_ms * MS,
            speaker: None,
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("voxtralrt-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn the_format_comes_from_the_choice_or_the_extension_and_unknown_ones_are_named() {
        let of = |choice, path| FileKind::of(choice, Path::new(path));
        assert_eq!(of(FileChoice::Auto, "a.srt"), FileKind::Srt);
        assert_eq!(of(FileChoice::Auto, "a.vtt"), FileKind::Vtt);
        assert_eq!(
            of(FileChoice::Auto, "a.json"),
            FileKind::Records(RecordKind::Jsonl)
        );
        assert_eq!(
            of(FileChoice::Auto, "a.log"),
            FileKind::Records(RecordKind::Txt)
        );
        assert_eq!(of(FileChoice::Srt, "a.txt"), FileKind::Srt);
        assert_eq!(of(FileChoice::Auto, "a.scc"), FileKind::Scc);
        assert_eq!(
            of(FileChoice::Auto, "a.ttml"),
            FileKind::Ttml(Profile::Imsc11Text)
        );
        assert_eq!(
            of(FileChoice::Auto, "a.ebu.ttml"),
            FileKind::Ttml(Profile::EbuTtD)
        );
        assert_eq!(
            of(FileChoice::EbuTtD, "a.xml"),
            FileKind::Ttml(Profile::EbuTtD)
        );
    }

    #[test]
    fn words_become_styled_cues_in_an_srt_file() {
        let path = scratch("words.srt");
        let style = Style::new(StyleName::Netflix, None, 32);
        let options = FileOptions::default();
        let mut file = TranscriptFile::create(&path, FileKind::Srt, style, &options).unwrap();
        for (i, w) in "Good evening and welcome.".split(' ').enumerate() {
            let at = i as u64 * 300;
            file.take(&record(w, at, at + 250), false).unwrap();
        }
        // Held until its end is decided.
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        file.silence_until(5_000 * MS).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "1\n00:00:00,000 --> 00:00:01,250\nGood evening and welcome.\n\n"
        );
        assert_eq!(file.counts().unwrap().cues, 1);
    }

    #[test]
    fn styled_cues_are_written_as_they_are_and_records_one_per_word() {
        let path = scratch("lines.vtt");
        let style = Style::new(StyleName::Broadcast, None, 32);
        let options = FileOptions::default();
        let mut file =
            TranscriptFile::create(&path, FileKind::Vtt, style.clone(), &options).unwrap();
        file.take(&record("one line\nand another", 0, 1_000), true)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.000\none line\nand another\n\n"
        );
        let path = scratch("words.jsonl");
        let kind = FileKind::Records(RecordKind::Jsonl);
        let mut file = TranscriptFile::create(&path, kind, style, &options).unwrap();
        file.take(&record("one", 0, 100), false).unwrap();
        file.take(&record("two", 100, 200), false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
    }
}
