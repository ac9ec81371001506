// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Conversion of raw audio bytes into the f32 samples the engines take.
//!
//! transcribe.cpp rejects a whole feed if one sample is NaN or infinite, so such
//! samples are replaced by silence here and counted, instead of failing.

/// The raw sample formats the elements accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleFormat {
    S16le,
    F32le,
}

impl SampleFormat {
    pub fn bytes_per_sample(self) -> usize {
        match self {
            SampleFormat::S16le => 2,
            SampleFormat::F32le => 4,
        }
    }
}

/// Turns a byte stream of one format into f32 samples. Buffers need not hold
/// whole samples: a partial sample at the end of one buffer is completed by
/// the start of the next.
#[derive(Debug, Clone)]
pub struct SampleConverter {
    format: SampleFormat,
    carry: Vec<u8>,
}

/// What one conversion produced besides the samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Converted {
    /// Samples appended to the output.
    pub samples: usize,
    /// Of those, how many were NaN or infinite and were replaced by 0.0.
    pub sanitized: usize,
}

impl SampleConverter {
    pub fn new(format: SampleFormat) -> Self {
        Self {
            format,
            carry: Vec::new(),
        }
    }

    pub fn format(&self) -> SampleFormat {
        self.format
    }

    /// Bytes of an incomplete sample held back from the last call.
    pub fn pending_bytes(&self) -> usize {
        self.carry.len()
    }

    /// Forgets a held-back partial sample (on flush or discontinuity).
    pub fn clear(&mut self) {
        self.carry.clear();
    }

    /// Appends the samples in `bytes` to `out`.
    pub fn convert(&mut self, bytes: &[u8], out: &mut Vec<f32>) -> Converted {
        let width = self.format.bytes_per_sample();
        let mut rest = bytes;
        let mut result = Converted::default();
        if !self.carry.is_empty() {
            let needed = width - self.carry.len();
            let take = needed.min(rest.len());
            self.carry.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.carry.len() < width {
                return result;
            }
            let carried = std::mem::take(&mut self.carry);
            result = self.convert_whole(&carried, out);
        }
        let whole = rest.len() - rest.len() % width;
        let more = self.convert_whole(&rest[..whole], out);
        self.carry.extend_from_slice(&rest[whole..]);
        Converted {
            samples: result.samples + more.samples,
            sanitized: result.sanitized + more.sanitized,
        }
    }

    fn convert_whole(&self, bytes: &[u8], out: &mut Vec<f32>) -> Converted {
        out.reserve(bytes.len() / self.format.bytes_per_sample());
        match self.format {
            SampleFormat::S16le => {
                out.extend(
                    bytes
                        .chunks_exact(2)
                        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0),
                );
                Converted {
                    samples: bytes.len() / 2,
                    sanitized: 0,
                }
            }
            SampleFormat::F32le => {
                let mut sanitized = 0;
                out.extend(bytes.chunks_exact(4).map(|b| {
                    let v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    if v.is_finite() {
                        v
                    } else {
                        sanitized += 1;
                        0.0
                    }
                }));
                Converted {
                    samples: bytes.len() / 4,
                    sanitized,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s16_bytes(values: &[i16]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn f32_bytes(values: &[f32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    #[test]
    fn s16_full_scale_maps_to_unit_range() {
        let mut conv = SampleConverter::new(SampleFormat::S16le);
        let mut out = Vec::new();
        conv.convert(&s16_bytes(&[i16::MIN, 0, 16384, i16::MAX]), &mut out);
        assert_eq!(out, vec![-1.0, 0.0, 0.5, 32767.0 / 32768.0]);
    }

    #[test]
    fn s16_and_f32_of_the_same_signal_agree() {
        let ints: Vec<i16> = (0..100).map(|i| (i * 300 - 15000) as i16).collect();
        let floats: Vec<f32> = ints.iter().map(|&v| f32::from(v) / 32768.0).collect();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        SampleConverter::new(SampleFormat::S16le).convert(&s16_bytes(&ints), &mut a);
        SampleConverter::new(SampleFormat::F32le).convert(&f32_bytes(&floats), &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn non_finite_samples_become_silence_and_are_counted() {
        let mut conv = SampleConverter::new(SampleFormat::F32le);
        let mut out = Vec::new();
        let got = conv.convert(
            &f32_bytes(&[0.25, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.5]),
            &mut out,
        );
        assert_eq!(out, vec![0.25, 0.0, 0.0, 0.0, -0.5]);
        assert_eq!(
            got,
            Converted {
                samples: 5,
                sanitized: 3
            }
        );
    }

    #[test]
    fn a_sample_split_across_buffers_is_carried() {
        let bytes = s16_bytes(&[1000, -2000, 3000]);
        let mut conv = SampleConverter::new(SampleFormat::S16le);
        let mut out = Vec::new();
        assert_eq!(conv.convert(&bytes[..3], &mut out).samples, 1);
        assert_eq!(conv.pending_bytes(), 1);
        assert_eq!(conv.convert(&bytes[3..4], &mut out).samples, 1);
        assert_eq!(conv.convert(&bytes[4..], &mut out).samples, 1);
        let mut whole = Vec::new();
        SampleConverter::new(SampleFormat::S16le).convert(&bytes, &mut whole);
        assert_eq!(out, whole);
        assert_eq!(conv.pending_bytes(), 0);
    }

    #[test]
    fn one_byte_at_a_time_gives_the_same_floats() {
        let bytes = f32_bytes(&[0.1, -0.2, f32::NAN, 0.4]);
        let mut conv = SampleConverter::new(SampleFormat::F32le);
        let mut out = Vec::new();
        let sanitized: usize = bytes
            .iter()
            .map(|b| conv.convert(std::slice::from_ref(b), &mut out).sanitized)
            .sum();
        assert_eq!(out, vec![0.1, -0.2, 0.0, 0.4]);
        assert_eq!(sanitized, 1);
    }
}
