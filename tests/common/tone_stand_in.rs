// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The tone fixture (`voxtral-rt-tone.gguf`, tests/fixtures/README-tone.md)
//! as a known function of the audio, in the engine stream's shape: what the
//! vLLM double runs in the client build, which has no engine.
//!
//! Its rule, as measured on the real fixture: token `k` is " x" when frame
//! `k + D` holds a 1 kHz tone (D the delay in frames), and it is decoded
//! once `1280 (k + D) + 1520` samples are in. Decodes come every 80 ms on
//! the engine's grid (1520 samples past the start, then every 1280), as the
//! double asks for. A tone must fill its 80 ms frames, as every tone the
//! tests send does: the fixture's rule for a frame the tone covers only in
//! part (README-tone.md, "Partial frames") is not copied.
//! tests/client_build.rs checks the stand-in against the engine.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use gstvoxtralrt::voxtral::{StreamConfig, TextUpdate, FRAME_SAMPLES, TOKEN_LOOKAHEAD_SAMPLES};

const FRAME: usize = FRAME_SAMPLES as usize;
/// A frame is tone when its 1 kHz amplitude passes this (the fixture's
/// threshold, README-tone.md: 0.048 never fires, 0.052 always does).
const LEVEL: f32 = 0.05;

pub struct ModelSpec {
    path: PathBuf,
}

impl ModelSpec {
    pub fn new(path: impl AsRef<Path>) -> ModelSpec {
        ModelSpec {
            path: path.as_ref().to_owned(),
        }
    }
}

pub struct Stream {
    config: StreamConfig,
    audio: Vec<f32>,
    /// Tokens whose text was given.
    tokens: u64,
    /// Whether a word was given (the library trims the first one's space).
    spoke: bool,
}

impl Stream {
    /// Only the tone fixture has a stand-in; the threads do not matter.
    pub fn open(spec: &ModelSpec, _threads: u32) -> Result<Stream, String> {
        if spec.path.file_name().and_then(|n| n.to_str()) != Some("voxtral-rt-tone.gguf") {
            return Err(format!(
                "{} has no stand-in without the local engine (only voxtral-rt-tone.gguf)",
                spec.path.display()
            ));
        }
        Ok(Stream {
            config: StreamConfig::default(),
            audio: Vec::new(),
            tokens: 0,
            spoke: false,
        })
    }

    pub fn begin(&mut self, config: StreamConfig) -> Result<(), String> {
        if config.decode_interval_ms != 80 {
            return Err("the stand-in decodes every 80 ms only".into());
        }
        *self = Stream {
            config,
            audio: Vec::new(),
            tokens: 0,
            spoke: false,
        };
        Ok(())
    }

    fn delay_frames(&self) -> u64 {
        u64::from(self.config.delay_ms / 80)
    }

    /// Tokens decodable once `fed` samples are in.
    fn tokens_due(&self, fed: u64) -> u64 {
        let first = self.delay_frames() * FRAME_SAMPLES + TOKEN_LOOKAHEAD_SAMPLES - FRAME_SAMPLES;
        fed.saturating_sub(first) / FRAME_SAMPLES
    }

    /// The text of the tokens up to `due`.
    fn decode_to(&mut self, due: u64) -> String {
        let mut text = String::new();
        while self.tokens < due {
            let frame = (self.tokens + self.delay_frames()) as usize;
            if is_tone(&self.audio, frame) {
                text.push_str(if self.spoke { " x" } else { "x" });
                self.spoke = true;
            }
            self.tokens += 1;
        }
        text
    }

    pub fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, String> {
        let grid = FRAME_SAMPLES;
        let phase = TOKEN_LOOKAHEAD_SAMPLES - FRAME_SAMPLES;
        let mut updates = Vec::new();
        for &sample in samples {
            self.audio.push(sample);
            let fed = self.audio.len() as u64;
            if fed > phase && (fed - phase).is_multiple_of(grid) {
                let due = self.tokens_due(fed);
                let text = self.decode_to(due);
                updates.push(TextUpdate {
                    text,
                    audio_end: fed,
                    heard_until: due * FRAME_SAMPLES,
                    is_final: false,
                    resumed_from: Vec::new(),
                });
            }
        }
        Ok(updates)
    }

    /// The rest: every frame fed (a partial one padded with silence).
    pub fn finalize(&mut self) -> Result<TextUpdate, String> {
        let fed = self.audio.len() as u64;
        let frames = fed.div_ceil(FRAME_SAMPLES);
        let text = self.decode_to(frames.saturating_sub(self.delay_frames()));
        Ok(TextUpdate {
            text,
            audio_end: fed,
            heard_until: fed,
            is_final: true,
            resumed_from: Vec::new(),
        })
    }
}

/// Whether 80 ms frame `frame` of `audio` holds the 1 kHz tone: its
/// amplitude at 1 kHz (a Goertzel filter; 80 whole periods per frame).
fn is_tone(audio: &[f32], frame: usize) -> bool {
    let start = frame * FRAME;
    if start >= audio.len() {
        return false;
    }
    let samples = &audio[start..(start + FRAME).min(audio.len())];
    let w = 2.0 * std::f32::consts::PI * 1000.0 / 16_000.0;
    let coeff = 2.0 * w.cos();
    let (mut s1, mut s2) = (0.0f32, 0.0f32);
    for &x in samples {
        let s0 = x + coeff * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    let power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
    let amplitude = 2.0 * power.max(0.0).sqrt() / FRAME as f32;
    amplitude >= LEVEL
}
