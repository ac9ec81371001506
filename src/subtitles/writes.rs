// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A subtitle file's bytes as its words or cues come, as writes at byte
//! offsets: the header first, then each cue where the cues so far end.
//!
//! Where the file can be rewritten (a file on disk, `filesink`), the
//! format's tail follows the header and each cue in the same write, and the
//! next cue is written over it (line feeds fill up to the old end when the
//! new text is shorter), so a file cut after any write is valid: whole
//! cues and their tail. Where it cannot (a pipe), the tail is written once,
//! at the end. The sink's transcript file and `voxtralrtsubenc` both write
//! through this.

use super::{Counts, Cue, CueBuilder, Format, Style};
use crate::transcript::Word;

/// Bytes to write at `offset` of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteAt {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// Where the format's tail goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// After the header and after each cue, written over by the next: the
    /// file is valid whenever it is cut.
    AfterEachCue,
    /// Once, at the end (the file cannot be rewritten).
    AtTheEnd,
}

/// A subtitle file's writes, from words (cues of a style) or from cues.
pub struct CueWriter {
    format: Box<dyn Format>,
    builder: CueBuilder,
    tail: Tail,
    /// Where the next cue goes: the end of the header and cues so far.
    body_end: u64,
    /// The file's length.
    len: u64,
    /// The tail went out (`Tail::AtTheEnd`).
    ended: bool,
}

impl CueWriter {
    /// A file of `format` whose cues made of words follow `style`; with its
    /// first write (the header, and the tail after it if it is rewritten).
    pub fn new(format: Box<dyn Format>, style: Style, tail: Tail) -> (CueWriter, WriteAt) {
        let header = format.header();
        let mut bytes = header.clone().into_bytes();
        if tail == Tail::AfterEachCue {
            bytes.extend(format.tail().into_bytes());
        }
        let writer = CueWriter {
            format,
            builder: CueBuilder::new(style),
            tail,
            body_end: header.len() as u64,
            len: bytes.len() as u64,
            ended: false,
        };
        (writer, WriteAt { offset: 0, bytes })
    }

    /// The next word, in time order: the writes of the cues it decides.
    pub fn push(&mut self, word: Word) -> Vec<WriteAt> {
        let cues = self.builder.push(word);
        self.write_all(&cues)
    }

    /// No word starts before `t`: the writes of the cues that decides.
    pub fn silence_until(&mut self, t: u64) -> Vec<WriteAt> {
        let cues = self.builder.silence_until(t);
        self.write_all(&cues)
    }

    /// Everything held goes out, the last cue ending at `until` at the
    /// latest; the next word starts afresh.
    pub fn finish(&mut self, until: Option<u64>) -> Vec<WriteAt> {
        let cues = self.builder.finish(until);
        self.builder.reset();
        self.write_all(&cues)
    }

    /// The end of the file: the tail, where it was not written after each
    /// cue (once).
    pub fn end(&mut self) -> Option<WriteAt> {
        if self.tail == Tail::AfterEachCue || self.ended {
            return None;
        }
        self.ended = true;
        let bytes = self.format.tail().into_bytes();
        (!bytes.is_empty()).then_some(WriteAt {
            offset: self.body_end,
            bytes,
        })
    }

    /// Cues made of words from now on follow `style`.
    pub fn set_style(&mut self, style: Style) {
        self.builder.set_style(style);
    }

    pub fn style(&self) -> &Style {
        self.builder.style()
    }

    /// What the cues made of words were like, and the characters the
    /// format could not carry.
    pub fn counts(&self) -> Counts {
        Counts {
            chars_replaced: self.format.chars_replaced(),
            ..self.builder.counts()
        }
    }

    fn write_all(&mut self, cues: &[Cue]) -> Vec<WriteAt> {
        cues.iter().map(|cue| self.cue(cue)).collect()
    }

    /// The write of `cue` (a cue made already), and the tail after it in
    /// the same write where the tail was.
    pub fn cue(&mut self, cue: &Cue) -> WriteAt {
        let mut bytes = self.format.cue(cue).into_bytes();
        let cue_len = bytes.len() as u64;
        if self.tail == Tail::AfterEachCue {
            bytes.extend(self.format.tail().into_bytes());
            // Nothing of a longer old tail is left after the new one.
            let end = self.body_end + bytes.len() as u64;
            if end < self.len {
                bytes.resize(bytes.len() + (self.len - end) as usize, b'\n');
            }
        }
        let write = WriteAt {
            offset: self.body_end,
            bytes,
        };
        self.len = self.len.max(self.body_end + write.bytes.len() as u64);
        self.body_end += cue_len;
        write
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subtitles::StyleName;

    /// A format whose tail changes length, as SCC's and TTML's may.
    struct Growing(usize);

    impl Format for Growing {
        fn header(&self) -> String {
            "<doc>\n".into()
        }
        fn cue(&mut self, cue: &Cue) -> String {
            self.0 += 1;
            format!("<p>{}</p>\n", cue.text())
        }
        fn tail(&self) -> String {
            // Long after the first cue, short after the second.
            if self.0 == 1 {
                "<!-- one cue so far -->\n</doc>\n".into()
            } else {
                "</doc>\n".into()
            }
        }
    }

    fn cue(text: &str) -> Cue {
        Cue {
            lines: vec![text.into()],
            start_ns: 0,
            end_ns: 1,
            speaker: None,
        }
    }

    fn style() -> Style {
        Style::new(StyleName::Broadcast, None, 32)
    }

    /// The file after `writes`, as a file system leaves it.
    fn apply(file: &mut Vec<u8>, write: &WriteAt) {
        let end = write.offset as usize + write.bytes.len();
        if file.len() < end {
            file.resize(end, 0);
        }
        file[write.offset as usize..end].copy_from_slice(&write.bytes);
    }

    #[test]
    fn each_cue_rewrites_the_tail_and_no_old_tail_is_left_after_it() {
        let (mut writer, first) = CueWriter::new(Box::new(Growing(0)), style(), Tail::AfterEachCue);
        assert_eq!(first.bytes, b"<doc>\n</doc>\n");
        let mut file = Vec::new();
        apply(&mut file, &first);
        apply(&mut file, &writer.cue(&cue("a")));
        assert_eq!(file, b"<doc>\n<p>a</p>\n<!-- one cue so far -->\n</doc>\n");
        let second = writer.cue(&cue("b"));
        assert_eq!(second.offset, 15, "where the old tail began");
        apply(&mut file, &second);
        let text = String::from_utf8(file).unwrap();
        let whole = "<doc>\n<p>a</p>\n<p>b</p>\n</doc>\n";
        assert!(text.starts_with(whole), "{text:?}");
        assert!(text[whole.len()..].chars().all(|c| c == '\n'), "{text:?}");
        assert_eq!(writer.end(), None, "the tail is there already");
    }

    #[test]
    fn a_file_that_cannot_be_rewritten_gets_its_tail_once_at_the_end() {
        let (mut writer, first) = CueWriter::new(Box::new(Growing(0)), style(), Tail::AtTheEnd);
        assert_eq!(first.bytes, b"<doc>\n");
        let writes = [writer.cue(&cue("a")), writer.cue(&cue("b"))];
        assert_eq!((writes[0].offset, writes[1].offset), (6, 15));
        let last = writer.end().unwrap();
        assert_eq!((last.offset, last.bytes.as_slice()), (24, &b"</doc>\n"[..]));
        assert_eq!(writer.end(), None, "once");
        let mut stream = first.bytes;
        for w in writes.iter().chain([&last]) {
            assert_eq!(
                w.offset as usize,
                stream.len(),
                "each write follows the last"
            );
            stream.extend(&w.bytes);
        }
        assert_eq!(stream, b"<doc>\n<p>a</p>\n<p>b</p>\n</doc>\n");
    }

    #[test]
    fn words_become_cues_of_the_style_once_their_end_is_decided() {
        let netflix = Style::new(StyleName::Netflix, None, 32);
        let (mut writer, _) = CueWriter::new(Box::new(Growing(0)), netflix, Tail::AfterEachCue);
        let ms = 1_000_000;
        assert!(writer.push(Word::new("Hello.", 0, 400 * ms)).is_empty());
        assert!(
            writer.silence_until(500 * ms).is_empty(),
            "held: its end is not decided"
        );
        let writes = writer.silence_until(5_000 * ms);
        assert_eq!(writes.len(), 1);
        assert!(String::from_utf8_lossy(&writes[0].bytes).starts_with("<p>Hello.</p>\n"));
        assert_eq!(writer.counts().cues, 1);
    }
}
