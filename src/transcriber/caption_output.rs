// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The transcriber's caption output: the encoder and packer on the frame
//! grid, and what captions could not carry.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::caption::{self, Encoder, Losses, Packer};
use crate::core::report::Cause;

use super::caps::caption_format;
use super::output::{Kind, SrcOutput};

/// What captions could not carry, for `stats`: totals over the element's
/// life.
#[derive(Debug, Default)]
pub(super) struct CaptionLosses {
    cea608_replaced: AtomicU64,
    cea708_replaced: AtomicU64,
    cea608_dropped_words: AtomicU64,
}

impl CaptionLosses {
    pub(super) fn add(&self, losses: &Losses) {
        self.cea608_replaced
            .fetch_add(losses.cea608_replaced, Ordering::Relaxed);
        self.cea708_replaced
            .fetch_add(losses.cea708_replaced, Ordering::Relaxed);
        self.cea608_dropped_words
            .fetch_add(losses.cea608_dropped_words, Ordering::Relaxed);
    }

    pub(super) fn add_to(&self, stats: &mut gst::Structure) {
        stats.set(
            "caption-chars-replaced-608",
            self.cea608_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-chars-replaced-708",
            self.cea708_replaced.load(Ordering::Relaxed),
        );
        stats.set(
            "caption-words-dropped",
            self.cea608_dropped_words.load(Ordering::Relaxed),
        );
    }
}

/// Closed captions on the frame grid.
pub(super) struct Captions {
    pub(super) encoder: Encoder,
    pub(super) packer: Packer,
    /// Losses of this encoder already counted.
    pub(super) counted: Losses,
}

impl SrcOutput {
    /// Sets the output up for `caps` (fixed, from our template). Captions
    /// already queued go on in the new format and frame rate, on a new
    /// grid from where the next frame would start.
    pub(super) fn set_kind(&mut self, caps: &gst::Caps) {
        let Some((format, framerate)) = caption_format(caps) else {
            self.finish_captions();
            self.kind = Kind::Text;
            return;
        };
        let packer = match Packer::new(format, framerate, self.captions.channel.into()) {
            Ok(packer) => packer,
            Err(e) => unreachable!("the offered caps only have what the formats take: {e}"),
        };
        match &mut self.kind {
            Kind::Captions(captions) => {
                captions.encoder.regrid(framerate);
                captions.packer = packer;
            }
            Kind::Text => {
                let origin = self.position.unwrap_or(self.segment_start);
                self.kind = Kind::Captions(Box::new(Captions {
                    encoder: Encoder::new(self.captions.config(framerate), origin.nseconds()),
                    packer,
                    counted: Losses::default(),
                }))
            }
        }
    }

    /// Sends every caption frame that starts before `t`.
    pub(super) fn frames_until(
        &mut self,
        t: gst::ClockTime,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        self.check_reconfigure();
        let Kind::Captions(captions) = &mut self.kind else {
            return Ok(gst::FlowSuccess::Ok);
        };
        let frames = captions.encoder.frames_until(t.nseconds());
        self.push_frames(frames)
    }

    /// Sends the frames that empty the caption queue (at the end of a
    /// segment or stream); captions stop after them.
    pub(super) fn finish_captions(&mut self) {
        if let Kind::Captions(captions) = &mut self.kind {
            let frames = captions.encoder.drain();
            let _ = self.push_frames(frames);
        }
    }

    pub(super) fn push_frames(
        &mut self,
        frames: Vec<caption::Frame>,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut result = Ok(gst::FlowSuccess::Ok);
        for frame in frames {
            let Kind::Captions(captions) = &mut self.kind else {
                break;
            };
            let (pts, duration) = (frame.pts, frame.duration);
            let data = captions.packer.pack(frame);
            result = self.push_buffer(
                data,
                gst::ClockTime::from_nseconds(pts),
                gst::ClockTime::from_nseconds(duration),
            );
            if result.is_err() {
                break;
            }
        }
        self.account_caption_losses();
        result
    }

    /// Adds what the encoder could not carry to the stats, and warns once
    /// per stream when text was replaced or dropped.
    pub(super) fn account_caption_losses(&mut self) {
        let Kind::Captions(captions) = &mut self.kind else {
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
        self.caption_losses.add(&new);
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

    /// A new segment or a flush: captions start afresh (a clear screen, a
    /// new grid from the segment start, in the format negotiated).
    pub(super) fn restart_captions(&mut self) {
        if let Kind::Captions(captions) = &mut self.kind {
            let framerate = captions.packer.framerate();
            let format = captions.packer.format();
            captions.encoder = Encoder::new(
                self.captions.config(framerate),
                self.segment_start.nseconds(),
            );
            captions.packer = Packer::new(format, framerate, self.captions.channel.into())
                .expect("worked before");
            captions.counted = Losses::default();
        }
    }
}
