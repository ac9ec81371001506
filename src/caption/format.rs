// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The bytes of one frame of captions in each GStreamer caption format.

use cea708_types::{CCDataWriter, Cea608};

use super::cea608::PADDING;
use super::{Frame, Framerate};

/// The caption formats of GStreamer's `closedcaption/*` caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcFormat {
    /// `closedcaption/x-cea-608,format=raw`: the CC1 pair.
    Cea608Raw,
    /// `closedcaption/x-cea-608,format=s334-1a`: the CC1 pair after a
    /// SMPTE 334-1 byte saying field 1.
    Cea608S334_1a,
    /// `closedcaption/x-cea-708,format=cc_data`: cc_data triples (CC1 and
    /// the DTVCC packets), as x264enc writes into SEI.
    Cea708CcData,
    /// `closedcaption/x-cea-708,format=cdp`: the same in a SMPTE 334-2
    /// caption distribution packet.
    Cea708Cdp,
}

/// The SMPTE 334-1 byte before a field 1 pair.
const S334_FIELD_1: u8 = 0x80;

impl CcFormat {
    pub const ALL: [CcFormat; 4] = [
        CcFormat::Cea608Raw,
        CcFormat::Cea608S334_1a,
        CcFormat::Cea708CcData,
        CcFormat::Cea708Cdp,
    ];

    /// The caps name and `format` field.
    pub fn caps_name_and_format(self) -> (&'static str, &'static str) {
        match self {
            CcFormat::Cea608Raw => ("closedcaption/x-cea-608", "raw"),
            CcFormat::Cea608S334_1a => ("closedcaption/x-cea-608", "s334-1a"),
            CcFormat::Cea708CcData => ("closedcaption/x-cea-708", "cc_data"),
            CcFormat::Cea708Cdp => ("closedcaption/x-cea-708", "cdp"),
        }
    }

    /// The format of caps with this name and `format` field, if it is one.
    pub fn from_caps_name_and_format(name: &str, format: &str) -> Option<CcFormat> {
        Self::ALL
            .into_iter()
            .find(|f| f.caps_name_and_format() == (name, format))
    }

    /// Whether the format carries CEA-708 service data.
    pub fn carries_708(self) -> bool {
        matches!(self, CcFormat::Cea708CcData | CcFormat::Cea708Cdp)
    }
}

/// The frame rates of SMPTE 334-2 CDPs, which the other formats are held
/// to as well (cc_data's counts per frame are defined for them).
pub const BROADCAST_FRAMERATES: [Framerate; 8] = [
    Framerate::new(24000, 1001),
    Framerate::new(24, 1),
    Framerate::new(25, 1),
    Framerate::new(30000, 1001),
    Framerate::new(30, 1),
    Framerate::new(50, 1),
    Framerate::new(60000, 1001),
    Framerate::new(60, 1),
];

/// A frame rate the caption formats cannot be written at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnsupportedFramerate(pub Framerate);

impl std::fmt::Display for UnsupportedFramerate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "captions cannot be written at {}/{} fps",
            self.0.numer, self.0.denom
        )
    }
}

/// Writes frames in one format at one frame rate.
#[derive(Debug)]
pub struct Packer {
    format: CcFormat,
    framerate: Framerate,
    cc_data: CCDataWriter,
    cdp: cdp_types::CDPWriter,
    cdp_framerate: cdp_types::Framerate,
}

impl Packer {
    pub fn new(format: CcFormat, framerate: Framerate) -> Result<Self, UnsupportedFramerate> {
        let cdp_framerate = (1..=8)
            .filter_map(cdp_types::Framerate::from_id)
            .find(|f| {
                u64::from(f.numer()) * u64::from(framerate.denom)
                    == u64::from(framerate.numer) * u64::from(f.denom())
            })
            .ok_or(UnsupportedFramerate(framerate))?;
        let mut cc_data = CCDataWriter::default();
        // A constant cc_count per frame rate, as broadcast equipment
        // expects.
        cc_data.set_output_padding(true);
        cc_data.set_output_cea608_padding(true);
        Ok(Self {
            format,
            framerate,
            cc_data,
            cdp: cdp_types::CDPWriter::new(),
            cdp_framerate,
        })
    }

    pub fn format(&self) -> CcFormat {
        self.format
    }

    pub fn framerate(&self) -> Framerate {
        self.framerate
    }

    /// The bytes of `frame`.
    pub fn pack(&mut self, frame: Frame) -> Vec<u8> {
        let pair = frame.cea608.unwrap_or(PADDING);
        match self.format {
            CcFormat::Cea608Raw => pair.to_vec(),
            CcFormat::Cea608S334_1a => vec![S334_FIELD_1, pair[0], pair[1]],
            CcFormat::Cea708CcData => {
                self.queue(frame);
                let mut data = Vec::new();
                self.cc_data
                    .write(
                        cea708_types::Framerate::new(self.framerate.numer, self.framerate.denom),
                        &mut data,
                    )
                    .expect("writing to a Vec");
                // The writer starts with the cc_data() header (flags and
                // cc_count, em_data); GStreamer's cc_data is the triples.
                data.split_off(2)
            }
            CcFormat::Cea708Cdp => {
                self.queue(frame);
                let mut data = Vec::new();
                self.cdp
                    .write(self.cdp_framerate, &mut data)
                    .expect("writing to a Vec");
                data
            }
        }
    }

    fn queue(&mut self, frame: Frame) {
        let cdp = self.format == CcFormat::Cea708Cdp;
        if let Some([b0, b1]) = frame.cea608 {
            if cdp {
                self.cdp.push_cea608(Cea608::Field1(b0, b1));
            } else {
                self.cc_data.push_cea608(Cea608::Field1(b0, b1));
            }
        }
        for packet in frame.cea708 {
            if cdp {
                self.cdp.push_packet(packet);
            } else {
                self.cc_data.push_packet(packet);
            }
        }
    }
}
