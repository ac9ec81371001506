// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Reading captions back: the text of each CEA-608 channel and CEA-708
//! service, row by row, decoded with the crates gst-plugins-rs writes them
//! with (`cea608-types`, `cea708-types`).

use std::collections::BTreeMap;

use cea608_types::{Cea608, Cea608State};
use cea708_types::tables::Code;

/// A row starts at a carriage return or after an erased display.
const ROW_BREAK: char = '\n';

/// Captions as they were read, by channel (`"CC1"`..`"CC4"`) and service
/// (`"708_1"`...).
#[derive(Debug, Default)]
pub struct Captions {
    text: BTreeMap<String, String>,
    field1: Cea608State,
    field2: Cea608State,
    dtvcc: Option<cea708_types::CCDataParser>,
}

impl Captions {
    pub fn new() -> Captions {
        let mut dtvcc = cea708_types::CCDataParser::new();
        dtvcc.handle_cea608();
        Captions {
            dtvcc: Some(dtvcc),
            ..Captions::default()
        }
    }

    /// Raw CEA-608 byte pairs of field 1 (`closedcaption/x-cea-608,format=raw`).
    pub fn push_raw_608(&mut self, data: &[u8]) {
        for pair in data.chunks_exact(2) {
            self.push_608(1, [pair[0], pair[1]]);
        }
    }

    /// cc_data triples (`closedcaption/x-cea-708,format=cc_data`, or the
    /// caption meta of that type on video): 608 of both fields and DTVCC.
    pub fn push_cc_data(&mut self, triples: &[u8]) {
        let mut data = vec![0xc0 | ((triples.len() / 3) as u8 & 0x1f), 0xff];
        data.extend_from_slice(triples);
        let parser = self.dtvcc.as_mut().expect("made by new()");
        if parser.push(&data).is_err() {
            return;
        }
        let pairs: Vec<cea708_types::Cea608> = parser.cea608().unwrap_or_default().to_vec();
        let mut packets = Vec::new();
        while let Some(packet) = parser.pop_packet() {
            packets.push(packet);
        }
        for pair in pairs {
            match pair {
                cea708_types::Cea608::Field1(a, b) => self.push_608(1, [a, b]),
                cea708_types::Cea608::Field2(a, b) => self.push_608(2, [a, b]),
            }
        }
        for packet in packets {
            for service in packet.services() {
                let text = self.of(&format!("708_{}", service.number()));
                for code in service.codes() {
                    match code {
                        Code::CR | Code::ClearWindows(_) | Code::DeleteWindows(_) => {
                            text.push(ROW_BREAK)
                        }
                        code => text.extend(code.char()),
                    }
                }
            }
        }
    }

    fn push_608(&mut self, field: u8, pair: [u8; 2]) {
        let state = if field == 1 {
            &mut self.field1
        } else {
            &mut self.field2
        };
        let Ok(Some(decoded)) = state.decode(pair) else {
            return;
        };
        let number = if decoded.channel() == cea608_types::tables::Channel::ONE {
            2 * field - 1
        } else {
            2 * field
        };
        let text = self.of(&format!("CC{number}"));
        match decoded {
            Cea608::Text(t) => text.extend(t.char1.into_iter().chain(t.char2)),
            Cea608::CarriageReturn(_) | Cea608::EraseDisplay(_) => text.push(ROW_BREAK),
            _ => {}
        }
    }

    fn of(&mut self, name: &str) -> &mut String {
        self.text.entry(name.to_owned()).or_default()
    }

    /// The rows of a channel or service, trimmed, empty ones left out.
    pub fn rows(&self, name: &str) -> Vec<String> {
        self.text.get(name).map_or_else(Vec::new, |t| {
            t.split(ROW_BREAK)
                .map(|r| r.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|r| !r.is_empty())
                .collect()
        })
    }

    /// Every channel and service with its rows, for messages.
    pub fn describe(&self) -> String {
        self.text
            .keys()
            .map(|name| format!("{name}: {:?}", self.rows(name)))
            .collect::<Vec<_>>()
            .join("; ")
    }
}
