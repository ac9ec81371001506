// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

fn packed(format: CcFormat, fps: Framerate) -> Vec<Vec<u8>> {
    let mut enc = at(fps, Mode::RollUp2);
    enc.push_word("hello", 0, 300 * MS);
    let mut packer = Packer::new(format, fps, Channel608::Cc1).unwrap();
    enc.frames_until(1_000 * MS)
        .into_iter()
        .map(|f| packer.pack(f))
        .collect()
}

#[test]
fn raw_608_is_one_pair_per_frame_and_s334_1a_says_field_1() {
    let raw = packed(CcFormat::Cea608Raw, Framerate::NTSC);
    assert!(raw.iter().all(|b| b.len() == 2));
    assert_eq!(strip([raw[0][0], raw[0][1]]), [0x14, 0x25]);
    let s334 = packed(CcFormat::Cea608S334_1a, Framerate::NTSC);
    for (a, b) in s334.iter().zip(&raw) {
        assert_eq!(a[0], 0x80);
        assert_eq!(&a[1..], &b[..]);
    }
}

#[test]
fn cc_data_has_a_constant_count_per_frame_with_cc1_first() {
    for (fps, count) in [
        (Framerate::NTSC, 20),
        (Framerate::new(25, 1), 24),
        (Framerate::new(60, 1), 10),
    ] {
        let frames = packed(CcFormat::Cea708CcData, fps);
        for (i, data) in frames.iter().enumerate() {
            assert_eq!(data.len(), 3 * count, "{fps:?}");
            if i % fps.frames_per_608_pair() as usize == 0 {
                // cc_valid 608 field 1 (or its padding, cc_valid 0).
                assert!(
                    matches!(data[0], 0xfc | 0xf8),
                    "{fps:?} frame {i}: {data:02x?}"
                );
            }
        }
        assert_eq!(frames[0][..3], [0xfc, 0x94, 0x25]);
        // The 708 packet starts on the word's frame (a DTVCC packet start).
        assert!(frames[0].chunks(3).any(|t| t[0] == 0xff), "{fps:?}");
    }
}

#[test]
fn cdp_wraps_the_same_cc_data_and_parses_back() {
    let frames = packed(CcFormat::Cea708Cdp, Framerate::NTSC);
    let mut parser = cdp_types::CDPParser::new();
    let mut cc1 = Vec::new();
    let mut packets = 0;
    for data in &frames {
        assert_eq!(&data[..2], &[0x96, 0x69]);
        parser.parse(data).unwrap();
        assert_eq!(
            parser.framerate().map(|f| (f.numer(), f.denom())),
            Some((30000, 1001))
        );
        if let Some(pairs) = parser.cea608() {
            cc1.extend(pairs.iter().filter_map(|p| match p {
                cea708_types::Cea608::Field1(a, b) => Some([*a, *b]),
                _ => None,
            }));
        }
        while parser.pop_packet().is_some() {
            packets += 1;
        }
    }
    let mut screen = Screen::default();
    for pair in cc1 {
        screen.feed(0, pair);
    }
    assert_eq!(screen.text(), "hello");
    assert_eq!(packets, 1);
}

#[test]
fn cdp_refuses_a_rate_it_cannot_name() {
    assert!(Packer::new(CcFormat::Cea708Cdp, Framerate::new(15, 1), Channel608::Cc1).is_err());
}
