// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! CEA-708 read back: the DTVCC services' text in caption buffers, decoded
//! with cea708-types, and in the H.264 SEI of an MPEG-TS file.

use std::collections::BTreeMap;
use std::path::Path;

use gst::prelude::*;

/// The text of each DTVCC service in `buffers` (cc_data triples).
pub fn services_708(buffers: &[gst::Buffer]) -> BTreeMap<u8, String> {
    let mut parser = cea708_types::CCDataParser::new();
    let mut text = BTreeMap::<u8, String>::new();
    for b in buffers {
        let triples = b.map_readable().unwrap();
        let mut data = vec![0x80 | 0x40 | ((triples.len() / 3) as u8 & 0x1f), 0xff];
        data.extend_from_slice(&triples);
        parser.push(&data).unwrap();
        while let Some(packet) = parser.pop_packet() {
            for service in packet.services() {
                let chars = service.codes().iter().filter_map(|c| c.char());
                text.entry(service.number()).or_default().extend(chars);
            }
        }
    }
    text
}

/// The services' text in the captions of the H.264 video of the MPEG-TS
/// file `ts`, read with tsdemux ! h264parse ! ccextractor.
pub fn services_in_ts(ts: &Path) -> BTreeMap<u8, String> {
    let line = format!(
        "filesrc location={} ! tsdemux ! h264parse ! ccextractor name=x \
         x. ! queue ! fakesink sync=false \
         x.caption ! queue ! ccconverter ! closedcaption/x-cea-708,format=cc_data ! \
           fakesink name=cc signal-handoffs=true sync=false async=false",
        ts.display()
    );
    let reader = gst::parse::launch(&line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .downcast::<gst::Pipeline>()
        .unwrap();
    let buffers = super::handoffs(&reader, "cc");
    let end = super::run_to_end(reader.upcast_ref(), std::time::Duration::from_secs(60));
    assert!(matches!(end.view(), gst::MessageView::Eos(_)), "{end:?}");
    let services = services_708(&buffers.lock().unwrap());
    services
}
