// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One stream's state, and what of it goes downstream: the element works
//! out under its state lock what to send (byte segments, file bytes,
//! GAPs) and sends it after the lock is released.

use crate::subtitles::file::FileKind;
use crate::subtitles::stream::SubtitleStream;
use crate::subtitles::writes::WriteAt;

/// One stream's state, from the first event after READY to the next flush
/// or stop.
pub(super) struct State {
    /// The format written, once negotiated (at the first caps, or the first
    /// data without them).
    pub kind: Option<FileKind>,
    /// Negotiation failed (and said so): data is refused.
    pub refused: bool,
    /// The file: made at the first text, silence or end, once downstream
    /// says whether it can seek.
    pub stream: Option<SubtitleStream>,
    /// The language of a tag that came before the file was made.
    pub tag_language: Option<String>,
    pub speaker: Option<String>,
    pub segment: gst::FormattedSegment<gst::ClockTime>,
    /// Downstream's byte position (none: no byte segment yet).
    position: Option<u64>,
    /// The furthest the input reached (stream time): the last cue ends
    /// there at the latest.
    pub seen_until: Option<u64>,
    /// Buffers whose text was not UTF-8.
    pub invalid_utf8: u64,
}

/// What goes downstream, in order.
#[derive(Debug)]
pub(super) enum Out {
    Buffer(gst::Buffer),
    Event(gst::Event),
}

impl State {
    pub(super) fn new(kind: Option<FileKind>) -> State {
        State {
            kind,
            refused: false,
            stream: None,
            tag_language: None,
            speaker: None,
            segment: gst::FormattedSegment::new(),
            position: None,
            seen_until: None,
            invalid_utf8: 0,
        }
    }

    pub(super) fn stream_time(&self, t: gst::ClockTime) -> Option<u64> {
        self.segment.to_stream_time(t).map(|t| t.nseconds())
    }

    pub(super) fn reach(&mut self, t: u64) {
        self.seen_until = Some(self.seen_until.map_or(t, |s| s.max(t)));
    }

    /// A byte segment from the start, if none went out yet: it goes before
    /// the tags that follow.
    pub(super) fn first_segment(&mut self) -> Option<Out> {
        self.position.is_none().then(|| self.byte_segment(0))
    }

    /// `writes` as buffers, each after a byte segment where it does not
    /// follow what went before (`filesink` seeks there).
    pub(super) fn outgoing(&mut self, writes: Vec<WriteAt>) -> Vec<Out> {
        let mut out = Vec::new();
        for write in writes {
            if self.position != Some(write.offset) {
                out.push(self.byte_segment(write.offset));
            }
            let end = write.offset + write.bytes.len() as u64;
            let mut buffer = gst::Buffer::from_mut_slice(write.bytes);
            {
                let buffer = buffer.get_mut().expect("new buffer");
                buffer.set_offset(write.offset);
                buffer.set_offset_end(end);
            }
            self.position = Some(end);
            out.push(Out::Buffer(buffer));
        }
        out
    }

    fn byte_segment(&mut self, offset: u64) -> Out {
        let mut segment = gst::FormattedSegment::<gst::format::Bytes>::new();
        segment.set_start(gst::format::Bytes::from_u64(offset));
        self.position = Some(offset);
        Out::Event(gst::event::Segment::new(&segment))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(offset: u64, bytes: &str) -> WriteAt {
        WriteAt {
            offset,
            bytes: bytes.as_bytes().to_vec(),
        }
    }

    /// Each item: `segment@N` or the buffer's offset and size.
    fn shown(out: &[Out]) -> Vec<String> {
        out.iter()
            .map(|o| match o {
                Out::Event(e) => match e.view() {
                    gst::EventView::Segment(s) => {
                        format!("segment@{}", s.segment().start().value())
                    }
                    _ => e.type_().name().to_string(),
                },
                Out::Buffer(b) => format!("{}+{}", b.offset(), b.size()),
            })
            .collect()
    }

    #[test]
    fn a_byte_segment_goes_before_a_write_that_does_not_follow() {
        gst::init().unwrap();
        let mut state = State::new(None);
        let first = state.first_segment().into_iter().collect::<Vec<_>>();
        assert_eq!(shown(&first), ["segment@0"]);
        assert!(state.first_segment().is_none());
        let out = state.outgoing(vec![write(0, "head"), write(4, "cue"), write(4, "tail")]);
        assert_eq!(shown(&out), ["0+4", "4+3", "segment@4", "4+4"]);
    }
}
