// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `tttocea608` and `tttocea708` (`speaker-prefix`) and `textaccumulate`
//! (`drain-on-speaker-change`) on the transcriber's
//! `rstranscribe/speaker-change` events: the tone fixture's words in three
//! turns, Alice, Bob and Carol, set on the sink pad in order with the
//! audio; CC1 and service 1 must start each turn's row with the prefix,
//! and textaccumulate, not draining on final-transcripts, must give each
//! turn's words in one buffer.

use gst::prelude::*;

use crate::audio;
use crate::captions::Captions;
use crate::pipeline::{self, by_name};

/// Bursts of 3, 5 and 10 words; 400 ms between the last two.
const BURSTS: [(usize, usize); 3] = [(16, 3), (36, 5), (46, 10)];
/// Where each speaker starts (ms): Bob before the second burst, Carol in
/// the middle of the last one (its words start after 3.5 s).
const TURNS: [(u64, &str); 3] = [(0, "Alice"), (2_000, "Bob"), (3_500, "Carol")];
const WORDS_PER_TURN: [usize; 3] = [3, 9, 6];

pub fn check(tone_model: &str) -> Result<String, String> {
    let pipeline = pipeline::launch(&format!(
        "appsrc name=audio format=time caps={} ! \
         voxtralrttranscriber name=t model-path={tone_model} threads=1 ! tee name=split \
         split. ! queue ! tttocea608 mode=roll-up2 speaker-prefix=\">> \" ! \
           closedcaption/x-cea-608,format=raw ! fakesink name=cea608 sync=false \
         split. ! queue ! tttocea708 mode=roll-up speaker-prefix=\">> \" ! \
           fakesink name=cea708 sync=false \
         split. ! queue ! textaccumulate drain-on-final-transcripts=false ! \
           fakesink name=accumulated sync=false",
        audio::F32_CAPS
    ))?;
    let sink = by_name(&pipeline, "t").static_pad("sink").unwrap();
    sink.add_probe(gst::PadProbeType::BUFFER, |pad, info| {
        let ms = info.buffer().and_then(|b| b.pts()).map(|t| t.mseconds());
        if let Some(&(_, name)) = TURNS.iter().find(|&&(at, _)| Some(at) == ms) {
            pad.set_property("speaker", name);
        }
        gst::PadProbeReturn::Ok
    });
    let cea608 = pipeline::record_into(&pipeline, "cea608");
    let cea708 = pipeline::record_into(&pipeline, "cea708");
    let accumulated = pipeline::record_into(&pipeline, "accumulated");
    let samples = audio::tone(66, &audio::burst_frames(&BURSTS));
    let src = by_name(&pipeline, "audio");
    pipeline::play(&pipeline, 120, || audio::push_all(&src, &samples))?;
    let mut captions = Captions::new();
    for data in pipeline::data(&cea608) {
        captions.push_raw_608(&data);
    }
    for data in pipeline::data(&cea708) {
        captions.push_cc_data(&data);
    }
    let cc1 = turns(&captions, "CC1")?;
    let service1 = turns(&captions, "708_1")?;
    let per_turn: Vec<usize> = pipeline::texts(&accumulated)
        .iter()
        .map(|t| t.split_whitespace().count())
        .collect();
    crate::expect(
        "textaccumulate's buffers (words)",
        &per_turn,
        &WORDS_PER_TURN.to_vec(),
    )?;
    Ok(format!(
        "'>> ' starts each of the 3 turns' rows: CC1 {cc1:?}, 708 service 1 {service1:?} words; \
         textaccumulate one buffer a turn"
    ))
}

/// The words of each turn, if each turn has its row, starting with the
/// prefix.
fn turns(captions: &Captions, name: &str) -> Result<Vec<usize>, String> {
    let rows = captions.rows(name);
    let words: Vec<usize> = rows
        .iter()
        .map(|r| r.split_whitespace().filter(|w| *w == "x").count())
        .collect();
    if words != WORDS_PER_TURN || !rows.iter().all(|r| r.starts_with(">> ")) {
        return Err(format!(
            "{name}: rows {rows:?}, expected one per turn with '>> ' and {WORDS_PER_TURN:?} words"
        ));
    }
    Ok(words)
}
