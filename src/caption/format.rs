// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The bytes of one frame of captions in each GStreamer caption format.

use cea708_types::{CCDataWriter, Cea608};

use super::cea608::PADDING;
use super::{Channel608, Frame, Framerate};

/// The caption formats of GStreamer's `closedcaption/*` caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcFormat {
    /// `closedcaption/x-cea-608,format=raw`: the CC1 pair (field 1 only
    /// on GStreamer 1.22).
    Cea608Raw,
    /// `closedcaption/x-cea-608,format=s334-1a`: the pair after a SMPTE
    /// 334-1 byte saying its field.
    Cea608S334_1a,
    /// `closedcaption/x-cea-708,format=cc_data`: cc_data triples (the 608
    /// pair and the DTVCC packets), as x264enc writes into SEI.
    Cea708CcData,
    /// `closedcaption/x-cea-708,format=cdp`: the same in a SMPTE 334-2
    /// caption distribution packet.
    Cea708Cdp,
}

/// The SMPTE 334-1 byte before a field 1 pair; a field 2 pair's is 0.
const S334_FIELD_1: u8 = 0x80;
const S334_FIELD_2: u8 = 0x00;

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

    /// Whether the format can carry `channel` (raw 608 has no field 2).
    pub fn carries(self, channel: Channel608) -> bool {
        self != CcFormat::Cea608Raw || !channel.is_field_2()
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

/// Captions that cannot be written in a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    Framerate(Framerate),
    /// Raw 608 carries field 1 only.
    Field2InRaw,
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsupported::Framerate(r) => {
                write!(
                    f,
                    "captions cannot be written at {}/{} fps",
                    r.numer, r.denom
                )
            }
            Unsupported::Field2InRaw => f.write_str(
                "CC3 is in field 2, which closedcaption/x-cea-608,format=raw cannot carry",
            ),
        }
    }
}

/// Writes frames in one format at one frame rate.
#[derive(Debug)]
pub struct Packer {
    format: CcFormat,
    framerate: Framerate,
    channel: Channel608,
    cc_data: CCDataWriter,
    cdp: cdp_types::CDPWriter,
    cdp_framerate: cdp_types::Framerate,
}

impl Packer {
    pub fn new(
        format: CcFormat,
        framerate: Framerate,
        channel: Channel608,
    ) -> Result<Self, Unsupported> {
        if !format.carries(channel) {
            return Err(Unsupported::Field2InRaw);
        }
        let cdp_framerate = (1..=8)
            .filter_map(cdp_types::Framerate::from_id)
            .find(|f| {
                u64::from(f.numer()) * u64::from(framerate.denom)
                    == u64::from(framerate.numer) * u64::from(f.denom())
            })
            .ok_or(Unsupported::Framerate(framerate))?;
        let mut cc_data = CCDataWriter::default();
        // A constant cc_count per frame rate, as broadcast equipment
        // expects.
        cc_data.set_output_padding(true);
        cc_data.set_output_cea608_padding(true);
        Ok(Self {
            format,
            framerate,
            channel,
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
            CcFormat::Cea608S334_1a => {
                let field = if self.channel.is_field_2() {
                    S334_FIELD_2
                } else {
                    S334_FIELD_1
                };
                vec![field, pair[0], pair[1]]
            }
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
            let pair = if self.channel.is_field_2() {
                Cea608::Field2(b0, b1)
            } else {
                Cea608::Field1(b0, b1)
            };
            if cdp {
                self.cdp.push_cea608(pair);
            } else {
                self.cc_data.push_cea608(pair);
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
