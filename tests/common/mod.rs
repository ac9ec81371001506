// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::PathBuf;

/// The tiny synthetic model: real transcribe.cpp code paths, fixed text.
pub fn tiny_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/voxtral-rt-tiny.gguf")
}

/// `seconds` of a 440 Hz sine at half scale, 16 kHz mono.
pub fn sine(seconds: f32) -> Vec<f32> {
    let n = (seconds * 16_000.0) as usize;
    (0..n)
        .map(|i| 0.5 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0).sin())
        .collect()
}

/// The same signal as S16LE bytes, quantised the way the converter reads it.
pub fn to_s16le(samples: &[f32]) -> Vec<u8> {
    samples
        .iter()
        .flat_map(|v| ((v * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes())
        .collect()
}

pub fn to_f32le(samples: &[f32]) -> Vec<u8> {
    samples.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A fresh scratch directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("voxtralrt-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A minimal valid GGUF file naming `arch`, with no tensors.
pub fn gguf_of_architecture(arch: &str) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    let key = "general.architecture";
    out.extend((key.len() as u64).to_le_bytes());
    out.extend(key.as_bytes());
    out.extend(8u32.to_le_bytes());
    out.extend((arch.len() as u64).to_le_bytes());
    out.extend(arch.as_bytes());
    out
}
