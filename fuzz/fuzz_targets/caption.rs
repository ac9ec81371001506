// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Any words at any times, in any mode, frame rate and caption format, give
//! contiguous frames of valid caption data: CEA-608 pairs with odd parity
//! and lines of at most 32 columns, cc_data of a constant size, CDPs that
//! parse back.

#![no_main]

use cea608_types::{Cea608, Cea608State};
use gstvoxtralrt::caption::format::BROADCAST_FRAMERATES;
use gstvoxtralrt::caption::{Channel608, CcFormat, Config, Encoder, Frame, Mode, Packer, Timing};
use libfuzzer_sys::fuzz_target;

const MS: u64 = 1_000_000;
const MODES: [Mode; 5] = [
    Mode::PopOn,
    Mode::PaintOn,
    Mode::RollUp2,
    Mode::RollUp3,
    Mode::RollUp4,
];

struct Checker {
    packer: Packer,
    state: Cea608State,
    column: usize,
    next_pts: Option<u64>,
    cc_data_len: Option<usize>,
    cdp: cdp_types::CDPParser,
}

impl Checker {
    fn check(&mut self, frame: Frame) {
        assert!(frame.duration > 0);
        if let Some(next) = self.next_pts {
            assert_eq!(frame.pts, next, "frames follow each other");
        }
        self.next_pts = Some(frame.pts + frame.duration);
        if let Some(pair) = frame.cea608 {
            self.check_608(pair);
        }
        let data = self.packer.pack(frame);
        match self.packer.format() {
            CcFormat::Cea608Raw => assert_eq!(data.len(), 2),
            CcFormat::Cea608S334_1a => assert_eq!(data.len(), 3),
            CcFormat::Cea708CcData => {
                assert_eq!(data.len() % 3, 0);
                assert_eq!(*self.cc_data_len.get_or_insert(data.len()), data.len());
            }
            CcFormat::Cea708Cdp => {
                self.cdp.parse(&data).expect("a CDP that parses");
                while self.cdp.pop_packet().is_some() {}
            }
        }
    }

    fn check_608(&mut self, pair: [u8; 2]) {
        let Some(cmd) = self.state.decode(pair).expect("odd parity") else {
            return;
        };
        match cmd {
            Cea608::Text(text) => {
                if text.needs_backspace {
                    self.column -= 1;
                }
                self.column += usize::from(text.char1.is_some()) + usize::from(text.char2.is_some());
                assert!(self.column <= 32, "a line of {} columns", self.column);
            }
            Cea608::Preamble(..)
            | Cea608::CarriageReturn(_)
            | Cea608::EraseDisplay(_)
            | Cea608::EndOfCaption(_) => self.column = 0,
            _ => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [mode, fps, format, clear, rest @ ..] = data else {
        return;
    };
    let framerate = BROADCAST_FRAMERATES[usize::from(*fps) % BROADCAST_FRAMERATES.len()];
    let config = Config {
        mode: MODES[usize::from(*mode) % MODES.len()],
        framerate,
        timing: Timing {
            clear_after_ns: u64::from(*clear) * 20 * MS,
            ..Timing::default()
        },
        ..Config::default()
    };
    let format = CcFormat::ALL[usize::from(*format) % CcFormat::ALL.len()];
    let mut encoder = Encoder::new(config, 0);
    let mut checker = Checker {
        packer: Packer::new(format, framerate, Channel608::Cc1).expect("a broadcast rate"),
        state: Cea608State::default(),
        column: 0,
        next_pts: None,
        cc_data_len: None,
        cdp: cdp_types::CDPParser::new(),
    };
    // Each record: a step to the cue's start (x 10 ms), its length (x 10
    // ms), then its text up to the next 0xff.
    let mut position = 0u64;
    for record in rest.split(|&b| b == 0xff) {
        let [step, length, text @ ..] = record else {
            continue;
        };
        position += u64::from(*step) * 10 * MS;
        let end = position + u64::from(*length) * 10 * MS;
        for frame in encoder.frames_until(position) {
            checker.check(frame);
        }
        encoder.push_cue(&String::from_utf8_lossy(text), position, end);
        position = end;
    }
    for frame in encoder.frames_until(position).into_iter().chain(encoder.drain()) {
        checker.check(frame);
    }
    let chars = rest.len() as u64;
    let losses = encoder.losses();
    assert!(losses.cea608_replaced <= chars && losses.cea708_replaced <= chars);
});
