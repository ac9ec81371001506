// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The one voice activity detector of the core (earshot): every sample of
//! the input is heard once, and each 16 ms frame's voice score goes to
//! whoever judges by it (the stall watchdog, the speech-only gate), each
//! with its own rule.

/// earshot's frame: 16 ms at 16 kHz.
pub const VAD_FRAME: usize = 256;

pub struct Voice {
    detector: Box<earshot::Detector>,
    /// Audio waiting for a whole frame.
    pending: Vec<f32>,
}

/// One frame heard: its voice score, and where in the audio just heard it
/// ended (samples from that audio's start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    pub score: f32,
    pub ends_at: usize,
}

impl Voice {
    pub fn new() -> Voice {
        Voice {
            detector: earshot::Detector::default_boxed(),
            pending: Vec::with_capacity(VAD_FRAME),
        }
    }

    /// The frames that `samples` completes (the rest waits for more).
    pub fn hear(&mut self, samples: &[f32]) -> Vec<Frame> {
        let mut frames = Vec::with_capacity(samples.len() / VAD_FRAME + 1);
        let mut used = 0;
        while used < samples.len() {
            let take = (VAD_FRAME - self.pending.len()).min(samples.len() - used);
            self.pending.extend_from_slice(&samples[used..used + take]);
            used += take;
            if self.pending.len() == VAD_FRAME {
                frames.push(Frame {
                    score: self.detector.predict_f32(&self.pending),
                    ends_at: used,
                });
                self.pending.clear();
            }
        }
        frames
    }

    /// A new stretch of audio (after a flush or a hole): nothing carries
    /// over.
    pub fn restart(&mut self) {
        self.detector.reset();
        self.pending.clear();
    }
}
