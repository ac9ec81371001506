// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Do gst-plugins-rs 0.15's `tttocea608` and `tttocea708` (`speaker-prefix`)
//! act on the transcriber's `rstranscribe/speaker-change` events? The tone
//! fixture's words ("x", one per 80 ms frame of 1 kHz tone) in three turns,
//! Alice, Bob and Carol, set on the sink pad in order with the audio; the
//! CC1 text tttocea608 makes, and the service 1 text tttocea708 makes, must
//! start each turn's row with the prefix.
//!
//! Usage: voxtralrt-interop MODEL (GST_PLUGIN_PATH holding the plugin).

use std::sync::{Arc, Mutex};

use gst::prelude::*;

const FRAME: usize = 1280;
/// The tone frames, as the tests' `tone_frames()`: bursts of 3, 5 and 10
/// words (each word 480 ms, the default delay, before its tone).
const BURSTS: [(usize, usize); 3] = [(16, 3), (36, 5), (46, 10)];
/// Where each speaker starts (ms): Bob before the second burst, Carol in
/// the middle of the last tone burst (its words start after 3.5 s).
const TURNS: [(u64, &str); 3] = [(0, "Alice"), (2_000, "Bob"), (3_500, "Carol")];
const WORDS_PER_TURN: [usize; 3] = [3, 9, 6];

fn tone_audio() -> Vec<f32> {
    let mut audio = vec![0.0f32; 66 * FRAME];
    for (start, len) in BURSTS {
        for f in start..start + len {
            for n in f * FRAME..(f + 1) * FRAME {
                let t = n as f32 / 16_000.0;
                audio[n] = 0.5 * (2.0 * std::f32::consts::PI * 1000.0 * t).sin();
            }
        }
    }
    audio
}

/// CC1's text from raw CEA-608 byte pairs: printable characters as they
/// are, a carriage return or a roll-up command as a new line.
fn cc1_text(pairs: &[[u8; 2]]) -> String {
    let mut text = String::new();
    let mut last_control = None;
    for pair in pairs {
        let [a, b] = pair.map(|x| x & 0x7f);
        if (0x10..0x20).contains(&a) {
            // Control codes come twice; the second is the same command.
            if last_control == Some([a, b]) {
                last_control = None;
                continue;
            }
            last_control = Some([a, b]);
            if (a == 0x14 || a == 0x1c) && (0x25..=0x2d).contains(&b) && !text.ends_with('\n') {
                text.push('\n');
            }
            continue;
        }
        last_control = None;
        text.extend([a, b].into_iter().filter(|c| *c >= 0x20).map(char::from));
    }
    text
}

/// The caption buffers `captions` (a launch-line piece after the
/// transcriber, ending in an appsink named out) makes of the turns.
fn captions(model: &str, captions: &str) -> Vec<gst::Buffer> {
    let caps = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=audio format=time caps={caps} ! \
         voxtralrttranscriber name=t model-path={model} threads=1 ! {captions}"
    ))
    .expect("voxtralrttranscriber (GST_PLUGIN_PATH) and the closedcaption plugin")
    .downcast::<gst::Pipeline>()
    .unwrap();
    let sink = pipeline.by_name("t").unwrap().static_pad("sink").unwrap();
    sink.add_probe(gst::PadProbeType::BUFFER, |pad, info| {
        if let Some(gst::PadProbeData::Buffer(b)) = &info.data {
            let ms = b.pts().unwrap().mseconds();
            if let Some(&(_, name)) = TURNS.iter().find(|&&(at, _)| at == ms) {
                pad.set_property("speaker", name);
            }
        }
        gst::PadProbeReturn::Ok
    });
    let buffers = Arc::new(Mutex::new(Vec::<gst::Buffer>::new()));
    let got = buffers.clone();
    let out = pipeline.by_name("out").unwrap();
    out.set_property("emit-signals", true);
    out.connect("new-sample", false, move |args| {
        let appsink = args[0].get::<gst::Element>().unwrap();
        let sample = appsink.emit_by_name::<gst::Sample>("pull-sample", &[]);
        got.lock().unwrap().push(sample.buffer_owned().unwrap());
        Some(gst::FlowReturn::Ok.to_value())
    });
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("audio").unwrap();
    for (k, piece) in tone_audio().chunks(1600).enumerate() {
        let bytes: Vec<u8> = piece.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut b = gst::Buffer::from_mut_slice(bytes);
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let msg = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(120),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("EOS within 120 s");
    pipeline.set_state(gst::State::Null).unwrap();
    if let gst::MessageView::Error(e) = msg.view() {
        eprintln!("interop: FAILED: {} ({:?})", e.error(), e.debug());
        std::process::exit(1);
    }
    let buffers = buffers.lock().unwrap().clone();
    buffers
}

/// Service 1's text in CEA-708 cc_data buffers.
fn service_1_text(buffers: &[gst::Buffer]) -> String {
    let mut parser = cea708_types::CCDataParser::new();
    let mut text = String::new();
    for b in buffers {
        let triples = b.map_readable().unwrap();
        let mut data = vec![0xc0 | ((triples.len() / 3) as u8 & 0x1f), 0xff];
        data.extend_from_slice(&triples);
        parser.push(&data).expect("cc_data");
        while let Some(packet) = parser.pop_packet() {
            for service in packet.services().iter().filter(|s| s.number() == 1) {
                text.extend(service.codes().iter().filter_map(|c| c.char()));
            }
        }
    }
    text
}

/// Checks that `text` has the prefix at each change, each speaker's
/// words after it.
fn check(what: &str, text: &str) -> bool {
    println!("interop: {what}:\n{text}");
    let turns: Vec<usize> = text
        .split(">> ")
        .skip(1)
        .map(|run| run.split_whitespace().filter(|w| *w == "x").count())
        .collect();
    if turns != WORDS_PER_TURN {
        eprintln!(
            "interop: FAILED: {what}: words after each '>> ': {turns:?}, expected {WORDS_PER_TURN:?}"
        );
        return false;
    }
    println!("interop: ok: {what}: '>> ' at each of the 3 speaker changes ({turns:?} words)");
    true
}

fn main() {
    let model = std::env::args()
        .nth(1)
        .expect("usage: voxtralrt-interop MODEL");
    gst::init().unwrap();
    gstrsclosedcaption::plugin_register_static().expect("the closedcaption plugin");
    let cea608 = captions(
        &model,
        "tttocea608 mode=roll-up2 speaker-prefix=\">> \" ! \
         closedcaption/x-cea-608,format=raw ! appsink name=out sync=false",
    );
    let pairs: Vec<[u8; 2]> = cea608
        .iter()
        .flat_map(|b| {
            let map = b.map_readable().unwrap();
            map.chunks_exact(2)
                .map(|p| [p[0], p[1]])
                .collect::<Vec<_>>()
        })
        .collect();
    let ok_608 = check("tttocea608 (gst-plugins-rs 0.15), CC1", &cc1_text(&pairs));
    let cea708 = captions(
        &model,
        "tttocea708 mode=roll-up speaker-prefix=\">> \" ! appsink name=out sync=false",
    );
    let ok_708 = check(
        "tttocea708 (gst-plugins-rs 0.15), service 1",
        &service_1_text(&cea708),
    );
    if !(ok_608 && ok_708) {
        std::process::exit(1);
    }
}
