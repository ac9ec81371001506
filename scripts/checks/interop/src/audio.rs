// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The audio the checks feed: tone bursts for the tone fixture, espeak-ng
//! speech, pushed from an appsrc or played live.

use std::sync::Arc;

use gst::prelude::*;

/// One 80 ms frame at 16 kHz: the tone fixture says "x" for each frame
/// of 1 kHz tone (tests/fixtures/README-tone.md).
pub const FRAME: usize = 1280;
pub const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

/// `total` frames of silence with a 1 kHz tone (amplitude 0.5) on
/// `frames`.
pub fn tone(total: usize, frames: &[usize]) -> Vec<f32> {
    let mut audio = vec![0.0f32; total * FRAME];
    for &f in frames {
        let frame = f * FRAME..(f + 1) * FRAME;
        for (n, x) in frame.clone().zip(&mut audio[frame]) {
            let t = n as f32 / 16_000.0;
            *x = 0.5 * (2.0 * std::f32::consts::PI * 1000.0 * t).sin();
        }
    }
    audio
}

/// The frames of bursts `(first frame, length)`.
pub fn burst_frames(bursts: &[(usize, usize)]) -> Vec<usize> {
    bursts.iter().flat_map(|&(f, n)| f..f + n).collect()
}

/// Pushes 16 kHz samples into appsrc `src` in 100 ms buffers stamped from
/// 0, then ends the stream.
pub fn push_all(src: &gst::Element, samples: &[f32]) {
    for (k, piece) in samples.chunks(1600).enumerate() {
        let bytes: Vec<u8> = piece.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut b = gst::Buffer::from_mut_slice(bytes);
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
}

/// A few sentences said by espeak-ng, as 16-bit mono samples and their
/// rate (espeak-ng writes 22050 Hz).
pub fn espeak(text: &str) -> Result<(Vec<i16>, u32), String> {
    let wav = std::env::temp_dir().join(format!("voxtralrt-interop-{}.wav", std::process::id()));
    let spoke = std::process::Command::new("espeak-ng")
        .args(["-s", "150", "-w"])
        .arg(&wav)
        .arg(text)
        .status()
        .map_err(|e| format!("espeak-ng (Debian package espeak-ng): {e}"))?;
    let bytes = std::fs::read(&wav).map_err(|e| format!("{}: {e}", wav.display()));
    let _ = std::fs::remove_file(&wav);
    if !spoke.success() {
        return Err(format!("espeak-ng failed: {spoke}"));
    }
    wav_samples(&bytes?)
}

/// The samples and rate of a 16-bit mono PCM WAV file.
fn wav_samples(wav: &[u8]) -> Result<(Vec<i16>, u32), String> {
    let u32_at = |i: usize| u32::from_le_bytes(wav[i..i + 4].try_into().unwrap());
    if wav.len() < 12 || &wav[..4] != b"RIFF" || &wav[8..12] != b"WAVE" {
        return Err("not a WAV file".into());
    }
    let (mut i, mut rate) = (12, None);
    while i + 8 <= wav.len() {
        let (id, size) = (&wav[i..i + 4], u32_at(i + 4) as usize);
        let body = &wav[i + 8..(i + 8 + size).min(wav.len())];
        match id {
            b"fmt " if body.len() >= 16 => {
                let channels = u16::from_le_bytes([body[2], body[3]]);
                let bits = u16::from_le_bytes([body[14], body[15]]);
                if (channels, bits) != (1, 16) {
                    return Err(format!(
                        "{channels} channels of {bits} bits, not 16-bit mono"
                    ));
                }
                rate = Some(u32_at(i + 12));
            }
            b"data" => {
                let rate = rate.ok_or("WAV data before its format")?;
                let samples = body
                    .chunks_exact(2)
                    .map(|s| i16::from_le_bytes([s[0], s[1]]))
                    .collect();
                return Ok((samples, rate));
            }
            _ => {}
        }
        i += 8 + size + size % 2;
    }
    Err("no data in the WAV file".into())
}

/// Makes live `audiotestsrc name` (silence, F32 16 kHz, one 80 ms frame a
/// buffer) play `samples` instead, by each buffer's sample offset.
pub fn play_live(pipeline: &gst::Pipeline, name: &str, samples: Vec<f32>) {
    let samples = Arc::new(samples);
    let src = pipeline.by_name(name).expect("the audio source");
    let pad = src.static_pad("src").unwrap();
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
        if let Some(b) = info.buffer_mut() {
            let from = b.offset() as usize;
            let b = b.make_mut();
            let mut map = b.map_writable().unwrap();
            for (k, out) in map.chunks_exact_mut(4).enumerate() {
                let x = samples.get(from + k).copied().unwrap_or(0.0);
                out.copy_from_slice(&x.to_le_bytes());
            }
        }
        gst::PadProbeReturn::Ok
    });
}
