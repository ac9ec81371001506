// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! transcriberbin 0.15 with `voxtralrttranscriber` as the `transcriber` of
//! its audio sink pads (since 0.14 each sink pad, a `GstTranscriberSinkPad`,
//! has its own `transcriber`, `language-code`, `translation-languages`,
//! `mode`, ...), live video and live tone audio, the captions read back
//! from the caption meta on the video: the transcript on CC1 and 708
//! service 1 with its Spanish (through a translate pad and the chat
//! double) on CC3 and service 2; then two audio streams, each with its own
//! transcriber, on CC1 + service 1 and CC3 + service 2, which transcriberbin
//! 0.15.4 cannot do (see [`check_two_streams`]).
//!
//! transcriberbin 0.15 builds `awstranscriber` for every sink pad when the
//! pad is made and fails to build (it then refuses every state change)
//! when there is none; main.rs registers a stand-in under that name when
//! the aws plugin is missing (stand_in.rs, docs/closed-captions.md).

use std::sync::{Arc, Mutex};

use gst::prelude::*;

use crate::audio;
use crate::captions::Captions;
use crate::chat::{self, ChatDouble};
use crate::expect;
use crate::pipeline::{self, by_name};

const VIDEO_FRAMES: u32 = 240;
const LATENCY_MS: u32 = 1500;
/// transcriberbin's default `translate-latency`.
const TRANSLATE_LATENCY_MS: u32 = 500;

/// One audio stream into transcriberbin.
#[derive(Clone)]
struct Stream {
    /// Its tone bursts (first frame, words), an utterance each.
    bursts: &'static [(usize, usize)],
    /// The pad's `translation-languages`.
    languages: gst::Structure,
}

impl Stream {
    fn rows(&self, prefix: &str) -> Vec<String> {
        self.bursts
            .iter()
            .map(|&(_, n)| format!("{prefix}{}", vec!["x"; n].join(" ")))
            .collect()
    }
}

fn channels(a: &str, b: &str) -> gst::List {
    gst::List::new([a.to_owned(), b.to_owned()])
}

/// One microphone: the transcript on CC1 and service 1, its Spanish on
/// CC3 and service 2.
pub fn check_translation(tone_model: &str) -> Result<String, String> {
    let server = ChatDouble::start();
    let stream = Stream {
        bursts: &[(10, 3), (30, 4)],
        languages: gst::Structure::builder("languages")
            .field("transcript", channels("cc1", "708_1"))
            .field("es", channels("cc3", "708_2"))
            .build(),
    };
    let run = run(tone_model, &[stream], Some(&server))?;
    let [ours] = &run.transcribers[..] else {
        unreachable!()
    };
    let pad = ours
        .static_pad("translate_src_0")
        .ok_or("transcriberbin requested no translate_src pad")?;
    expect(
        "the translate pad's language-code",
        &pad.property::<Option<String>>("language-code"),
        &Some("es".to_owned()),
    )?;
    let stream = &run.streams[0];
    let (transcript, spanish) = (stream.rows(""), stream.rows("[es] "));
    expect("CC1 rows", &run.captions.rows("CC1"), &transcript)?;
    expect(
        "708 service 1 rows",
        &run.captions.rows("708_1"),
        &transcript,
    )?;
    expect("CC3 rows", &run.captions.rows("CC3"), &spanish)?;
    expect("708 service 2 rows", &run.captions.rows("708_2"), &spanish)?;
    expect("chat requests, one per utterance", &server.requests(), &2)?;
    // What awstranscriber's unsynced_src gives (each result as it comes,
    // stamped with the running time), ours posts on the bus.
    expect(
        "voxtralrt-transcript messages through transcriberbin",
        &run.transcripts,
        &7,
    )?;
    Ok(format!(
        "latency {} ms; 7 words in 2 utterances: CC1 and service 1 {transcript:?}, \
         CC3 and service 2 {spanish:?}, one row each",
        run.latency.mseconds()
    ))
}

/// Two microphones, each with its transcriber: the first on CC1 and
/// service 1, the second on CC3 and service 2. transcriberbin 0.15.4 cannot
/// make the second pad: its `request_new_pad` holds the bin's settings
/// lock while it configures the pad's new transcriber, which takes that
/// lock again (a self-deadlock; without an `awstranscriber` the request
/// fails instead). The check confirms that limit; once a request comes
/// back, it checks the captions of both streams.
pub fn check_two_streams(tone_model: &str) -> Result<String, String> {
    if let Err(limit) = second_audio_pad_comes() {
        return Ok(format!("not checked, transcriberbin's limit: {limit}"));
    }
    let streams = [
        Stream {
            bursts: &[(10, 3), (30, 4)],
            languages: gst::Structure::builder("languages")
                .field("transcript", channels("cc1", "708_1"))
                .build(),
        },
        Stream {
            bursts: &[(15, 5), (40, 6)],
            languages: gst::Structure::builder("languages")
                .field("transcript", channels("cc3", "708_2"))
                .build(),
        },
    ];
    let run = run(tone_model, &streams, None)?;
    let (first, second) = (run.streams[0].rows(""), run.streams[1].rows(""));
    expect("CC1 rows (sink_audio)", &run.captions.rows("CC1"), &first)?;
    expect(
        "708 service 1 rows (sink_audio)",
        &run.captions.rows("708_1"),
        &first,
    )?;
    expect(
        "CC3 rows (sink_audio_0)",
        &run.captions.rows("CC3"),
        &second,
    )?;
    expect(
        "708 service 2 rows (sink_audio_0)",
        &run.captions.rows("708_2"),
        &second,
    )?;
    Ok(format!(
        "transcriberbin makes a second audio pad now (update docs/closed-captions.md): \
         sink_audio's 7 words {first:?} on CC1 and service 1, sink_audio_0's 11 words \
         {second:?} on CC3 and service 2"
    ))
}

/// Whether transcriberbin gives a `sink_audio_%u` pad within 5 s; the
/// request is made on a thread of its own, left behind if it never
/// returns (with the bin it locked).
fn second_audio_pad_comes() -> Result<(), String> {
    let tb = gst::ElementFactory::make("transcriberbin")
        .property_from_str("mux-method", "cea708")
        .build()
        .map_err(|e| format!("transcriberbin: {e}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(tb.request_pad_simple("sink_audio_%u").is_some());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(5)) {
        Ok(true) => Ok(()),
        Ok(false) => Err("requesting sink_audio_%u gave no pad".into()),
        Err(_) => Err("requesting sink_audio_%u did not return within 5 s (it deadlocks)".into()),
    }
}

struct Run {
    streams: Vec<Stream>,
    /// The `voxtralrt-transcript` element messages (`post-messages`).
    transcripts: usize,
    transcribers: Vec<gst::Element>,
    captions: Captions,
    latency: gst::ClockTime,
}

fn run(tone_model: &str, streams: &[Stream], server: Option<&ChatDouble>) -> Result<Run, String> {
    let mut line = format!(
        "videotestsrc is-live=true num-buffers={VIDEO_FRAMES} pattern=black ! \
           video/x-raw,width=160,height=120,framerate=30000/1001 ! queue name=vq \
         fakesink name=vout sync=true "
    );
    for k in 0..streams.len() {
        line += &format!(
            "audiotestsrc name=a{k} is-live=true num-buffers=100 samplesperbuffer=1280 \
               wave=silence ! {} ! queue name=aq{k} fakesink name=aout{k} sync=true ",
            audio::F32_CAPS
        );
    }
    let pipeline = pipeline::launch(&line)?;
    let tb = gst::ElementFactory::make("transcriberbin")
        .property_from_str("mux-method", "cea708")
        .property("latency", LATENCY_MS)
        .property(
            "cc-caps",
            gst::Caps::builder("closedcaption/x-cea-708")
                .field("format", "cc_data")
                .build(),
        )
        .build()
        .map_err(|e| format!("transcriberbin: {e}"))?;
    pipeline.add(&tb).unwrap();
    link(&pipeline, &tb, "vq", "sink_video")?;
    link_out(&pipeline, &tb, "src_video", "vout")?;
    let mut transcribers = Vec::new();
    for (k, stream) in streams.iter().enumerate() {
        let (sink, src) = if k == 0 {
            (tb.static_pad("sink_audio"), "src_audio".to_owned())
        } else {
            let pad = tb.request_pad_simple("sink_audio_%u");
            let serial = pad.as_ref().map_or(String::new(), |p| {
                p.name().trim_start_matches("sink_audio_").to_owned()
            });
            (pad, format!("src_audio_{serial}"))
        };
        let sink = sink.ok_or("no transcriberbin audio sink pad")?;
        let ours = transcriber(tone_model, server)?;
        sink.set_property("transcriber", &ours);
        sink.set_property("translation-languages", &stream.languages);
        if sink
            .property::<Option<gst::Element>>("transcriber")
            .as_ref()
            != Some(&ours)
        {
            return Err(format!("{} did not take our transcriber", sink.name()));
        }
        by_name(&pipeline, &format!("aq{k}"))
            .static_pad("src")
            .unwrap()
            .link(&sink)
            .map_err(|e| format!("audio into {}: {e}", sink.name()))?;
        link_out(&pipeline, &tb, &src, &format!("aout{k}"))?;
        audio::play_live(
            &pipeline,
            &format!("a{k}"),
            audio::tone(100, &audio::burst_frames(stream.bursts)),
        );
        transcribers.push(ours);
    }
    let cc_data = record_caption_meta(&by_name(&pipeline, "vout").static_pad("sink").unwrap());
    let latency = Arc::new(Mutex::new(None));
    let ended = {
        let (pipeline_ref, latency) = (pipeline.clone(), latency.clone());
        pipeline::play(&pipeline, 60, move || {
            let _ = pipeline_ref.state(gst::ClockTime::from_seconds(10));
            let mut q = gst::query::Latency::new();
            if pipeline_ref.query(&mut q) {
                *latency.lock().unwrap() = Some(q.result());
            }
        })?
    };
    let unexpected: Vec<&String> = ended
        .warnings
        .iter()
        .filter(|w| !w.contains("behind the audio, more than the latency"))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!(
            "warnings (a transcriber ERROR sends transcriberbin to passthrough): {unexpected:?}"
        ));
    }
    check_settings(&transcribers)?;
    let (live, min, _) = latency.lock().unwrap().ok_or("no LATENCY answer")?;
    let least = gst::ClockTime::from_mseconds(u64::from(LATENCY_MS));
    if !live || min < least {
        return Err(format!(
            "pipeline latency live {live}, {min}: expected live, at least {least}"
        ));
    }
    let frames = cc_data.lock().unwrap();
    expect("video frames out", &frames.len(), &(VIDEO_FRAMES as usize))?;
    let mut captions = Captions::new();
    for data in frames.iter().flatten() {
        captions.push_cc_data(data);
    }
    println!("interop:   read back: {}", captions.describe());
    drop(frames);
    Ok(Run {
        streams: streams.to_vec(),
        transcripts: ended
            .messages
            .iter()
            .filter(|m| m.as_str() == "voxtralrt-transcript")
            .count(),
        transcribers,
        captions,
        latency: min,
    })
}

/// Ours, set up as for the tests/interop.rs 0.13 runs: overload=queue,
/// since a busy machine must not cost words here.
fn transcriber(tone_model: &str, server: Option<&ChatDouble>) -> Result<gst::Element, String> {
    let mut builder = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", tone_model)
        .property("threads", 1u32)
        .property("post-messages", true)
        .property_from_str("overload", "queue");
    if let Some(server) = server {
        builder = builder
            .property("translate-url", server.base())
            .property("translate-model", chat::MODEL);
    }
    builder
        .build()
        .map_err(|e| format!("voxtralrttranscriber (GST_PLUGIN_PATH): {e}"))
}

/// What transcriberbin set on each transcriber: its `latency`,
/// `translate-latency` and `lateness`, and the sink pad's `language-code`.
fn check_settings(transcribers: &[gst::Element]) -> Result<(), String> {
    for ours in transcribers {
        let name = ours.name();
        expect(
            &format!("{name} latency"),
            &ours.property::<u32>("latency"),
            &LATENCY_MS,
        )?;
        let translate_latency = ours.property::<u32>("translate-latency");
        expect(
            &format!("{name} translate-latency"),
            &translate_latency,
            &TRANSLATE_LATENCY_MS,
        )?;
        expect(
            &format!("{name} lateness"),
            &ours.property::<u32>("lateness"),
            &0,
        )?;
        let language = ours.property::<Option<String>>("language-code");
        expect(
            &format!("{name} language-code"),
            &language,
            &Some("en-US".to_owned()),
        )?;
    }
    Ok(())
}

fn link(pipeline: &gst::Pipeline, tb: &gst::Element, from: &str, pad: &str) -> Result<(), String> {
    by_name(pipeline, from)
        .link_pads(Some("src"), tb, Some(pad))
        .map_err(|e| format!("{from} to transcriberbin's {pad}: {e}"))
}

fn link_out(
    pipeline: &gst::Pipeline,
    tb: &gst::Element,
    pad: &str,
    to: &str,
) -> Result<(), String> {
    tb.link_pads(Some(pad), &by_name(pipeline, to), Some("sink"))
        .map_err(|e| format!("transcriberbin's {pad} to {to}: {e}"))
}

/// The cc_data caption meta of each video frame that passes `pad` (empty
/// for a frame without).
fn record_caption_meta(pad: &gst::Pad) -> Arc<Mutex<Vec<Vec<Vec<u8>>>>> {
    let frames = Arc::new(Mutex::new(Vec::new()));
    let into = frames.clone();
    pad.add_probe(gst::PadProbeType::BUFFER, move |_, info| {
        if let Some(b) = info.buffer() {
            let metas = b
                .iter_meta::<gst_video::VideoCaptionMeta>()
                .filter(|m| m.caption_type() == gst_video::VideoCaptionType::Cea708Raw)
                .map(|m| m.data().to_vec())
                .collect();
            into.lock().unwrap().push(metas);
        }
        gst::PadProbeReturn::Ok
    });
    frames
}
