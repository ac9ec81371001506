// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What gst-plugins-rs 0.15 does with the transcriber's
//! `rstranscribe/final-transcript` (the end of each utterance):
//! `textaccumulate` gives one buffer per utterance, `tttocea608` and
//! `tttocea708` (roll-up) start a new row at each. Beside each, the same
//! consumer without the events, to show they are the cause.
//!
//! - Tone: three utterances of the tone fixture's "x", 3, 5 and 6 words,
//!   1.3 s apart; the second has a 400 ms pause inside (no utterance
//!   end: the transcriber's pause is 700 ms).
//! - Speech: espeak-ng through the tiny model, which says "hello from the
//!   tiny voxtral test model" over and over whatever it hears (no
//!   punctuation), with a house dictionary (`replacements`) that makes
//!   each "Hello ... model." a sentence, which ends an utterance.

use gst::prelude::*;

use crate::audio;
use crate::captions::Captions;
use crate::expect;
use crate::pipeline::{self, Log, by_name};

/// The three utterances' bursts (first frame, words).
const BURSTS: [(usize, usize); 4] = [(10, 3), (30, 3), (38, 2), (56, 6)];
const UTTERANCES: [&str; 3] = ["x x x", "x x x x x", "x x x x x x"];

pub fn check_tone(tone_model: &str) -> Result<String, String> {
    let pipeline = pipeline::launch(&format!(
        "appsrc name=audio format=time caps={} ! \
         voxtralrttranscriber name=t model-path={tone_model} threads=1 ! tee name=split \
         split. ! queue ! textaccumulate ! fakesink name=accumulated sync=false \
         split. ! queue ! textaccumulate drain-on-final-transcripts=false ! \
           fakesink name=accumulated_without sync=false \
         split. ! queue ! tttocea608 mode=roll-up2 ! closedcaption/x-cea-608,format=raw ! \
           fakesink name=cea608 sync=false \
         split. ! queue name=no_events ! tttocea608 mode=roll-up2 ! \
           closedcaption/x-cea-608,format=raw ! fakesink name=cea608_without sync=false \
         split. ! queue ! tttocea708 mode=roll-up ! fakesink name=cea708 sync=false",
        audio::F32_CAPS
    ))?;
    let words = pipeline::record(&by_name(&pipeline, "t").static_pad("src").unwrap());
    let accumulated = pipeline::record_into(&pipeline, "accumulated");
    let accumulated_without = pipeline::record_into(&pipeline, "accumulated_without");
    pipeline::drop_final_transcripts(&by_name(&pipeline, "no_events").static_pad("src").unwrap());
    let cea608 = pipeline::record_into(&pipeline, "cea608");
    let cea608_without = pipeline::record_into(&pipeline, "cea608_without");
    let cea708 = pipeline::record_into(&pipeline, "cea708");
    let samples = audio::tone(75, &audio::burst_frames(&BURSTS));
    let src = by_name(&pipeline, "audio");
    pipeline::play(&pipeline, 120, || audio::push_all(&src, &samples))?;

    let said = pipeline::shape(&words).replace("[x]", "x");
    expect(
        "the transcriber's words and final-transcripts",
        said.as_str(),
        "xxx|xxxxx|xxxxxx|",
    )?;
    let expected: String = UTTERANCES.iter().map(|u| format!("[{u}]|")).collect();
    expect("textaccumulate", &pipeline::shape(&accumulated), &expected)?;
    let all = vec!["x"; 14].join(" ");
    let without = pipeline::texts(&accumulated_without);
    expect(
        "textaccumulate drain-on-final-transcripts=false",
        &without,
        &vec![all.clone()],
    )?;

    let rows = |logs: &[&Log], name: &str| {
        let mut captions = Captions::new();
        for log in logs {
            for data in pipeline::data(log) {
                if name == "CC1" {
                    captions.push_raw_608(&data);
                } else {
                    captions.push_cc_data(&data);
                }
            }
        }
        captions.rows(name)
    };
    let utterances: Vec<String> = UTTERANCES.iter().map(|u| u.to_string()).collect();
    expect("tttocea608 CC1 rows", &rows(&[&cea608], "CC1"), &utterances)?;
    expect(
        "tttocea708 service 1 rows",
        &rows(&[&cea708], "708_1"),
        &utterances,
    )?;
    let one_row = rows(&[&cea608_without], "CC1");
    expect(
        "tttocea608 CC1 rows without the events",
        &one_row,
        &vec![all],
    )?;
    Ok(format!(
        "14 words, 3 utterances: textaccumulate 3 buffers {UTTERANCES:?} (1 of 14 words \
         without draining on the events); tttocea608 CC1 and tttocea708 service 1: 3 rows \
         (1 without the events)"
    ))
}

/// House rules for the tiny model: "hello" starts a sentence, "model"
/// ends it.
const SENTENCE_RULES: &str = "hello => Hello\nmodel => model.\n";
const SENTENCE: &str = "Hello from the tiny voxtral test model.";

pub fn check_speech(tiny_model: &str) -> Result<String, String> {
    let (speech, rate) = audio::espeak(
        "Good evening. Here is the news at six. The weather stays fine and warm \
         through the weekend. Thank you for listening.",
    )?;
    let rules = std::env::temp_dir().join(format!("voxtralrt-interop-{}.txt", std::process::id()));
    std::fs::write(&rules, SENTENCE_RULES).map_err(|e| format!("{}: {e}", rules.display()))?;
    let result = speech_run(tiny_model, &speech, rate, &rules.display().to_string());
    let _ = std::fs::remove_file(&rules);
    result
}

fn speech_run(model: &str, speech: &[i16], rate: u32, rules: &str) -> Result<String, String> {
    let pipeline = pipeline::launch(&format!(
        "appsrc name=audio format=time \
           caps=audio/x-raw,format=S16LE,rate={rate},channels=1,layout=interleaved ! \
         audioconvert ! audioresample ! \
         voxtralrttranscriber name=t model-path={model} threads=1 replacements={rules} ! \
         tee name=split \
         split. ! queue ! textaccumulate ! fakesink name=accumulated sync=false \
         split. ! queue ! textaccumulate drain-on-final-transcripts=false ! \
           fakesink name=accumulated_without sync=false"
    ))?;
    let words = pipeline::record(&by_name(&pipeline, "t").static_pad("src").unwrap());
    let accumulated = pipeline::record_into(&pipeline, "accumulated");
    let accumulated_without = pipeline::record_into(&pipeline, "accumulated_without");
    let src = by_name(&pipeline, "audio");
    let seconds = speech.len() as f64 / f64::from(rate);
    pipeline::play(&pipeline, 120, || push_speech(&src, speech, rate))?;

    let sentences = pipeline::texts(&accumulated);
    let full = sentences.iter().filter(|s| s.as_str() == SENTENCE).count();
    // Each sentence but the last (cut by the end of the audio) is whole.
    if sentences.len() < 3 || full < sentences.len() - 1 {
        return Err(format!(
            "textaccumulate: {sentences:?}, expected {SENTENCE:?} each"
        ));
    }
    // With the events, each sentence goes out at its end (its event after
    // it); without, only when the next one's first word comes (its event
    // before it).
    // S: a whole sentence.
    let short = |shape: String| shape.replace(SENTENCE, "S");
    let with: String = sentences.iter().map(|s| format!("[{s}]|")).collect();
    let shape = short(pipeline::shape(&accumulated));
    expect("textaccumulate", &shape, &short(with))?;
    let without: String = sentences.iter().map(|s| format!("|[{s}]")).collect();
    let shape_without = short(pipeline::shape(&accumulated_without));
    expect(
        "textaccumulate without draining",
        &shape_without,
        &short(without),
    )?;
    let events = pipeline::shape(&words).matches('|').count();
    Ok(format!(
        "{seconds:.1} s of espeak-ng speech: {} words, {events} final-transcripts, textaccumulate \
         {} buffers, one per sentence, each out at its sentence's end ({full} whole)",
        pipeline::texts(&words).len(),
        sentences.len()
    ))
}

/// Pushes 16-bit samples at `rate` in 100 ms buffers stamped from 0, then
/// ends the stream.
fn push_speech(src: &gst::Element, speech: &[i16], rate: u32) {
    let per_buffer = rate as usize / 10;
    for (k, piece) in speech.chunks(per_buffer).enumerate() {
        let bytes: Vec<u8> = piece.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut b = gst::Buffer::from_mut_slice(bytes);
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(100));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
}
