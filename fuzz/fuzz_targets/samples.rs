// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Bytes cut anywhere convert to the same finite samples as in one piece.

#![no_main]

use gstvoxtralrt::voxtral::{SampleConverter, SampleFormat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, bytes)) = data.split_first() else {
        return;
    };
    let format = if head & 1 == 0 {
        SampleFormat::S16le
    } else {
        SampleFormat::F32le
    };
    let mut whole = Vec::new();
    let converted = SampleConverter::new(format).convert(bytes, &mut whole);
    assert_eq!(converted.samples, bytes.len() / format.bytes_per_sample());
    // The engine refuses non-finite samples; S16 maps into [-1, 1).
    assert!(whole.iter().all(|v| v.is_finite()));
    if format == SampleFormat::S16le {
        assert!(whole.iter().all(|v| (-1.0..1.0).contains(v)));
    }

    // The same bytes in pieces of a size taken from the head byte.
    let piece = usize::from(head >> 1).max(1);
    let mut converter = SampleConverter::new(format);
    let mut pieces = Vec::new();
    let mut sanitized = 0;
    for chunk in bytes.chunks(piece) {
        sanitized += converter.convert(chunk, &mut pieces).sanitized;
    }
    assert_eq!(sanitized, converted.sanitized);
    assert_eq!(pieces.len(), whole.len());
    assert!(pieces.iter().zip(&whole).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(converter.pending_bytes(), bytes.len() % format.bytes_per_sample());
});
