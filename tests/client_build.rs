// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The client build (`--no-default-features --features vllm`: no local
//! engine, so no transcribe.cpp): engine=local, the default, is an ERROR at
//! start that names the ways out, and the properties are those of the full
//! build. In the full build: the tone fixture's stand-in, which the vLLM
//! double runs in the client build, answers as the engine does.

mod common;

#[cfg(not(feature = "local"))]
mod client {
    use gst::prelude::*;

    use super::common;

    const ELEMENTS: [&str; 2] = ["voxtralrttranscriber", "voxtralrtsink"];

    /// The ERROR of starting `line`, which must fail.
    fn start_error(line: &str) -> gst::glib::Error {
        common::init_plugin();
        let element = gst::parse::launch(line).unwrap();
        let pipeline = gst::Pipeline::new();
        pipeline.add(&element).unwrap();
        assert!(
            pipeline.set_state(gst::State::Ready).is_err(),
            "{line} started"
        );
        let message = pipeline
            .bus()
            .unwrap()
            .timed_pop_filtered(gst::ClockTime::from_seconds(5), &[gst::MessageType::Error])
            .expect("an ERROR message");
        let _ = pipeline.set_state(gst::State::Null);
        match message.view() {
            gst::MessageView::Error(e) => e.error(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn engine_local_is_an_error_at_start_that_names_the_ways_out() {
        let model = common::tiny_model().display().to_string();
        for element in ELEMENTS {
            for line in [
                element.to_owned(),
                format!("{element} engine=local model-path={model}"),
            ] {
                let error = start_error(&line);
                let text = error.to_string();
                assert!(
                    error.matches(gst::ResourceError::Settings),
                    "{line}: {error:?}"
                );
                for needed in [
                    "no local engine",
                    "engine=vllm",
                    "url=",
                    "\"local\" feature",
                ] {
                    assert!(text.contains(needed), "{line}: no '{needed}' in: {text}");
                }
            }
        }
    }

    #[test]
    fn the_local_only_properties_are_there_and_take_values() {
        common::init_plugin();
        for name in ELEMENTS {
            let element = gst::ElementFactory::make(name).build().unwrap();
            for property in ["model-path", "model", "threads", "backend", "device"] {
                assert!(
                    element.find_property(property).is_some(),
                    "{name}: {property}"
                );
            }
            element.set_property_from_str("backend", "cuda");
            element.set_property("threads", 2u32);
            assert_eq!(element.property::<u32>("threads"), 2);
        }
    }
}

/// The stand-in against the engine, both running the tone fixture as the
/// vLLM double runs it (80 ms decodes, audio in pieces as a client sends
/// it, 17 steps of silence before the final commit), and without the
/// silence, so that finalize has words to give.
#[cfg(feature = "local")]
#[test]
fn the_tone_stand_in_answers_as_the_engine_does() {
    use common::tone_stand_in;
    use gstvoxtralrt::engine;
    use gstvoxtralrt::voxtral::{StreamConfig, TextUpdate};

    let model = common::fixture("voxtral-rt-tone.gguf");
    let frames = common::tone_frames();
    let mut audio = common::tone_audio(66, &frames);
    // A tone in the last frames: its words come only with the final commit.
    common::add_tone(&mut audio, 63..66, 1000.0);
    let with_padding: Vec<f32> = [&audio[..], &vec![0.0; 17 * common::FRAME]].concat();
    let key = |u: &TextUpdate| (u.text.clone(), u.audio_end, u.heard_until, u.is_final);
    for delay_ms in [480, 960] {
        for (audio, piece) in [(&with_padding, 1600), (&with_padding, 333), (&audio, 1280)] {
            let config = StreamConfig {
                delay_ms,
                decode_interval_ms: 80,
            };
            let mut real = engine::Stream::open(&engine::ModelSpec::new(&model), 1).unwrap();
            let mut stand_in =
                tone_stand_in::Stream::open(&tone_stand_in::ModelSpec::new(&model), 1).unwrap();
            real.begin(config).unwrap();
            stand_in.begin(config).unwrap();
            let (mut want, mut got) = (Vec::new(), Vec::new());
            for chunk in audio.chunks(piece) {
                want.extend(real.feed(chunk).unwrap().iter().map(key));
                got.extend(stand_in.feed(chunk).unwrap().iter().map(key));
            }
            want.push(key(&real.finalize().unwrap()));
            got.push(key(&stand_in.finalize().unwrap()));
            let words = want.iter().filter(|u| !u.0.is_empty()).count();
            assert!(words >= 15, "delay {delay_ms}: {words} words");
            if audio.len() == with_padding.len() {
                assert_eq!(want.last().unwrap().0, "", "the padding leaves none");
            } else {
                assert!(!want.last().unwrap().0.is_empty(), "finalize has words");
            }
            assert_eq!(got, want, "delay {delay_ms}, pieces of {piece}");
        }
    }
}
