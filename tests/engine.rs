// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The engine layer against the real transcribe.cpp library and the tiny
//! fixture model (one thread, as on a loaded 2-core machine).

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::time::{Duration, Instant};

use gstvoxtralrt::engine::{Backend, Error, ModelSpec, Stream};
use gstvoxtralrt::voxtral::{SampleConverter, SampleFormat, StreamConfig};

fn init() {
    gst::init().unwrap();
}

fn open() -> Stream {
    init();
    Stream::open(&ModelSpec::new(common::tiny_model()), 1).expect("the fixture loads")
}

/// Runs one whole stream, feeding `samples` in pieces of `chunk` samples.
fn transcribe(stream: &mut Stream, samples: &[f32], chunk: usize) -> String {
    stream.begin(StreamConfig::default()).unwrap();
    let mut text = String::new();
    for piece in samples.chunks(chunk.max(1)) {
        for update in stream.feed(piece).unwrap() {
            text.push_str(&update.text);
        }
    }
    text.push_str(&stream.finalize().unwrap().text);
    text
}

fn load_error(path: &std::path::Path) -> Error {
    init();
    match Stream::open(&ModelSpec::new(path), 1) {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(e) => e,
    }
}

#[test]
fn a_missing_file_is_reported_as_missing() {
    let err = load_error(std::path::Path::new("/nonexistent/model.gguf"));
    assert!(matches!(err, Error::ModelMissing { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn an_empty_file_is_not_a_model() {
    let path = common::scratch_dir("empty").join("empty.gguf");
    std::fs::write(&path, b"").unwrap();
    let err = load_error(&path);
    assert!(
        matches!(err, Error::NotGguf { ref detail, .. } if detail.contains("empty")),
        "{err:?}"
    );
}

#[test]
fn a_text_file_is_not_a_model() {
    let path = common::scratch_dir("text").join("notes.gguf");
    std::fs::write(&path, "this is not a model\n").unwrap();
    let err = load_error(&path);
    assert!(matches!(err, Error::NotGguf { .. }), "{err:?}");
    assert!(err.to_string().contains("not a valid GGUF"), "{err}");
}

#[test]
fn a_truncated_model_is_damaged_and_says_why() {
    let bytes = std::fs::read(common::tiny_model()).unwrap();
    let dir = common::scratch_dir("truncated");
    for keep in [6, 100, bytes.len() / 2, bytes.len() - 1] {
        let path = dir.join(format!("cut-{keep}.gguf"));
        std::fs::write(&path, &bytes[..keep]).unwrap();
        let err = load_error(&path);
        match &err {
            Error::NotGguf { detail, .. } => {
                assert!(!detail.is_empty(), "no reason given for {keep}")
            }
            other => panic!("cut at {keep}: {other:?}"),
        }
    }
}

#[test]
fn a_gguf_of_another_architecture_is_named() {
    let path = common::scratch_dir("arch").join("whisper.gguf");
    std::fs::write(&path, common::gguf_of_architecture("whisper")).unwrap();
    let err = load_error(&path);
    assert_eq!(
        err,
        Error::WrongArchitecture {
            path: path.clone(),
            found: "whisper".into()
        }
    );
    assert!(err.to_string().contains("'whisper'"), "{err}");
}

#[test]
fn a_directory_is_unreadable() {
    let dir = common::scratch_dir("dir");
    let err = load_error(&dir);
    assert!(matches!(err, Error::ModelUnreadable { .. }), "{err:?}");
}

#[test]
fn an_unavailable_backend_is_refused_clearly() {
    init();
    for backend in [Backend::Cuda, Backend::Vulkan] {
        if backend.is_available() {
            continue;
        }
        let spec = ModelSpec {
            backend,
            ..ModelSpec::new(common::tiny_model())
        };
        match Stream::open(&spec, 1) {
            Err(Error::BackendUnavailable { backend: b, .. }) => assert_eq!(b, backend),
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("{backend:?} loaded without being available"),
        }
    }
}

#[test]
fn the_fixture_produces_visible_text_to_the_end_of_the_audio() {
    let mut stream = open();
    let text = transcribe(&mut stream, &common::sine(3.0), 1600);
    let words: Vec<&str> = text.split_whitespace().collect();
    assert!(words.len() >= 27, "only {} words: {text:?}", words.len());
    assert!(text.starts_with("hello from the tiny voxtral"), "{text:?}");
}

#[test]
fn the_same_audio_gives_the_same_text_across_runs_and_chunkings() {
    let mut stream = open();
    let audio = common::sine(2.5);
    let reference = transcribe(&mut stream, &audio, audio.len());
    for chunk in [160, 1280, 16_000, audio.len()] {
        assert_eq!(
            transcribe(&mut stream, &audio, chunk),
            reference,
            "chunk {chunk}"
        );
    }
}

#[test]
fn s16_and_f32_input_of_one_signal_give_the_same_text() {
    let audio = common::sine(2.0);
    let mut from_s16 = Vec::new();
    let mut from_f32 = Vec::new();
    SampleConverter::new(SampleFormat::S16le).convert(&common::to_s16le(&audio), &mut from_s16);
    SampleConverter::new(SampleFormat::F32le).convert(&common::to_f32le(&audio), &mut from_f32);
    let mut stream = open();
    assert_eq!(
        transcribe(&mut stream, &from_s16, 3200),
        transcribe(&mut stream, &from_f32, 3200)
    );
}

#[test]
fn text_updates_come_once_per_decode_interval_with_their_audio_position() {
    let mut stream = open();
    let config = StreamConfig {
        delay_ms: 480,
        decode_interval_ms: 320,
    };
    stream.begin(config).unwrap();
    let updates = stream.feed(&common::sine(2.0)).unwrap();
    // Decodes fall 240 samples past each interval, when a frame's token has
    // just become decodable (the frame's end plus 15 ms).
    let ends: Vec<u64> = updates.iter().map(|u| u.audio_end).collect();
    assert_eq!(ends, (1..=6).map(|k| k * 5120 + 240).collect::<Vec<_>>());
    // The text is about the audio up to the end of the last decoded frame:
    // the delay (6 frames) and the look-ahead behind.
    let heard: Vec<u64> = updates.iter().map(|u| u.heard_until).collect();
    assert_eq!(
        heard,
        (1..=6u64)
            .map(|k| (k * 4).saturating_sub(6) * 1280)
            .collect::<Vec<_>>()
    );
    assert_eq!(stream.samples_received(), 32_000);
    assert!(updates.iter().any(|u| !u.text.is_empty()));
    let last = stream.finalize().unwrap();
    assert_eq!((last.audio_end, last.heard_until), (32_000, 32_000));
}

#[test]
fn an_abort_from_another_thread_stops_a_long_feed_promptly() {
    let mut stream = open();
    stream.begin(StreamConfig::default()).unwrap();
    let handle = stream.abort_handle();
    let audio = common::sine(600.0);
    let (tx, rx) = std::sync::mpsc::channel();
    let aborter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let at = Instant::now();
        handle.abort();
        tx.send(at).unwrap();
    });
    let result = stream.feed(&audio);
    let returned = Instant::now();
    aborter.join().unwrap();
    let aborted_at = rx.recv().unwrap();
    assert_eq!(result.err(), Some(Error::Aborted));
    let latency = returned.saturating_duration_since(aborted_at);
    eprintln!("abort latency: {latency:?}");
    // Target 100 ms; the bound is loose because CI machines are shared.
    assert!(latency < Duration::from_secs(1), "abort took {latency:?}");

    // The stream can be used again after a reset.
    stream.reset();
    assert!(!transcribe(&mut stream, &common::sine(1.5), 1600).is_empty());
}

#[test]
fn two_streams_on_one_model_path_run_at_the_same_time() {
    init();
    let audio = common::sine(3.0);
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let audio = audio.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut stream = Stream::open(&ModelSpec::new(common::tiny_model()), 1).unwrap();
                // Both hold their instance before either starts feeding.
                barrier.wait();
                transcribe(&mut stream, &audio, 800)
            })
        })
        .collect();
    let texts: Vec<String> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    assert_eq!(texts[0], texts[1]);
    assert!(!texts[0].is_empty());
}

#[test]
fn streams_of_one_model_share_its_load_and_a_released_model_is_reused() {
    init();
    // A path of its own, so that other tests cannot take this model.
    let path = common::scratch_dir("reuse").join("model.gguf");
    std::fs::copy(common::tiny_model(), &path).unwrap();
    let spec = ModelSpec::new(&path);
    let first = Stream::open(&spec, 1).unwrap();
    let first_id = first.model().instance_id();
    let second = Stream::open(&spec, 1).unwrap();
    assert_eq!(
        second.model().instance_id(),
        first_id,
        "two streams, one model"
    );
    drop(second);
    drop(first);
    let mut again = Stream::open(&spec, 1).unwrap();
    let reused = again.model().instance_id();
    assert_eq!(reused, first_id, "a released model was not reused");
    assert!(!transcribe(&mut again, &common::sine(1.0), 1600).is_empty());
    drop(again);
    let once_more = Stream::open(&spec, 1).unwrap();
    assert_eq!(
        once_more.model().instance_id(),
        reused,
        "the idle model was loaded again"
    );
    assert_eq!(gstvoxtralrt::engine::ModelPool::global().loads_of(&path), 1);
}

#[test]
fn a_model_file_replaced_on_disk_is_loaded_again() {
    init();
    let dir = common::scratch_dir("replace");
    let path = dir.join("model.gguf");
    std::fs::copy(common::tiny_model(), &path).unwrap();
    let spec = ModelSpec::new(&path);
    let before = Stream::open(&spec, 1).unwrap().model().instance_id();
    // Replace by rename, the safe way to update a memory-mapped file.
    let next = dir.join("next.gguf");
    std::fs::copy(common::tiny_model(), &next).unwrap();
    std::fs::rename(&next, &path).unwrap();
    let mut after = Stream::open(&spec, 1).unwrap();
    assert_ne!(after.model().instance_id(), before);
    assert!(!transcribe(&mut after, &common::sine(1.0), 1600).is_empty());
}

#[test]
fn a_wrong_delay_is_refused_before_the_stream_starts() {
    let mut stream = open();
    let err = stream
        .begin(StreamConfig {
            delay_ms: 100,
            decode_interval_ms: 160,
        })
        .unwrap_err();
    assert_eq!(err, Error::InvalidDelay { ms: 100 });
}

/// What a whole stream wrote: each non-empty text with its audio position,
/// and the samples from which the stream was taken up after the model ended
/// it.
struct Written {
    texts: Vec<(u64, String)>,
    resumed_from: Vec<u64>,
}

fn write_stream(stream: &mut Stream, config: StreamConfig, audio: &[f32], chunk: usize) -> Written {
    let written = run_stream(stream, config, audio, chunk);
    assert!(
        stream.sees_model_end(),
        "lost sight of the decoder with {config:?}"
    );
    written
}

/// The same for a stream that must not follow the decoder.
fn write_stream_blind(stream: &mut Stream, audio: &[f32]) -> Written {
    let written = run_stream(stream, StreamConfig::default(), audio, 1600);
    assert!(!stream.sees_model_end());
    written
}

fn run_stream(stream: &mut Stream, config: StreamConfig, audio: &[f32], chunk: usize) -> Written {
    stream.begin(config).unwrap();
    let mut updates = Vec::new();
    for piece in audio.chunks(chunk) {
        updates.extend(stream.feed(piece).unwrap());
    }
    updates.push(stream.finalize().unwrap());
    Written {
        texts: updates
            .iter()
            .filter(|u| !u.text.is_empty())
            .map(|u| (u.audio_end, u.text.clone()))
            .collect(),
        resumed_from: updates
            .iter()
            .flat_map(|u| u.resumed_from.clone())
            .collect(),
    }
}

#[test]
fn a_stream_the_model_ends_goes_on_as_if_it_had_not_ended() {
    // The EOS fixture is the tone fixture plus an end token for 2 kHz
    // frames. Taken up from the token the model ended on, its streams must
    // write what the tone fixture writes, word for word and position for
    // position.
    init();
    let mut tone =
        Stream::open(&ModelSpec::new(common::fixture("voxtral-rt-tone.gguf")), 1).unwrap();
    let mut ending = Stream::open(
        &ModelSpec::new(common::fixture("voxtral-rt-tone-eos.gguf")),
        1,
    )
    .unwrap();
    for delay_ms in [80, 480, 2400] {
        let d = (delay_ms / 80) as usize;
        let mut audio = vec![0.0f32; 250 * common::FRAME];
        common::add_tone(&mut audio, 10..13, 1000.0);
        common::add_tone(&mut audio, 40 + d..41 + d, 2000.0);
        common::add_tone(&mut audio, 41 + d..53 + d, 1000.0);
        common::add_tone(&mut audio, 120..130, 1000.0);
        common::add_tone(&mut audio, 150 + d..151 + d, 2000.0);
        common::add_tone(&mut audio, 151 + d..160 + d, 1000.0);
        // The last end token is in the final frames: the model writes it
        // when the stream is finalized.
        common::add_tone(&mut audio, 230..245, 1000.0);
        common::add_tone(&mut audio, 245..246, 2000.0);
        common::add_tone(&mut audio, 246..250, 1000.0);
        for decode_interval_ms in [80, 160, 1000, 10_000] {
            for chunk in [441, audio.len()] {
                let config = StreamConfig {
                    delay_ms,
                    decode_interval_ms,
                };
                let expected = write_stream(&mut tone, config, &audio, chunk);
                let got = write_stream(&mut ending, config, &audio, chunk);
                assert_eq!(got.texts, expected.texts, "{config:?}, chunks of {chunk}");
                assert!(expected.resumed_from.is_empty());
                // The end token is the token of the 2 kHz frame, written
                // `delay` after it: the new streams start there.
                let cue_tokens = [40, 150, 245 - d].map(|f| (f * common::FRAME) as u64);
                assert_eq!(
                    got.resumed_from, cue_tokens,
                    "{config:?}, chunks of {chunk}"
                );
            }
        }
    }
}

#[test]
fn the_decoder_is_followed_on_every_fixture_delay_and_interval() {
    init();
    let speech_like = common::sine(12.0);
    let mut tones = vec![0.0f32; 150 * common::FRAME];
    common::add_tone(&mut tones, 20..60, 1000.0);
    for (model, audio) in [
        ("voxtral-rt-tiny.gguf", &speech_like),
        ("voxtral-rt-tone.gguf", &tones),
    ] {
        let mut stream = Stream::open(&ModelSpec::new(common::fixture(model)), 1).unwrap();
        for delay_ms in [80, 160, 560, 1200, 2400] {
            for decode_interval_ms in [40, 110, 160, 333, 2500, 10_000] {
                let config = StreamConfig {
                    delay_ms,
                    decode_interval_ms,
                };
                let written = write_stream(&mut stream, config, audio, 1000);
                assert!(
                    !written.texts.is_empty(),
                    "{model} wrote nothing with {config:?}"
                );
            }
        }
    }
}

/// A copy of the tiny fixture with one u32 header value changed.
fn fixture_with(key: &str, value: u32) -> std::path::PathBuf {
    let mut bytes = std::fs::read(common::tiny_model()).unwrap();
    let at = bytes
        .windows(key.len())
        .position(|w| w == key.as_bytes())
        .expect("the key is in the header")
        + key.len();
    assert_eq!(&bytes[at..at + 4], &4u32.to_le_bytes(), "{key} is a u32");
    bytes[at + 4..at + 8].copy_from_slice(&value.to_le_bytes());
    let path = common::scratch_dir(&format!("{key}-{value}")).join("model.gguf");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_model_without_80_ms_frames_is_transcribed_without_following_its_decoder() {
    // The library loads such a model; the poll count assumes 80 ms tokens,
    // so the stream must not read end tokens into it.
    init();
    for (key, value) in [
        ("stt.frontend.hop_length", 320),
        ("stt.voxtral_realtime.projector.audio_length_per_tok", 4),
    ] {
        let mut stream = Stream::open(&ModelSpec::new(fixture_with(key, value)), 1).unwrap();
        assert!(!stream.model().has_80_ms_frames(), "{key}");
        let written = write_stream_blind(&mut stream, &common::sine(5.0));
        assert!(written.resumed_from.is_empty(), "{key}");
        assert!(written.texts.len() > 5, "{key}: {:?}", written.texts);
    }
    let stream = open();
    assert!(stream.model().has_80_ms_frames());
}

#[test]
fn threads_0_takes_a_share_of_the_cpus_and_a_set_count_is_kept() {
    init();
    let cpus = std::thread::available_parallelism().unwrap().get();
    let most = gstvoxtralrt::engine::threads::auto_threads(cpus, 1);
    let default = Stream::open(&ModelSpec::new(common::tiny_model()), 0).unwrap();
    // Other tests of this binary may hold streams too, which only lowers it.
    assert!(
        (1..=most).contains(&default.threads()),
        "{} threads of {cpus} CPUs",
        default.threads()
    );
    // Half the CPUs at most: a neighbour (a video encoder) keeps a core.
    assert!(default.threads() as usize <= cpus.div_ceil(2));
    let set = Stream::open(&ModelSpec::new(common::tiny_model()), 3).unwrap();
    assert_eq!(set.threads(), 3);
}
