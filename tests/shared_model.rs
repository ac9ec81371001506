// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Streams of one model in one process (issue 54): one load and a session
//! each, the weights repacked once at load, the decoder steps of the
//! streams run together; each stream's words and their audio positions are
//! the ones it gives alone, and a stream that stops or is aborted in the
//! middle of the others' steps leaves them untouched.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::sync::{Arc, Barrier};

use gstvoxtralrt::engine::{ModelPool, ModelSpec, Stream};
use gstvoxtralrt::voxtral::{AbortHandle, StreamConfig};

/// What a stream said: each update's text with the audio it was heard from.
type Said = Vec<(String, u64, u64)>;

const CHUNK: usize = 1600;

fn init() {
    gst::init().unwrap();
}

/// A copy of `fixture` only this test uses, so that the loads and batches
/// counted are this test's.
fn own_copy(fixture: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = common::scratch_dir(name).join("model.gguf");
    std::fs::copy(fixture, &path).unwrap();
    path
}

/// Runs `audio` through `stream` in pieces of CHUNK samples to the end.
fn say(stream: &mut Stream, audio: &[f32]) -> Said {
    let mut said = say_all_but_the_end(stream, audio);
    say_the_end(stream, &mut said);
    said
}

/// Begins a stream and feeds it `audio` in pieces of CHUNK samples.
fn say_all_but_the_end(stream: &mut Stream, audio: &[f32]) -> Said {
    stream.begin(StreamConfig::default()).unwrap();
    let mut said = Said::new();
    for piece in audio.chunks(CHUNK) {
        for u in stream.feed(piece).unwrap() {
            said.push((u.text, u.heard_until, u.audio_end));
        }
    }
    said
}

fn say_the_end(stream: &mut Stream, said: &mut Said) {
    let end = stream.finalize().unwrap();
    said.push((end.text, end.heard_until, end.audio_end));
}

/// Four tone patterns of the timing fixture, each its own rhythm.
fn patterns() -> Vec<Vec<f32>> {
    let d = 6;
    [
        vec![d + 2, d + 3, d + 9, d + 20, d + 21, d + 22],
        vec![d + 5, d + 6, d + 7, d + 8, d + 30],
        vec![d + 1, d + 12, d + 13, d + 25, d + 26, d + 27, d + 28],
        (d + 10..d + 18).collect(),
    ]
    .iter()
    .map(|frames| common::tone_audio(40, frames))
    .collect()
}

/// Each of `audios` through a stream of its own on `spec`, all at once,
/// each on its thread: what each said.
fn say_together(spec: &ModelSpec, audios: &[Vec<f32>]) -> Vec<Said> {
    let barrier = Arc::new(Barrier::new(audios.len()));
    let workers: Vec<_> = audios
        .iter()
        .cloned()
        .map(|audio| {
            let (spec, barrier) = (spec.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut stream = Stream::open(&spec, 1).unwrap();
                barrier.wait();
                say(&mut stream, &audio)
            })
        })
        .collect();
    workers.into_iter().map(|w| w.join().unwrap()).collect()
}

/// Each stream said what it said alone, update by update.
fn assert_each_as_alone<'a>(alone: &[Said], together: impl IntoIterator<Item = &'a Said>) {
    for (i, (alone, together)) in alone.iter().zip(together).enumerate() {
        assert_eq!(alone, together, "stream {i}");
    }
}

fn say_alone(spec: &ModelSpec, audio: &[f32]) -> Said {
    say(&mut Stream::open(spec, 1).unwrap(), audio)
}

#[test]
fn streams_of_one_model_load_it_once_and_each_has_a_session() {
    init();
    let path = own_copy(&common::tiny_model(), "shared-load");
    let spec = ModelSpec::new(&path);
    let streams: Vec<Stream> = (0..3).map(|_| Stream::open(&spec, 1).unwrap()).collect();
    assert_eq!(ModelPool::global().loads_of(&path), 1);
    let id = streams[0].model().instance_id();
    assert!(streams.iter().all(|s| s.model().instance_id() == id));
}

#[test]
fn streams_that_decode_together_each_say_what_they_say_alone() {
    init();
    let path = own_copy(&common::fixture("voxtral-rt-tone.gguf"), "shared-tone");
    let spec = ModelSpec::new(&path);
    let audios = patterns();
    let alone: Vec<Said> = audios.iter().map(|a| say_alone(&spec, a)).collect();
    for (said, audio) in alone.iter().zip(&audios) {
        let words = said
            .iter()
            .map(|s| s.0.split_whitespace().count())
            .sum::<usize>();
        let tones = audio
            .chunks(1280)
            .filter(|f| f.iter().any(|v| *v != 0.0))
            .count();
        assert_eq!(words, tones, "a word per tone frame past the delay, alone");
    }
    let before = Stream::open(&spec, 1).unwrap().decoded_together();
    let together = say_together(&spec, &audios);
    assert_each_as_alone(&alone, &together);
    let after = Stream::open(&spec, 1).unwrap().decoded_together();
    let (rounds, streams) = (after.rounds - before.rounds, after.streams - before.streams);
    assert!(
        streams > rounds,
        "the streams' steps ran one at a time: {streams} streams in {rounds} rounds"
    );
}

/// Streams that end at once (an EOS reaching every channel) run the end of
/// their audio and their last steps together, and each says what it says
/// alone.
#[test]
fn streams_that_end_together_share_their_last_steps() {
    init();
    let path = own_copy(&common::fixture("voxtral-rt-tone.gguf"), "shared-ends");
    let spec = ModelSpec::new(&path);
    let audios = patterns();
    let alone: Vec<Said> = audios.iter().map(|a| say_alone(&spec, a)).collect();
    // Fed one after another on this thread: only the ends meet.
    let mut streams: Vec<(Stream, Said)> = audios
        .iter()
        .map(|audio| {
            let mut stream = Stream::open(&spec, 1).unwrap();
            let said = say_all_but_the_end(&mut stream, audio);
            (stream, said)
        })
        .collect();
    let before = streams[0].0.decoded_together();
    let barrier = Arc::new(Barrier::new(streams.len()));
    let ends: Vec<_> = streams
        .drain(..)
        .map(|(mut stream, mut said)| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                say_the_end(&mut stream, &mut said);
                (stream, said)
            })
        })
        .collect();
    let ended: Vec<(Stream, Said)> = ends.into_iter().map(|e| e.join().unwrap()).collect();
    let after = ended[0].0.decoded_together();
    assert_each_as_alone(&alone, ended.iter().map(|(_, said)| said));
    // Each stream's end: what it had pending (every pattern ends between
    // two decodes), then the end of its audio.
    let (rounds, work) = (after.rounds - before.rounds, after.streams - before.streams);
    assert_eq!(
        work,
        2 * audios.len() as u64,
        "a feed and an end per stream"
    );
    assert!(
        rounds < work,
        "the streams' ends ran one at a time: {work} in {rounds} rounds"
    );
}

/// A stream that ends while the others still feed (a channel's EOS in the
/// middle of the others' speech) leaves their words as alone, and says
/// what it says alone.
#[test]
fn a_stream_that_ends_among_others_feeding_leaves_their_words_untouched() {
    init();
    let path = own_copy(&common::fixture("voxtral-rt-tone.gguf"), "shared-early-end");
    let spec = ModelSpec::new(&path);
    let mut audios = patterns();
    // The first two end at 25 of their 40 frames' audio (tones past it cut).
    for audio in &mut audios[..2] {
        audio.truncate(25 * 1280);
    }
    let alone: Vec<Said> = audios.iter().map(|a| say_alone(&spec, a)).collect();
    let together = say_together(&spec, &audios);
    assert_each_as_alone(&alone, &together);
}

/// A stream aborted in the middle (a flush, a state change) and one whose
/// owner stops feeding and drops it leave the two others' words as alone.
#[test]
fn a_stream_aborted_or_dropped_among_others_leaves_their_words_untouched() {
    init();
    let path = own_copy(&common::fixture("voxtral-rt-tone.gguf"), "shared-faults");
    let spec = ModelSpec::new(&path);
    let audios = patterns();
    let alone: Vec<Said> = audios[2..].iter().map(|a| say_alone(&spec, a)).collect();

    let barrier = Arc::new(Barrier::new(4));
    let aborter: Arc<std::sync::Mutex<Option<AbortHandle>>> = Arc::default();
    let mut workers = Vec::new();
    for (i, audio) in audios.into_iter().enumerate() {
        let (spec, barrier, aborter) = (spec.clone(), barrier.clone(), aborter.clone());
        workers.push(std::thread::spawn(move || -> Option<Said> {
            let mut stream = Stream::open(&spec, 1).unwrap();
            if i == 0 {
                *aborter.lock().unwrap() = Some(stream.abort_handle());
            }
            barrier.wait();
            match i {
                // Aborted from outside after a third of its audio.
                0 => {
                    stream.begin(StreamConfig::default()).unwrap();
                    for (n, piece) in audio.chunks(CHUNK).enumerate() {
                        if n == audio.len() / CHUNK / 3 {
                            aborter.lock().unwrap().as_ref().unwrap().abort();
                        }
                        if stream.feed(piece).is_err() {
                            return None;
                        }
                    }
                    panic!("the aborted stream fed to the end");
                }
                // Half its audio, then dropped unfinished.
                1 => {
                    stream.begin(StreamConfig::default()).unwrap();
                    for piece in audio[..audio.len() / 2].chunks(CHUNK) {
                        stream.feed(piece).unwrap();
                    }
                    None
                }
                _ => Some(say(&mut stream, &audio)),
            }
        }));
    }
    let said: Vec<Said> = workers
        .into_iter()
        .filter_map(|w| w.join().unwrap())
        .collect();
    assert_eq!(said, alone);
}

#[test]
fn quantized_weights_are_repacked_once_at_load_and_say_what_the_files_layout_says() {
    init();
    let q4 = own_copy(&common::fixture("voxtral-rt-tiny-q4_0.gguf"), "repack-q4");
    let repacked = ModelSpec::new(&q4);
    let as_in_file = ModelSpec {
        cpu_repack: false,
        ..ModelSpec::new(&q4)
    };
    let audio = common::sine(2.0);

    let stream = Stream::open(&repacked, 1).unwrap();
    let memory = stream.model().memory();
    // 2 encoder blocks of 7 matrices, the projector's 2, 2 decoder blocks
    // of 5 and their fused gate+up: every matmul weight but the tied
    // embedding (F16 here, which has no repack layout).
    assert_eq!(memory.repacked_tensors, 2 * 7 + 2 + 2 * 5 + 2, "{memory:?}");
    assert!(memory.repacked > 0 && memory.mapped > 0, "{memory:?}");
    drop(stream);
    let plain = Stream::open(&as_in_file, 1).unwrap();
    assert_eq!(plain.model().memory().repacked_tensors, 0);
    assert_eq!(plain.model().memory().repacked, 0);
    drop(plain);

    let expected = say_alone(&as_in_file, &audio);
    assert_eq!(say_alone(&repacked, &audio), expected);
    // Four at once: the repacked matrices multiplied by four rows at a time.
    let four = vec![audio.clone(); 4];
    for said in say_together(&repacked, &four) {
        assert_eq!(said, expected);
    }
}

/// F16 weights have no repack layout on x86: the model loads as the file
/// lays it out.
#[test]
fn a_model_whose_weights_have_no_repack_layout_loads_as_before() {
    init();
    let stream = Stream::open(&ModelSpec::new(common::tiny_model()), 1).unwrap();
    let memory = stream.model().memory();
    assert_eq!(
        (memory.repacked_tensors, memory.repacked),
        (0, 0),
        "{memory:?}"
    );
    assert!(memory.mapped > 400 * 1024, "{memory:?}");
}

/// What the engine logged on this thread while `f` ran, at every level.
fn logged_on_this_thread(f: impl FnOnce()) -> String {
    let this = std::thread::current().id();
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let l = log.clone();
    gst::log::set_threshold_for_name("voxtralrt-engine", gst::DebugLevel::Info);
    gst::log::set_active(true);
    gst::log::remove_default_log_function();
    let hook = gst::log::add_log_function(move |cat, _level, _file, _fn, _line, _obj, msg| {
        if cat.name() == "voxtralrt-engine" && std::thread::current().id() == this {
            if let Some(m) = msg.get() {
                let mut l = l.lock().unwrap();
                l.push_str(m.as_str());
                l.push('\n');
            }
        }
    });
    f();
    gst::log::remove_log_function(hook);
    gst::log::unset_threshold_for_name("voxtralrt-engine");
    let text = log.lock().unwrap().clone();
    text
}

/// The load reads the decoder's gate and up to build their fused, repacked
/// tensor: it then drops the file's pages it read from the process. Where
/// the fused tensor is the file's bytes themselves (F16: gate and up side by
/// side, nothing repacked), nothing is dropped.
#[test]
fn pages_the_load_read_only_to_build_repacked_weights_are_released() {
    init();
    const RELEASED: &str = "of mapped weights read only at load released";
    let q4 = own_copy(&common::fixture("voxtral-rt-tiny-q4_0.gguf"), "release-q4");
    let f16 = own_copy(common::tiny_model().as_path(), "release-f16");
    let log = logged_on_this_thread(|| drop(Stream::open(&ModelSpec::new(&q4), 1).unwrap()));
    assert!(log.contains("repacked for the CPU"), "{log}");
    assert!(log.contains(RELEASED), "{log}");
    let log = logged_on_this_thread(|| drop(Stream::open(&ModelSpec::new(&f16), 1).unwrap()));
    assert!(log.contains("weights memory-mapped"), "{log}");
    assert!(!log.contains(RELEASED), "{log}");
    // What it says once released is what it said before (the other tests
    // here compare the repacked model's words with the file's layout).
    let audio = common::sine(2.0);
    assert_eq!(
        say_alone(&ModelSpec::new(&q4), &audio),
        say_alone(
            &ModelSpec {
                cpu_repack: false,
                ..ModelSpec::new(&q4)
            },
            &audio
        )
    );
}
