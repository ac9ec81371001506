// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The caption half of a text pad's output: the encoder and packer on the
//! frame grid, and what captions could not carry. It hands back packed
//! frames; the pad's output pushes them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::caption::{self, Encoder, Losses, Packer};
use crate::core::report::{Cause, Reporter};
use crate::core::stats::field;

use super::caps::caption_format;
use super::captions::CaptionSettings;

/// What the src pad could not carry, for `stats`: totals over the
/// element's life.
#[derive(Debug, Default)]
pub(super) struct OutputLosses {
    cea608_replaced: AtomicU64,
    cea708_replaced: AtomicU64,
    cea608_dropped_words: AtomicU64,
    not_linked: AtomicU64,
}

impl OutputLosses {
    pub(super) fn add(&self, losses: &Losses) {
        self.cea608_replaced
            .fetch_add(losses.cea608_replaced, Ordering::Relaxed);
        self.cea708_replaced
            .fetch_add(losses.cea708_replaced, Ordering::Relaxed);
        self.cea608_dropped_words
            .fetch_add(losses.cea608_dropped_words, Ordering::Relaxed);
    }

    /// A buffer went nowhere: the src pad was not linked.
    pub(super) fn add_not_linked(&self) {
        self.not_linked.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn add_to(&self, stats: &mut gst::Structure) {
        stats.set(
            "buffers-not-linked",
            self.not_linked.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-chars-replaced-608",
            self.cea608_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-chars-replaced-708",
            self.cea708_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            field::CAPTION_WORDS_DROPPED,
            self.cea608_dropped_words.load(Ordering::Relaxed),
        );
    }
}

/// Closed captions on the frame grid.
struct Captions {
    encoder: Encoder,
    packer: Packer,
    /// Losses of this encoder already counted.
    counted: Losses,
}

/// One caption frame, packed in the negotiated format.
pub(super) struct PackedFrame {
    pub(super) data: Vec<u8>,
    pub(super) pts: gst::ClockTime,
    pub(super) duration: gst::ClockTime,
}

/// What a pad outputs as captions: nothing while it outputs text.
pub(super) struct CaptionTrack {
    settings: CaptionSettings,
    captions: Option<Box<Captions>>,
    losses: Arc<OutputLosses>,
    report: Reporter,
    /// What was warned about in this stream (from STREAM_START on).
    warned_replaced: bool,
    warned_dropped: bool,
}

impl CaptionTrack {
    pub(super) fn new(
        settings: CaptionSettings,
        losses: Arc<OutputLosses>,
        report: Reporter,
    ) -> Self {
        CaptionTrack {
            settings,
            captions: None,
            losses,
            report,
            warned_replaced: false,
            warned_dropped: false,
        }
    }

    pub(super) fn settings(&self) -> &CaptionSettings {
        &self.settings
    }

    /// The pad outputs text, not captions.
    pub(super) fn is_text(&self) -> bool {
        self.captions.is_none()
    }

    /// Sets the track up for `caps` (fixed, from our template). Captions
    /// already queued go on in the new format and frame rate, on a new
    /// grid from where the next frame would start (`origin`). Text caps
    /// end the captions: their last frames are returned.
    pub(super) fn set_caps(
        &mut self,
        caps: &gst::Caps,
        origin: gst::ClockTime,
    ) -> Vec<PackedFrame> {
        let Some((format, framerate)) = caption_format(caps) else {
            let frames = self.finish();
            self.captions = None;
            return frames;
        };
        let packer = match Packer::new(format, framerate, self.settings.channel.into()) {
            Ok(packer) => packer,
            Err(e) => unreachable!("the offered caps only have what the formats take: {e}"),
        };
        match &mut self.captions {
            Some(captions) => {
                captions.encoder.regrid(framerate);
                captions.packer = packer;
            }
            None => {
                self.captions = Some(Box::new(Captions {
                    encoder: Encoder::new(self.settings.config(framerate), origin.nseconds()),
                    packer,
                    counted: Losses::default(),
                }))
            }
        }
        Vec::new()
    }

    /// A new speaker from the next word on.
    pub(super) fn speaker_change(&mut self) {
        if let Some(captions) = &mut self.captions {
            captions
                .encoder
                .speaker_change(&self.settings.speaker_prefix);
        }
    }

    /// A word from `start` to `end`.
    pub(super) fn push_cue(&mut self, text: &str, start: gst::ClockTime, end: gst::ClockTime) {
        if let Some(captions) = &mut self.captions {
            captions
                .encoder
                .push_cue(text, start.nseconds(), end.nseconds());
        }
    }

    /// Every caption frame that starts before `t`.
    pub(super) fn frames_until(&mut self, t: gst::ClockTime) -> Vec<PackedFrame> {
        let Some(captions) = &mut self.captions else {
            return Vec::new();
        };
        let frames = captions.encoder.frames_until(t.nseconds());
        self.pack(frames)
    }

    /// The frames that empty the caption queue (at the end of a segment or
    /// stream); captions stop after them.
    pub(super) fn finish(&mut self) -> Vec<PackedFrame> {
        let Some(captions) = &mut self.captions else {
            return Vec::new();
        };
        let frames = captions.encoder.drain();
        self.pack(frames)
    }

    /// The element's loss counters (this track's and its pad's).
    pub(super) fn losses(&self) -> &OutputLosses {
        &self.losses
    }

    /// A new stream: its losses are warned about afresh.
    pub(super) fn new_stream(&mut self) {
        self.warned_replaced = false;
        self.warned_dropped = false;
    }

    /// A new segment or a flush: captions start afresh (a clear screen, a
    /// new grid from the segment start, in the format negotiated).
    pub(super) fn restart(&mut self, segment_start: gst::ClockTime) {
        if let Some(captions) = &mut self.captions {
            let framerate = captions.packer.framerate();
            let format = captions.packer.format();
            captions.encoder =
                Encoder::new(self.settings.config(framerate), segment_start.nseconds());
            captions.packer = Packer::new(format, framerate, self.settings.channel.into())
                .expect("worked before");
            captions.counted = Losses::default();
        }
    }

    fn pack(&mut self, frames: Vec<caption::Frame>) -> Vec<PackedFrame> {
        let Some(captions) = &mut self.captions else {
            return Vec::new();
        };
        let packed = frames
            .into_iter()
            .map(|frame| {
                let (pts, duration) = (frame.pts, frame.duration);
                PackedFrame {
                    data: captions.packer.pack(frame),
                    pts: gst::ClockTime::from_nseconds(pts),
                    duration: gst::ClockTime::from_nseconds(duration),
                }
            })
            .collect();
        self.account_losses();
        packed
    }

    /// Adds what the encoder could not carry to the stats, and warns once
    /// per stream when text was replaced or dropped.
    fn account_losses(&mut self) {
        let Some(captions) = &mut self.captions else {
            return;
        };
        let total = captions.encoder.losses();
        let new = Losses {
            cea608_replaced: total.cea608_replaced - captions.counted.cea608_replaced,
            cea708_replaced: total.cea708_replaced - captions.counted.cea708_replaced,
            cea608_dropped_words: total.cea608_dropped_words
                - captions.counted.cea608_dropped_words,
        };
        captions.counted = total;
        if new == Losses::default() {
            return;
        }
        self.losses.add(&new);
        let carries_708 = captions.packer.format().carries_708();
        let replaced = new.cea608_replaced > 0 || (carries_708 && new.cea708_replaced > 0);
        if replaced && !std::mem::replace(&mut self.warned_replaced, true) {
            self.report.warning(
                Cause::Captions,
                "closed captions: characters that CEA-608/708 cannot show were replaced by an \
                 ASCII transliteration or '?' (counted in stats as caption-chars-replaced-608 \
                 and -708)",
            );
        }
        if new.cea608_dropped_words > 0 && !std::mem::replace(&mut self.warned_dropped, true) {
            self.report.warning(
                Cause::Captions,
                "closed captions: speech came faster than CEA-608 can carry it (2 characters a \
                 frame); the oldest words were dropped to keep the captions within 1 s of the \
                 speech (counted in stats as caption-words-dropped; CEA-708 has them all)",
            );
        }
    }
}
