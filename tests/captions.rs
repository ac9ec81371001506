// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Closed captions from `voxtralrttranscriber`'s src pad on stock GStreamer
//! 1.22: CC output -> ccconverter -> cccombiner on video -> x264enc (A/53
//! SEI) -> h264parse -> mpegtsmux -> file, read back with tsdemux !
//! h264parse ! ccextractor (decoded here with cea608-types, or through
//! gst-plugins-rs cea608tott for pop-on) and with ffmpeg's subcc.
//!
//! The tone fixture writes one word "x" per 80 ms frame holding a 1 kHz
//! tone, `delay` early by construction: the word of tone frame f belongs at
//! f x 80 ms - delay (tests/fixtures/README-tone.md, tests/timing.rs).

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use common::cc708::{services_708, services_in_ts};

use common::cc608::cc1_chars;
use common::readback::{self, assert_shown_in_time, INTERVAL_MS, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_frames, tone_model, truth};

use std::path::Path;

use gst::prelude::*;

const MS: u64 = 1_000_000;
const FRAME: usize = 1280;
const F32_CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";
/// Pop-on shows a line when it is full, at a sentence end or after a
/// 500 ms pause: measured from the caption's last word, the pause, a decode
/// interval and the end-of-caption code.
const POP_ON_BOUND_MS: u64 = INTERVAL_MS + 500 + 250;

fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gst023::init().unwrap();
        common::init_plugin();
        gstrsclosedcaption::plugin_register_static().expect("registering rsclosedcaption");
        gsttextwrap::plugin_register_static().expect("registering rstextwrap");
    });
}

/// 100 ms buffers of the tone-burst audio, timestamped from 0.
fn audio_buffers() -> Vec<gst::Buffer> {
    let audio = tone_audio(66, &tone_frames());
    audio
        .chunks(1600)
        .enumerate()
        .map(|(i, piece)| {
            let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
            let bm = b.get_mut().unwrap();
            bm.set_pts(gst::ClockTime::from_mseconds(i as u64 * 100));
            bm.set_duration(gst::ClockTime::from_mseconds(100));
            b
        })
        .collect()
}

/// Runs `pipeline` (non-live; an appsrc named "audio" gets the tone audio)
/// to EOS; panics on an ERROR. Returns the WARNING messages.
fn run_to_eos(pipeline: &gst::Pipeline) -> Vec<String> {
    if let Some(src) = pipeline.by_name("audio") {
        // appsrc through its properties and signals (no gstreamer-app
        // binding needed).
        src.set_property("caps", F32_CAPS.parse::<gst::Caps>().unwrap());
        src.set_property("format", gst::Format::Time);
        for b in audio_buffers() {
            let flow = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
            assert_eq!(flow, gst::FlowReturn::Ok);
        }
        let flow = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        assert_eq!(flow, gst::FlowReturn::Ok);
    }
    pipeline.set_state(gst::State::Playing).unwrap();
    let bus = pipeline.bus().unwrap();
    let mut warnings = Vec::new();
    loop {
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(120),
                &[
                    gst::MessageType::Eos,
                    gst::MessageType::Error,
                    gst::MessageType::Warning,
                ],
            )
            .expect("EOS or ERROR in time");
        match msg.view() {
            gst::MessageView::Eos(_) => break,
            gst::MessageView::Error(e) => {
                pipeline.set_state(gst::State::Null).unwrap();
                panic!("{:?}: {} ({:?})", e.src(), e.error(), e.debug());
            }
            gst::MessageView::Warning(w) => warnings.push(w.error().to_string()),
            _ => unreachable!(),
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    warnings
}

fn launch(line: &str) -> gst::Pipeline {
    gst::parse::launch(line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .downcast::<gst::Pipeline>()
        .unwrap()
}

/// Writes the tone audio's captions on `seconds` of video at `fps` into an
/// MPEG-TS file with H.264: the stock-1.22 chain.
fn write_ts(path: &Path, extra: &str, fps: &str, seconds: u64) -> gst::Element {
    let (n, d): (u64, u64) = {
        let (n, d) = fps.split_once('/').unwrap();
        (n.parse().unwrap(), d.parse().unwrap())
    };
    let pipeline = launch(&format!(
        "appsrc name=audio ! voxtralrttranscriber name=t model-path={model} threads=1 {extra} ! \
           ccconverter ! closedcaption/x-cea-708,format=cc_data ! queue ! c.caption {video}",
        model = tone_model(),
        video = readback::video_into_ts(seconds * n / d, fps, path),
    ));
    let warnings = run_to_eos(&pipeline);
    assert!(warnings.is_empty(), "{warnings:?}");
    pipeline.by_name("t").unwrap()
}

/// Reads a TS file back with GStreamer: tsdemux ! h264parse ! ccextractor,
/// then `tail` after ccconverter to raw CEA-608. Returns the buffers out of
/// `tail` and the first video frame's PTS (the origin of the times).
fn read_back_gst(path: &Path, tail: &str) -> (Vec<(u64, Vec<u8>)>, u64) {
    let pipeline = launch(&format!(
        "filesrc location={} ! tsdemux ! h264parse ! ccextractor name=x \
         x. ! queue ! fakesink name=video signal-handoffs=true sync=false \
         x.caption ! queue ! ccconverter ! closedcaption/x-cea-608,format=raw ! {tail} ! \
           fakesink name=cc signal-handoffs=true sync=false async=false",
        path.display()
    ));
    let video = common::handoffs(&pipeline, "video");
    let cc = common::handoffs(&pipeline, "cc");
    run_to_eos(&pipeline);
    let origin = video.lock().unwrap()[0].pts().unwrap().nseconds();
    let out = cc
        .lock()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b.pts().unwrap().nseconds() - origin,
                b.map_readable().unwrap().to_vec(),
            )
        })
        .collect();
    (out, origin)
}

#[test]
fn roll_up_captions_in_h264_over_mpeg_ts_read_back_with_ccextractor_and_ffmpeg() {
    init();
    let dir = common::scratch_dir("captions-roll-up");
    let ts = dir.join("captions.ts");
    let t = write_ts(&ts, "", "30000/1001", 7);

    let (pairs, _) = read_back_gst(&ts, "identity");
    let pairs: Vec<(u64, [u8; 2])> = pairs
        .into_iter()
        .flat_map(|(t, data)| {
            data.chunks(2)
                .map(|p| (t, [p[0], p[1]]))
                .collect::<Vec<_>>()
        })
        .collect();
    let chars = cc1_chars(&pairs);
    let text: String = chars.iter().map(|(_, c)| c).collect();
    assert_eq!(
        text.split_whitespace().collect::<Vec<_>>().len(),
        18,
        "{text:?}"
    );
    let xs: Vec<u64> = chars
        .iter()
        .filter(|(_, c)| *c == 'x')
        .map(|(t, _)| *t)
        .collect();
    let gst_worst = assert_shown_in_time("ccextractor", &xs, ROLL_UP_BOUND_MS);

    let shown = readback::x_times(&ts);
    let ffmpeg_worst = assert_shown_in_time("ffmpeg", &shown, ROLL_UP_BOUND_MS);

    let stats = t.property::<gst::Structure>("stats");
    assert_eq!(stats.get::<u64>("caption-chars-replaced-608").unwrap(), 0);
    assert_eq!(stats.get::<u64>("caption-words-dropped").unwrap(), 0);
    eprintln!(
        "roll-up2 at 29.97 fps through x264enc/mpegtsmux: worst {gst_worst} ms (ccextractor), \
         {ffmpeg_worst} ms (ffmpeg) after the word's place"
    );
}

#[test]
fn pop_on_captions_read_back_through_cea608tott() {
    init();
    let dir = common::scratch_dir("captions-pop-on");
    let ts = dir.join("captions.ts");
    write_ts(&ts, "caption-mode=pop-on", "25/1", 7);
    let (captions, _) = read_back_gst(&ts, "cea608tott ! text/x-raw,format=utf8");
    // A caption is shown once no word came for 500 ms: the first burst
    // alone, the second and third (400 ms apart) together (29 columns).
    let texts: Vec<String> = captions
        .iter()
        .map(|(_, d)| String::from_utf8(d.clone()).unwrap().trim().to_owned())
        .collect();
    assert_eq!(
        texts,
        vec!["x x x", "x x x x x x x x x x x x x x x"],
        "{captions:?}"
    );
    // Each shows within POP_ON_BOUND_MS of its last word's place.
    let frames = tone_frames();
    let last_words = [frames[2], frames[17]];
    let mut worst = 0;
    for ((t, _), f) in captions.iter().zip(last_words) {
        let late = (*t as i64 - truth(f) as i64) / MS as i64;
        assert!(
            (-(INTERVAL_MS as i64)..=POP_ON_BOUND_MS as i64).contains(&late),
            "caption at {} ms, {late} ms after its last word",
            t / MS
        );
        worst = worst.max(late);
    }
    eprintln!("pop-on at 25 fps: captions shown at worst {worst} ms after their last word");
}

/// The tone audio through `voxtralrttranscriber ! capsfilter caps=<caps>`
/// in a harness; returns the buffers out, the caps at the end and the
/// capsfilter (for renegotiating half-way with `midway`).
fn harness_run(
    caps: &str,
    midway: impl FnOnce(&gst::Element, &mut gst_check::Harness) -> Vec<gst::Buffer>,
) -> (Vec<gst::Buffer>, gst::Caps) {
    harness_run_with("", caps, midway)
}

/// The same with transcriber properties `props`.
fn harness_run_with(
    props: &str,
    caps: &str,
    midway: impl FnOnce(&gst::Element, &mut gst_check::Harness) -> Vec<gst::Buffer>,
) -> (Vec<gst::Buffer>, gst::Caps) {
    init();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 {props} ! capsfilter name=cf caps={caps}",
        tone_model()
    ));
    h.set_src_caps_str(F32_CAPS);
    let cf = h
        .element()
        .unwrap()
        .downcast::<gst::Bin>()
        .unwrap()
        .by_name("cf")
        .unwrap();
    let audio = audio_buffers();
    let half = audio.len() / 2;
    let mut out = Vec::new();
    let mut midway = Some(midway);
    for (i, b) in audio.into_iter().enumerate() {
        if i == half {
            out.extend(midway.take().unwrap()(&cf, &mut h));
        }
        h.push(b).unwrap();
    }
    h.push_event(gst::event::Eos::new());
    while let Ok(Some(b)) = h.pull_until_eos() {
        out.push(b);
    }
    let caps = h.sinkpad().unwrap().current_caps().expect("negotiated");
    (out, caps)
}

/// The CC1 pairs of buffers in a caption format.
fn pairs_of(buffers: &[gst::Buffer], format: &str) -> Vec<(u64, [u8; 2])> {
    buffers
        .iter()
        .flat_map(|b| {
            let t = b.pts().unwrap().nseconds();
            let data = b.map_readable().unwrap().to_vec();
            match format {
                "raw" => vec![(t, [data[0], data[1]])],
                "s334-1a" => vec![(t, [data[1], data[2]])],
                // cc_data: the valid field 1 triples.
                _ => data
                    .chunks(3)
                    .filter(|c| c[0] == 0xfc)
                    .map(|c| (t, [c[1], c[2]]))
                    .collect(),
            }
        })
        .collect()
}

fn x_times(pairs: &[(u64, [u8; 2])]) -> Vec<u64> {
    cc1_chars(pairs)
        .into_iter()
        .filter(|(_, c)| *c == 'x')
        .map(|(t, _)| t)
        .collect()
}

/// Checks that buffers follow each other on the grid of `fps` from 0.
fn assert_on_grid(buffers: &[gst::Buffer], numer: u64, denom: u64) {
    assert!(buffers[0].flags().contains(gst::BufferFlags::DISCONT));
    for (i, b) in buffers.iter().enumerate() {
        let i = i as u64;
        let pts = b.pts().unwrap().nseconds();
        assert_eq!(pts, i * denom * 1_000_000_000 / numer, "frame {i}");
        assert_eq!(
            pts + b.duration().unwrap().nseconds(),
            (i + 1) * denom * 1_000_000_000 / numer
        );
    }
}

#[test]
fn without_a_framerate_from_downstream_the_output_is_29_97_fps() {
    let (buffers, caps) = harness_run("closedcaption/x-cea-608,format=raw", |_, _| Vec::new());
    let s = caps.structure(0).unwrap();
    assert_eq!(
        s.get::<gst::Fraction>("framerate").unwrap(),
        gst::Fraction::new(30000, 1001)
    );
    assert_on_grid(&buffers, 30000, 1001);
    // Every frame up to the end of the audio (5.28 s) and its last words.
    assert!(
        buffers.len() as u64 >= 5_280 * 30 / 1001,
        "{}",
        buffers.len()
    );
    assert_shown_in_time(
        "raw 608",
        &x_times(&pairs_of(&buffers, "raw")),
        ROLL_UP_BOUND_MS,
    );
}

#[test]
fn every_broadcast_frame_rate_and_format_carries_the_words_on_its_grid() {
    for (fps, format, (n, d)) in [
        ("25/1", "closedcaption/x-cea-608,format=raw", (25, 1)),
        ("50/1", "closedcaption/x-cea-608,format=s334-1a", (50, 1)),
        (
            "60000/1001",
            "closedcaption/x-cea-708,format=cc_data",
            (60000, 1001),
        ),
        ("60/1", "closedcaption/x-cea-708,format=cc_data", (60, 1)),
    ] {
        let (buffers, caps) = harness_run(&format!("{format},framerate={fps}"), |_, _| Vec::new());
        let s = caps.structure(0).unwrap();
        assert_eq!(
            s.get::<gst::Fraction>("framerate").unwrap(),
            gst::Fraction::new(n, d)
        );
        assert_on_grid(&buffers, n as u64, d as u64);
        let kind = s.get::<&str>("format").unwrap();
        let pairs = pairs_of(&buffers, kind);
        if n > 31 * d && kind != "cc_data" {
            // Field 1 has room on every other frame above 30 fps.
            for (i, (_, pair)) in pairs.iter().enumerate() {
                assert!(i % 2 == 0 || *pair == [0x80, 0x80], "{fps}: frame {i}");
            }
        }
        let worst = assert_shown_in_time(fps, &x_times(&pairs), ROLL_UP_BOUND_MS);
        eprintln!("{format} at {fps}: worst {worst} ms after the word's place");
    }
}

#[test]
fn a_frame_rate_captions_are_not_defined_at_is_refused_when_linking() {
    // The src pad offers the broadcast rates only (24 to 60 fps, those a
    // CDP can name): a 15 fps caption stream cannot be linked at all.
    init();
    let error = gst::parse::launch(&format!(
        "audiotestsrc ! voxtralrttranscriber model-path={} ! \
         closedcaption/x-cea-608,format=raw,framerate=15/1 ! fakesink",
        tone_model()
    ))
    .expect_err("no captions at 15 fps");
    assert!(error.to_string().contains("can't handle caps"), "{error}");
}

#[test]
fn a_new_frame_rate_mid_stream_goes_on_from_where_the_next_frame_would_start() {
    let (buffers, caps) = harness_run(
        "closedcaption/x-cea-608,format=raw,framerate=30000/1001",
        |cf, h| {
            // Wait for the first frames, then ask for 25 fps.
            let first = h.pull().unwrap();
            cf.set_property(
                "caps",
                "closedcaption/x-cea-608,format=raw,framerate=25/1"
                    .parse::<gst::Caps>()
                    .unwrap(),
            );
            vec![first]
        },
    );
    let s = caps.structure(0).unwrap();
    assert_eq!(
        s.get::<gst::Fraction>("framerate").unwrap(),
        gst::Fraction::new(25, 1)
    );
    // Contiguous frames: 29.97 fps up to the switch, 25 fps after it.
    let durations: Vec<u64> = buffers
        .iter()
        .map(|b| b.duration().unwrap().mseconds())
        .collect();
    let switch = durations
        .iter()
        .position(|&d| d == 40)
        .expect("25 fps frames");
    assert!(switch > 0 && durations[..switch].iter().all(|&d| d == 33));
    assert!(
        durations[switch..].iter().all(|&d| d == 40),
        "{durations:?}"
    );
    for pair in buffers.windows(2) {
        assert_eq!(
            pair[0].pts().unwrap() + pair[0].duration().unwrap(),
            pair[1].pts().unwrap()
        );
    }
    assert_shown_in_time(
        "renegotiated",
        &x_times(&pairs_of(&buffers, "raw")),
        ROLL_UP_BOUND_MS,
    );
}

/// The CC1 words of the CDP caption buffers that reach the fakesink "cc"
/// of a live pipeline whose audiotestsrc "asrc" (1 kHz, one 80 ms frame
/// per buffer) keeps its tone on the tone frames only.
fn live_cc1_words(pipeline: &gst::Pipeline) -> Vec<String> {
    let frames = tone_frames();
    pipeline
        .by_name("asrc")
        .unwrap()
        .static_pad("src")
        .unwrap()
        .add_probe(gst::PadProbeType::BUFFER, move |_, info| {
            if let Some(b) = info.buffer_mut() {
                let f = (b.offset() / FRAME as u64) as usize;
                if !frames.contains(&f) {
                    b.make_mut().map_writable().unwrap().fill(0);
                }
            }
            gst::PadProbeReturn::Ok
        });
    let cdps = common::handoffs(pipeline, "cc");
    let warnings = run_to_eos(pipeline);
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut parser = cdp_types::CDPParser::new();
    let mut pairs = Vec::new();
    for b in cdps.lock().unwrap().iter() {
        parser.parse(&b.map_readable().unwrap()).unwrap();
        if let Some(cea608) = parser.cea608() {
            for p in cea608 {
                if let cea708_types::Cea608::Field1(a, b) = p {
                    pairs.push((0, [*a, *b]));
                }
            }
        }
    }
    let text: String = cc1_chars(&pairs).into_iter().map(|(_, c)| c).collect();
    text.split_whitespace().map(str::to_owned).collect()
}

const LIVE_SOURCES: &str = "videotestsrc is-live=true num-buffers=210 pattern=black ! \
       video/x-raw,width=160,height=120,framerate=30000/1001 ! queue name=vq \
     audiotestsrc name=asrc is-live=true num-buffers=80 samplesperbuffer=1280 freq=1000 \
       volume=0.5 ! audio/x-raw,format=F32LE,rate=16000,channels=1 ! queue name=aq";

#[test]
fn transcriberbin_and_our_caption_output_give_the_same_words() {
    init();
    // Ours: CDP out of the element, onto the video with cccombiner.
    let ours = launch(&format!(
        "{LIVE_SOURCES} aq. ! voxtralrttranscriber model-path={} threads=1 ! \
           ccconverter ! closedcaption/x-cea-708,format=cdp ! queue ! c.caption \
         vq. ! cccombiner name=c ! ccextractor name=x x. ! fakesink sync=true \
         x.caption ! queue ! fakesink name=cc signal-handoffs=true sync=true async=false",
        tone_model()
    ));
    let ours = live_cc1_words(&ours);

    // transcriberbin (mux-method given at construction on 1.22) with our
    // element as its transcriber, CDP caption meta.
    let pipeline = launch(&format!(
        "{LIVE_SOURCES} ccextractor name=x x. ! fakesink sync=true \
         x.caption ! queue ! fakesink name=cc signal-handoffs=true sync=true async=false \
         fakesink name=aout sync=true"
    ));
    let transcriber = gst::ElementFactory::make("voxtralrttranscriber")
        .property("model-path", tone_model())
        .property("threads", 1u32)
        .build()
        .unwrap();
    let tb = gst::ElementFactory::make("transcriberbin")
        .property_from_str("mux-method", "cea708")
        .property(
            "cc-caps",
            "closedcaption/x-cea-708,format=cdp"
                .parse::<gst::Caps>()
                .unwrap(),
        )
        .build()
        .unwrap();
    tb.set_property("transcriber", &transcriber);
    pipeline.add(&tb).unwrap();
    common::link_transcriberbin(&pipeline, &tb);
    let theirs = live_cc1_words(&pipeline);

    assert_eq!(ours, vec!["x"; tone_frames().len()]);
    assert_eq!(ours, theirs);
}

#[test]
fn a_40_character_word_and_non_latin_text_reach_ffmpeg_cut_and_transliterated() {
    // The tone model only says "x": these words go through the element's
    // encoder (src/caption) directly, then the same stock chain.
    use gstvoxtralrt::caption::{CcFormat, Channel608, Config, Encoder, Packer};
    init();
    let long = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"; // 40 characters
    let mut encoder = Encoder::new(Config::default(), 0);
    for (i, word) in ["Über", "привет", "北京", long].iter().enumerate() {
        let start = i as u64 * 500 * MS;
        encoder.push_word(word, start, start + 400 * MS);
    }
    let framerate = Config::default().framerate;
    let mut packer = Packer::new(CcFormat::Cea708CcData, framerate, Channel608::Cc1).unwrap();
    let frames = encoder.frames_until(4_000 * MS);
    let losses = encoder.losses();
    // п р и в е т, 北 京: transliterated; "Ü" is in 608's extended set.
    assert_eq!(losses.cea608_replaced, 8);

    let dir = common::scratch_dir("captions-text");
    let ts = dir.join("captions.ts");
    let pipeline = launch(&format!(
        "appsrc name=cc format=time caps=closedcaption/x-cea-708,format=cc_data,framerate=30000/1001 ! \
           queue ! c.caption {}",
        readback::video_into_ts(frames.len() as u64, "30000/1001", &ts)
    ));
    let src = pipeline.by_name("cc").unwrap();
    for frame in frames {
        let (pts, duration) = (frame.pts, frame.duration);
        let mut b = gst::Buffer::from_mut_slice(packer.pack(frame));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_nseconds(pts));
        bm.set_duration(gst::ClockTime::from_nseconds(duration));
        let flow = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
        assert_eq!(flow, gst::FlowReturn::Ok);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    run_to_eos(&pipeline);

    let screens: Vec<String> = readback::subcc_cues(&ts)
        .into_iter()
        .map(|(_, text)| text)
        .collect();
    // The Latin line whole, then the long word cut at 32 columns, rolled
    // up on two rows.
    assert!(
        screens.iter().any(|s| s == "Über privet Bei Jing"),
        "{screens:?}"
    );
    assert_eq!(
        screens.last().unwrap(),
        &format!("{}\n{}", &long[..32], &long[32..])
    );
}

#[test]
fn a_one_row_clip_reaches_ffmpeg_with_and_without_real_time_mode() {
    // Three words, one row, then the end of the stream: the row must be
    // committed and erased at EOS, or ffmpeg's default mode writes no cue.
    init();
    let dir = common::scratch_dir("captions-one-row");
    let (wav, ts) = (dir.join("in.wav"), dir.join("one-row.ts"));
    let mut audio = vec![0.0f32; 30 * common::FRAME];
    common::add_tone(&mut audio, 12..15, 1000.0);
    common::write_wav(&wav, &audio);
    let pipeline = launch(&format!(
        "filesrc location={wav} ! wavparse ! voxtralrttranscriber model-path={model} threads=1 ! \
           ccconverter ! closedcaption/x-cea-708,format=cc_data ! queue ! c.caption {video}",
        wav = wav.display(),
        model = tone_model(),
        video = readback::video_into_ts(90, "30000/1001", &ts),
    ));
    let warnings = run_to_eos(&pipeline);
    assert!(warnings.is_empty(), "{warnings:?}");
    for real_time in [true, false] {
        let cues = readback::subcc_cues_in(&ts, real_time);
        let with_text: Vec<&(u64, String)> = cues.iter().filter(|c| c.1.contains('x')).collect();
        let last = with_text.last().map(|c| c.1.as_str()).unwrap_or_default();
        assert_eq!(
            last.split_whitespace().collect::<Vec<_>>(),
            ["x", "x", "x"],
            "real_time {real_time}: {cues:?}"
        );
    }
}

/// Words of the decoded screens of ffmpeg's cues, in order, without
/// repeats of a screen's earlier rows.
fn cue_words(cues: &[(u64, String)]) -> String {
    cues.iter()
        .map(|(_, t)| t.replace('\n', " "))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn two_languages_go_on_cc1_and_cc3_and_on_services_1_and_2_of_one_video() {
    // Two transcribers, two audio tracks. The tone model says "x" for each
    // burst; the second track's house dictionary makes that "hola", so the
    // two tracks read differently. gst-plugins-rs' cea708mux (the interop
    // build's, 0.13) merges their cc_data.
    init();
    let dir = common::scratch_dir("captions-bilingual");
    let (wav, ts) = (dir.join("speech.wav"), dir.join("bilingual.ts"));
    let spanish = dir.join("spanish.txt");
    common::write_wav(&wav, &tone_audio(66, &tone_frames()));
    std::fs::write(&spanish, "x => hola\n").unwrap();
    let pipeline = launch(&format!(
        "filesrc location={wav} ! wavparse ! \
           voxtralrttranscriber model-path={tone} threads=1 caption-channel=cc1 caption-service=1 ! \
           closedcaption/x-cea-708,format=cc_data ! queue ! m.sink_0 \
         filesrc location={wav} ! wavparse ! \
           voxtralrttranscriber model-path={tone} threads=1 replacements={spanish} \
             caption-channel=cc3 caption-service=2 ! \
           closedcaption/x-cea-708,format=cc_data ! queue ! m.sink_1 \
         cea708mux name=m ! queue ! c.caption {video}",
        wav = wav.display(),
        tone = tone_model(),
        spanish = spanish.display(),
        video = readback::video_into_ts(180, "30000/1001", &ts),
    ));
    let warnings = run_to_eos(&pipeline);
    assert!(warnings.is_empty(), "{warnings:?}");

    // CEA-608, read by ffmpeg: field 1 (CC1) and field 2 (CC3).
    let cc1 = cue_words(&readback::subcc_cues_with(
        &ts,
        &["-data_field", "0"],
        "cc1.srt",
    ));
    let cc3 = cue_words(&readback::subcc_cues_with(
        &ts,
        &["-data_field", "1"],
        "cc3.srt",
    ));
    assert!(cc1.contains("x x x") && !cc1.contains("hola"), "CC1: {cc1}");
    assert!(
        cc3.contains("hola hola hola") && !cc3.contains('x'),
        "CC3: {cc3}"
    );

    // CEA-708, read back with GStreamer and decoded here: services 1 and 2.
    let services = services_in_ts(&ts);
    let service = |n: u8| services.get(&n).cloned().unwrap_or_default();
    assert!(service(1).contains("x x x"), "{services:?}");
    assert!(!service(1).contains("hola"), "{services:?}");
    assert!(service(2).contains("hola hola hola"), "{services:?}");
    assert!(!service(2).contains('x'), "{services:?}");
    assert_eq!(services.keys().copied().collect::<Vec<_>>(), [1, 2]);
}

/// One microphone, one transcriber: the transcript on CC1 and service 1
/// from its src pad, and its Spanish (the chat double's "[es] ..." of each
/// unit) on CC3 and service 2 from a translate pad with caption caps; read
/// back with ffmpeg (608) and decoded here (708). The src branch's queue
/// holds a unit's worth (docs/translation.md): with a default one the mux
/// waits for the translation while the src pad waits for the mux.
#[cfg(feature = "translate")]
#[test]
fn one_microphone_gives_english_on_cc1_and_service_1_and_spanish_on_cc3_and_service_2() {
    use common::chat_double::{ChatDouble, SERVED_MODEL};
    init();
    let server = ChatDouble::start(Default::default());
    let dir = common::scratch_dir("captions-translated");
    let (wav, ts) = (dir.join("speech.wav"), dir.join("translated.ts"));
    common::write_wav(&wav, &tone_audio(66, &tone_frames()));
    let pipeline = launch(&format!(
        "filesrc location={wav} ! wavparse ! \
           voxtralrttranscriber name=t model-path={tone} threads=1 caption-channel=cc1 \
             caption-service=1 translate-url={url} translate-model={SERVED_MODEL} \
             translate_src_0::language-code=es ! \
           closedcaption/x-cea-708,format=cc_data ! \
           queue max-size-time=10000000000 max-size-buffers=0 max-size-bytes=0 ! m.sink_0 \
         t.translate_src_0 ! closedcaption/x-cea-708,format=cc_data ! queue ! m.sink_1 \
         cea708mux name=m ! queue ! c.caption {video}",
        wav = wav.display(),
        tone = tone_model(),
        url = server.base(),
        video = readback::video_into_ts(180, "30000/1001", &ts),
    ));
    let warnings = run_to_eos(&pipeline);
    assert!(warnings.is_empty(), "{warnings:?}");
    let pad = pipeline
        .by_name("t")
        .unwrap()
        .static_pad("translate_src_0")
        .unwrap();
    assert_eq!(
        pad.property::<u32>("caption-service"),
        2,
        "the pad's default"
    );

    // Each roll-up row once, in its final form.
    let rows = |field: &str, srt: &str| {
        readback::rolled_rows(&readback::subcc_cues_with(
            &ts,
            &["-data_field", field],
            srt,
        ))
        .join(" ")
    };
    let (cc1, cc3) = (rows("0", "cc1.srt"), rows("1", "cc3.srt"));
    let count = |text: &str| text.split_whitespace().filter(|w| *w == "x").count();
    let frames = tone_frames().len();
    assert!(!cc1.contains("[es]"), "CC1: {cc1}");
    assert_eq!(count(&cc1), frames, "CC1: {cc1}");
    assert!(cc3.contains("[es] x x"), "CC3: {cc3}");
    assert_eq!(count(&cc3), frames, "CC3: {cc3}");

    let services = services_in_ts(&ts);
    let service = |n: u8| services.get(&n).cloned().unwrap_or_default();
    assert!(
        !service(1).contains("[es]") && service(1).contains("x x x"),
        "{services:?}"
    );
    assert!(service(2).contains("[es] x x"), "{services:?}");
    // 708's rows are not spaced as words: count the characters.
    let xs = |text: &str| text.chars().filter(|c| *c == 'x').count();
    assert_eq!(xs(&service(1)), frames, "{services:?}");
    assert_eq!(xs(&service(2)), frames, "{services:?}");
    assert_eq!(services.keys().copied().collect::<Vec<_>>(), [1, 2]);
    eprintln!(
        "one microphone: CC1 {cc1:?}; CC3 {cc3:?}; {} requests",
        server.requests().len()
    );
}

#[test]
fn cc3_is_not_offered_as_raw_608_and_a_raw_only_downstream_gets_a_clear_error() {
    init();
    let pipeline = launch(&format!(
        "audiotestsrc num-buffers=10 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber model-path={} threads=1 caption-channel=cc3 ! \
         closedcaption/x-cea-608,format=raw ! fakesink",
        common::tiny_model().display()
    ));
    let msg = common::run_to_end(pipeline.upcast_ref(), std::time::Duration::from_secs(60));
    let gst::MessageView::Error(e) = msg.view() else {
        panic!("{msg:?}");
    };
    assert!(
        e.error().to_string().contains("caption-channel=cc3"),
        "{}",
        e.error()
    );
}

#[test]
fn captions_cross_a_closed_speech_gate_unchanged_in_608_roll_up_and_pop_on_and_708() {
    // The tone fixture's pause of 1.36 s closes the gate: the caption
    // frames go on over it on their grid, and every word shows as it does
    // without the gate. The hangover fits the fixture: the pause must leave
    // the pre-roll (0.64 s) after it, since the fixture places a word a
    // delay before its tone, and 500 ms would close the gate inside the
    // 800 ms burst (a steady tone stops sounding like a voice to the
    // detector after about 220 ms of it).
    let gate = "speech-only=true speech-hangover=700";
    for (mode, caps, format) in [
        (
            "roll-up2",
            "closedcaption/x-cea-608,format=raw,framerate=30/1",
            "raw",
        ),
        (
            "pop-on",
            "closedcaption/x-cea-608,format=raw,framerate=30/1",
            "raw",
        ),
        (
            "roll-up2",
            "closedcaption/x-cea-708,format=cc_data,framerate=30/1",
            "cc_data",
        ),
    ] {
        let props = format!("caption-mode={mode}");
        let (plain, _) = harness_run_with(&props, caps, |_, _| Vec::new());
        let (gated, _) = harness_run_with(&format!("{props} {gate}"), caps, |_, _| Vec::new());
        assert_on_grid(&gated, 30, 1);
        let (xs_plain, xs_gated) = (
            x_times(&pairs_of(&plain, format)),
            x_times(&pairs_of(&gated, format)),
        );
        assert_eq!(xs_plain.len(), tone_frames().len(), "{mode} {format}");
        // A word may move by one 80 ms frame with the gate, and its
        // caption by that and a caption frame.
        assert_eq!(
            xs_gated.len(),
            xs_plain.len(),
            "{mode} {format}: {xs_gated:?}"
        );
        for (g, p) in xs_gated.iter().zip(&xs_plain) {
            assert!(
                g.abs_diff(*p) <= 80_000_000 + 33_400_000,
                "{mode} {format}: {g} for {p}"
            );
        }
        if format == "cc_data" {
            assert_eq!(services_708(&gated), services_708(&plain), "708 service 1");
            assert!(services_708(&gated)
                .get(&1)
                .is_some_and(|t| t.contains('x')));
        }
    }
}
