// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! engine=vllm against a protocol-faithful vLLM double backed by the real
//! engine and the tone fixture (`common::vllm_double`): the words and their
//! times are known, so the remote path is checked word for word, and each
//! fault has a defined outcome. tests/vllm_server.rs runs the real vLLM.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::remote::{transcribe, transcribe_paced, transcribe_with, Run};
use common::vllm_double::{Double, Faults, SERVED_MODEL};
use gst::prelude::*;

const F32_CAPS: &str = common::remote::F32_CAPS;

/// The timing fixture's audio: 66 frames with three tone bursts.
fn tone() -> (Vec<f32>, Vec<usize>) {
    let frames = common::tone_frames();
    (common::tone_audio(66, &frames), frames)
}

/// The words and times the local engine gives for the same audio.
#[cfg(feature = "local")]
fn local_words(audio: &[f32], decode_interval: u32) -> Vec<(u64, String)> {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1 decode-interval={decode_interval}",
        common::tone_model()
    ));
    h.set_src_caps_str(F32_CAPS);
    for (k, piece) in audio.chunks(1600).enumerate() {
        let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        b.get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        h.push(b).unwrap();
    }
    h.push_event(gst::event::Eos::new());
    let mut words = Vec::new();
    while let Ok(Some(b)) = h.pull_until_eos() {
        words.push((b.pts().unwrap().nseconds(), common::text_of(&b)));
    }
    words
}

fn double(faults: Faults) -> Double {
    Double::start(common::fixture("voxtral-rt-tone.gguf"), faults)
}

/// Every tone frame's word, each at its frame, through the remote engine.
fn assert_every_word_at_its_frame(run: &Run, frames: &[usize]) {
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.words.len(), frames.len(), "{:?}", run.words);
    for (&(pts, ref text), &f) in run.words.iter().zip(frames) {
        assert_eq!(text.trim(), "x");
        let truth = common::truth(f);
        assert_eq!(
            pts, truth,
            "the word of frame {f} at {pts} ns, not at {truth}: {:?}",
            run.words
        );
    }
}

#[test]
fn every_word_comes_at_its_frame_through_the_remote_engine() {
    let server = double(Faults::default());
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    // One delta per step, each counted: the backend names the server.
    assert_eq!(run.stat("reconnects"), 0);
    let backend = run
        .stats
        .as_ref()
        .unwrap()
        .get::<String>("backend")
        .unwrap();
    assert_eq!(backend, format!("vllm {}", server.url()));
    // The same words as the local engine gives, which at the default decode
    // interval has a grain of 160 ms; the remote path places every 80 ms
    // step on its frame.
    #[cfg(feature = "local")]
    {
        let local = local_words(&audio, 80);
        assert_eq!(
            run.words.iter().map(|w| w.1.trim()).collect::<Vec<_>>(),
            local.iter().map(|w| w.1.trim()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_dropped_connection_is_made_again_and_loses_and_repeats_no_word() {
    let server = double(Faults {
        drop_after: Some(20),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    assert_eq!(run.stat("reconnects"), 1);
    assert!(run.stat("audio-resent") > 0);
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected.len(), 1, "{:?}", run.messages);
    assert!(reconnected[0].get::<u64>("audio-resent").unwrap() > 0);
    assert!(reconnected[0].get::<u64>("outage").is_ok());
    assert_eq!(
        run.warnings
            .iter()
            .filter(|w| w.contains("reconnected"))
            .count(),
        1,
        "{:?}",
        run.warnings
    );
    assert_eq!(server.seen.lock().unwrap().connections, 2);
}

#[test]
fn a_processing_error_is_handled_like_a_drop() {
    let server = double(Faults {
        processing_error_after: Some(25),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    assert_eq!(run.stat("reconnects"), 1);
    assert!(
        run.warnings.iter().any(|w| w.contains("processing_error")),
        "{:?}",
        run.warnings
    );
}

#[test]
fn an_error_that_blames_the_client_is_an_error_with_the_servers_text() {
    let server = double(Faults {
        invalid_audio_after: Some(10),
        ..Faults::default()
    });
    let (audio, _) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(run.errors[0].contains("invalid_audio"), "{}", run.errors[0]);
    assert!(
        run.errors[0].contains("Invalid audio data"),
        "{}",
        run.errors[0]
    );
}

#[test]
fn garbage_from_the_server_is_counted_and_ignored() {
    let server = double(Faults {
        garbage_every: Some(7),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    let deltas = server.seen.lock().unwrap().deltas;
    // A binary frame, a non-JSON text and an unknown event every 7 deltas
    // (those still unread at the end are not counted).
    assert!(
        run.stat("frames-ignored") >= 3 * (deltas / 7 - 1),
        "{}",
        run.stat("frames-ignored")
    );
    assert_eq!(run.stat("reconnects"), 0);
}

#[test]
fn a_server_that_stops_answering_is_reconnected_after_server_timeout() {
    let server = double(Faults {
        stall_after: Some(15),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "server-timeout=1000");
    assert_every_word_at_its_frame(&run, &frames);
    assert_eq!(run.stat("reconnects"), 1);
    let outage = run.messages_named("voxtralrt-reconnected")[0]
        .get::<u64>("outage")
        .unwrap();
    // The stall is noticed after server-timeout; the reconnection itself is
    // immediate here.
    assert!(outage < 1_000_000_000, "{outage}");
    assert!(run.took >= Duration::from_secs(1));
}

#[test]
fn a_session_the_server_ends_on_its_own_goes_on_seamlessly() {
    // vLLM ends a session at max_model_len: here after 24 steps.
    let server = double(Faults {
        max_deltas_per_utterance: Some(24),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    assert!(run.stat("model-ended-streams") >= 2, "{:?}", run.stats);
    assert_eq!(run.stat("reconnects"), 0);
    assert!(run.warnings.is_empty(), "{:?}", run.warnings);
}

#[test]
fn an_unreachable_server_is_an_error_naming_the_url_within_15_s() {
    let url = Double::refusing_url();
    let (audio, _) = tone();
    let run = transcribe(&url, SERVED_MODEL, &audio, "");
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(run.errors[0].contains(&url), "{}", run.errors[0]);
    assert!(run.took < Duration::from_secs(15), "{:?}", run.took);
}

#[test]
fn a_model_the_server_does_not_serve_is_an_error_naming_it() {
    let server = double(Faults::default());
    let (audio, _) = tone();
    let run = transcribe(
        &server.url(),
        "mistralai/Voxtral-Mini-4B-Realtime-2602",
        &audio,
        "",
    );
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    let e = &run.errors[0];
    assert!(e.contains("mistralai/Voxtral-Mini-4B-Realtime-2602"), "{e}");
    assert!(e.contains("does not exist"), "the server's answer: {e}");
}

/// GObject properties do not depend on the order they are set in: `model`
/// before `engine=vllm` names the served model as after it (before, it was
/// checked as a local preset, refused with a WARNING, and the default
/// served model asked for: the server's `model_not_found`).
#[test]
fn model_and_engine_vllm_name_the_served_model_in_either_order() {
    let server = double(Faults {
        served_model: Some("my-served-model".into()),
        ..Faults::default()
    });
    let (audio, frames) = tone();
    let url = server.url();
    for order in [
        format!("model=my-served-model engine=vllm url={url}"),
        format!("engine=vllm url={url} model=my-served-model"),
    ] {
        let run = common::remote::transcribe_with_properties(&order, &audio, |t| {
            assert_eq!(
                t.property::<Option<String>>("model").as_deref(),
                Some("my-served-model")
            );
        });
        assert!(run.warnings.is_empty(), "{order}: {:?}", run.warnings);
        assert_every_word_at_its_frame(&run, &frames);
    }
}

#[test]
fn a_refused_key_is_an_error_naming_api_key_and_the_key_is_never_logged() {
    const KEY: &str = "sk-voxtralrt-test-0123456789";
    let server = double(Faults {
        api_key: Some("the-right-key".into()),
        ..Faults::default()
    });
    // Everything GStreamer logs, at every level, is kept and searched.
    let log = Arc::new(Mutex::new(String::new()));
    let l = log.clone();
    gst::log::set_default_threshold(gst::DebugLevel::Memdump);
    gst::log::set_active(true);
    gst::log::remove_default_log_function();
    let hook = gst::log::add_log_function(move |_cat, _level, _file, _fn, _line, _obj, msg| {
        if let Some(m) = msg.get() {
            l.lock().unwrap().push_str(m.as_str());
        }
    });
    let (audio, _) = tone();
    // Set from code: a gst-launch-1.0 line is logged whole by GStreamer's
    // own parser (GST_PIPELINE), key and all.
    let run = transcribe_with(&server.url(), SERVED_MODEL, &audio[..16_000], "", |t| {
        t.set_property("api-key", KEY)
    });
    gst::log::remove_log_function(hook);
    gst::log::set_default_threshold(gst::DebugLevel::None);
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(run.errors[0].contains("api-key"), "{}", run.errors[0]);
    assert!(run.errors[0].contains("VLLM_API_KEY"), "{}", run.errors[0]);
    assert!(!run.errors[0].contains(KEY));
    let log = log.lock().unwrap();
    assert!(log.len() > 10_000, "the debug log was not captured");
    assert!(!log.contains(KEY), "the key appears in the debug log");
    // It was sent, as a bearer token.
    assert!(server
        .seen
        .lock()
        .unwrap()
        .authorizations
        .contains(&format!("Bearer {KEY}")));
    // And the right key opens it.
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "api-key=the-right-key");
    assert!(run.errors.is_empty(), "{:?}", run.errors);
}

#[test]
fn the_key_is_write_only_and_refused_over_plain_ws_to_another_host() {
    common::init_plugin();
    let t = gst::ElementFactory::make("voxtralrttranscriber")
        .build()
        .unwrap();
    let pspec = t.find_property("api-key").unwrap();
    assert!(!pspec.flags().contains(gst::glib::ParamFlags::READABLE));
    let (audio, _) = tone();
    let run = transcribe(
        "ws://gpu-box.invalid:8000/v1/realtime",
        SERVED_MODEL,
        &audio,
        "api-key=k",
    );
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(
        run.errors[0].contains("refusing to send the API key"),
        "{}",
        run.errors[0]
    );
}

#[test]
fn local_only_properties_warn_with_engine_vllm() {
    let server = double(Faults::default());
    let (audio, frames) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "threads=1 backend=cpu");
    assert_every_word_at_its_frame(&run, &frames);
    assert!(
        run.warnings
            .iter()
            .any(|w| w.contains("threads, backend") && w.contains("engine=local")),
        "{:?}",
        run.warnings
    );
}

/// Pushes `audio` live, in real time, through engine=vllm at `url`.
fn transcribe_live(url: &str, audio: &[f32], extra: &str) -> Run {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t engine=vllm url={url} model={SERVED_MODEL} {extra} ! \
         fakesink name=out sync=false"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let run = Arc::new(Mutex::new(Run::default()));
    let t = pipeline.by_name("t").unwrap();
    common::remote::record(&pipeline, &t, &run);
    let bus = pipeline.bus().unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let clock = gst::SystemClock::obtain();
    common::push_in_real_time(&src, audio, &clock, || {});
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(60),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    assert!(msg.is_some(), "no EOS");
    let stats = t.property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    bus.unset_sync_handler();
    let mut run = std::mem::take(&mut *run.lock().unwrap());
    run.stats = Some(stats);
    run
}

#[test]
fn a_server_slower_than_live_is_skipped_like_a_slow_local_model() {
    // Each 80 ms step takes 200 ms: 2.5 times slower than real time.
    let server = double(Faults {
        step_time: Some(Duration::from_millis(200)),
        ..Faults::default()
    });
    let frames: Vec<usize> = (0..150).filter(|f| f % 8 < 4).collect();
    let audio = common::tone_audio(150, &frames);
    let run = transcribe_live(&server.url(), &audio, "overload=skip latency=1500");
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    let skips = run.messages_named("voxtralrt-skipped");
    assert!(!skips.is_empty(), "nothing was skipped: {:?}", run.stats);
    assert!(run.stat("audio-skipped") > 0);
    // One WARNING per episode of falling behind, naming the server.
    let warned = run
        .warnings
        .iter()
        .filter(|w| w.contains("skipping"))
        .count();
    assert!((1..=skips.len()).contains(&warned), "{:?}", run.warnings);
    assert!(
        run.warnings[0].contains(&server.url()),
        "{}",
        run.warnings[0]
    );
    // A skip is no outage: the sessions it starts are not reconnections.
    assert_eq!(run.stat("reconnects"), 0);
    assert!(!run.words.is_empty());
    // The words that come keep their true times: each on a tone frame.
    for (pts, _) in &run.words {
        let frame = (pts / 80_000_000) as usize + 6;
        assert!(
            frames.contains(&frame),
            "a word at {pts} ns is on no tone frame"
        );
    }
}

#[test]
fn the_sink_writes_the_same_words_through_the_remote_engine() {
    common::init_plugin();
    let server = double(Faults::default());
    let (audio, frames) = tone();
    let dir = common::scratch_dir("remote-sink");
    let (wav, out) = (dir.join("in.wav"), dir.join("out.jsonl"));
    common::write_wav(&wav, &audio);
    let pipeline = gst::parse::launch(&format!(
        "filesrc location={} ! wavparse ! voxtralrtsink engine=vllm url={} model={SERVED_MODEL} location={}",
        wav.display(),
        server.url(),
        out.display()
    ))
    .unwrap();
    let msg = common::run_to_end(&pipeline, Duration::from_secs(60));
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let lines = std::fs::read_to_string(&out).unwrap();
    let starts: Vec<u64> = lines
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["start"].as_f64().unwrap() * 1e9).round() as u64
        })
        .collect();
    let expected: Vec<u64> = frames.iter().map(|&f| common::truth(f)).collect();
    assert_eq!(starts, expected, "{lines}");
}

#[test]
fn the_readme_line_runs_against_a_server() {
    let server = double(Faults {
        served_model: Some("mistralai/Voxtral-Mini-4B-Realtime-2602".into()),
        ..Faults::default()
    });
    let line = common::doc_launch_line("engine=vllm")
        .replace("ws://127.0.0.1:8000/v1/realtime", &server.url());
    let dir = common::readme_dir("readme-remote");
    common::run_readme_line(&line, &dir);
    assert!(dir.join("sample-remote.srt").is_file());
    // The double heard the whole file.
    assert!(server.seen.lock().unwrap().samples > 16_000 * 5);
}

/// A CA and a certificate for 127.0.0.1 (and localhost) signed by it, made
/// with openssl.
fn test_ca(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let run = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            common::output_text(&out)
        );
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=voxtralrt test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ]);
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        "-out",
        "server.pem",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

#[test]
fn wss_works_with_the_systems_ca_roots_and_a_key_goes_over_it() {
    let dir = common::scratch_dir("remote-wss");
    let (ca, cert, key) = test_ca(&dir);
    let server = double(Faults {
        tls: Some((cert, key)),
        api_key: Some("k-over-tls".into()),
        ..Faults::default()
    });
    // The system's roots, as rustls-native-certs reads them: here the test
    // CA alone, through SSL_CERT_FILE (which it honours).
    std::env::set_var("SSL_CERT_FILE", &ca);
    let (audio, frames) = tone();
    let run = transcribe(
        &server.tls_url(),
        SERVED_MODEL,
        &audio,
        "api-key=k-over-tls",
    );
    assert_every_word_at_its_frame(&run, &frames);
    assert!(server
        .seen
        .lock()
        .unwrap()
        .authorizations
        .contains(&"Bearer k-over-tls".to_string()));
    // A server whose certificate the roots do not vouch for is refused.
    std::env::set_var("SSL_CERT_FILE", dir.join("server.pem"));
    let other = double(Faults {
        tls: Some((dir.join("ca.pem"), dir.join("ca.key"))),
        ..Faults::default()
    });
    let run = transcribe(&other.tls_url(), SERVED_MODEL, &audio[..16_000], "");
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(
        run.errors[0].contains(&other.tls_url()),
        "{}",
        run.errors[0]
    );
}

fn serving_delay(ms: u32) -> Double {
    double(Faults {
        delay_ms: Some(ms),
        ..Faults::default()
    })
}

#[test]
fn a_server_with_a_longer_delay_is_an_error_naming_both_within_server_timeout() {
    // Its deltas come 480 ms later than the element waits for them: before,
    // a reconnection every server-timeout, no word and no end.
    let server = serving_delay(960);
    let (audio, _) = tone();
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "delay=480");
    assert_eq!(run.errors.len(), 1, "{run:?}");
    let error = &run.errors[0];
    assert!(
        error.contains("960 ms") && error.contains("480 ms") && error.contains("delay=960"),
        "{error}"
    );
    assert_eq!(run.stat("reconnects"), 0, "{:?}", run.stats);
    assert!(run.took < Duration::from_secs(10), "{:?}", run.took);
}

#[test]
fn a_delay_longer_than_the_servers_keeps_working() {
    let (audio, frames) = tone();
    let server = serving_delay(480);
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "delay=960");
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.words.len(), frames.len(), "{:?}", run.words);
}

#[test]
fn a_delay_that_matches_a_server_of_960_ms_works() {
    let (audio, frames) = tone();
    let server = serving_delay(960);
    let run = transcribe(&server.url(), SERVED_MODEL, &audio, "delay=960");
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.words.len(), frames.len(), "{:?}", run.words);
    assert_eq!(run.stat("reconnects"), 0);
}

#[test]
fn with_speech_only_the_server_gets_only_speech_and_its_margins() {
    // Bursts of 3 frames every 4 s: each opens the gate, each closing
    // commits its utterance as final; no audio is sent in between.
    let frames: Vec<usize> = (12..180).step_by(50).flat_map(|s| s..s + 3).collect();
    let audio = common::tone_audio(200, &frames);
    let plain_server = double(Faults::default());
    let plain = transcribe(&plain_server.url(), SERVED_MODEL, &audio, "");
    let server = double(Faults::default());
    let gated = transcribe(&server.url(), SERVED_MODEL, &audio, "speech-only=true");
    assert!(gated.errors.is_empty(), "{:?}", gated.errors);
    let texts = |r: &Run| r.words.clone();
    assert_eq!(
        texts(&gated),
        texts(&plain),
        "the same words at the same times"
    );
    let bursts = frames.len() as u64 / 3;
    let seen = server.seen.lock().unwrap();
    assert_eq!(seen.utterances, bursts, "one utterance per burst");
    // Per burst: the pre-roll (0.64 s), the burst (0.24 s), the hangover
    // (1 s) and the buffer that ended it (0.1 s).
    let most = bursts * (640 + 240 + 1000 + 100) * 16;
    assert!(
        seen.samples <= most,
        "{} samples sent, at most {most} expected",
        seen.samples
    );
    assert!(
        seen.samples < plain_server.seen.lock().unwrap().samples / 2,
        "{:?}",
        seen.samples
    );
    assert_eq!(gated.stat("reconnects"), 0, "{:?}", gated.stats);
    assert_eq!(gated.stat("stream-restarts"), 0, "{:?}", gated.stats);
    eprintln!(
        "speech-only: {} of {} samples sent, {} utterances",
        seen.samples,
        plain_server.seen.lock().unwrap().samples,
        seen.utterances
    );
}

/// A server that closes a session appending no audio for 1.5 s (vLLM's
/// proposed idle watchdog, `VLLM_REALTIME_IDLE_TIMEOUT_S`, here shorter).
fn closing_idle_sessions() -> Double {
    double(Faults {
        idle_timeout: Some(Duration::from_millis(1500)),
        ..Faults::default()
    })
}

#[test]
fn a_server_closing_an_idle_session_is_no_failure_and_costs_nothing() {
    let (audio, frames) = common::remote::bursts_4_s_apart();
    let calm = double(Faults::default());
    let expected = transcribe_paced(&calm.url(), SERVED_MODEL, &audio, "speech-only=true");
    assert_eq!(expected.words.len(), frames.len(), "{:?}", expected.words);

    let server = closing_idle_sessions();
    let generations = server.watch_generations(Duration::from_secs(12));
    let run = transcribe_paced(&server.url(), SERVED_MODEL, &audio, "speech-only=true");
    let generations = generations.join().unwrap();

    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert!(run.warnings.is_empty(), "no WARNING: {:?}", run.warnings);
    assert_eq!(run.words, expected.words, "every word, at its place");
    let seen = server.seen.lock().unwrap();
    // In both pauses, and in the 2.5 s after the last utterance.
    assert_eq!(seen.idle_closes, 3, "the server closed every idle session");
    assert_eq!(
        seen.samples,
        calm.seen.lock().unwrap().samples,
        "no audio sent twice"
    );
    assert_eq!(seen.utterances, 3);
    assert_eq!(run.stat("reconnects"), 0, "{:?}", run.stats);
    assert_eq!(run.stat("audio-resent"), 0, "{:?}", run.stats);
    let servers = run.stats.as_ref().unwrap().get::<gst::Array>("servers");
    let failures: u64 = servers
        .unwrap()
        .iter()
        .map(|s| {
            s.get::<gst::Structure>()
                .unwrap()
                .get::<u64>("failures")
                .unwrap()
        })
        .sum();
    assert_eq!(failures, 0, "no failure counted: {:?}", run.stats);
    assert_no_generation_open_in_the_pauses(&generations);
}

/// While the gate is closed no generation waits on the server (vLLM before
/// PR 44461 wedged one that waited over 60 s for output): the pauses of
/// `bursts_4_s_apart` run from 2.6 to 4.7 s and from 6.6 to 8.7 s (each
/// utterance ends 1 s after its burst with the final commit and its
/// answer; the next opens with the next burst).
fn assert_no_generation_open_in_the_pauses(samples: &[(Duration, u64)]) {
    let in_pause = |t: Duration| {
        let s = t.as_secs_f64();
        (3.0..4.6).contains(&s) || (7.0..8.6).contains(&s)
    };
    assert!(
        samples.iter().any(|&(_, open)| open > 0),
        "a generation ran for each burst: {samples:?}"
    );
    let open_in_pauses: Vec<_> = samples
        .iter()
        .filter(|&&(t, open)| in_pause(t) && open > 0)
        .collect();
    assert!(
        open_in_pauses.is_empty(),
        "generations open while the gate was closed: {open_in_pauses:?}"
    );
}

/// What the double received for one run of `audio` with speech-only:
/// samples, utterances, and the words.
fn sent_with_speech_only(
    audio: &[f32],
    run: impl Fn(&str, &str, &[f32], &str) -> Run,
) -> (u64, u64, Vec<(u64, String)>) {
    let server = double(Faults::default());
    let result = run(&server.url(), SERVED_MODEL, audio, "speech-only=true");
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let seen = server.seen.lock().unwrap();
    (seen.samples, seen.utterances, result.words)
}

/// The same audio sent and the same words, whether the buffers come as
/// fast as they can or in real time.
/// Returns the samples sent.
fn assert_fast_and_paced_send_the_same(audio: &[f32], frames: &[usize]) -> u64 {
    let fast = sent_with_speech_only(audio, transcribe);
    let paced = sent_with_speech_only(audio, transcribe_paced);
    eprintln!("speech-only, as fast as possible: {fast:?}; paced: {paced:?}");
    assert_eq!(fast.2.len(), frames.len(), "{:?}", fast.2);
    assert_eq!(fast, paced, "(samples, utterances, words)");
    fast.0
}

#[test]
fn with_speech_only_a_file_and_the_same_file_paced_send_the_same_audio_and_words() {
    // The gate decides on stream time: how fast the buffers come changes
    // neither what is sent nor the words. Each burst sends its pre-roll,
    // itself and a delay's worth of the hangover; the hangover's rest is
    // held back (the next pre-roll), paced or not.
    let (audio, frames) = common::remote::bursts_4_s_apart();
    let sent = assert_fast_and_paced_send_the_same(&audio, &frames);
    // Per burst 0.32 to 1.70 s: from the onset (0.96 s) less the pre-roll,
    // to the quiet after the burst (from 1.3 s) that is fed, 400 ms of
    // 100 ms buffers; 1.7 to 2.3 s stay held back. Paced, that rest of the
    // hangover used to be sent too (8,000 samples a burst).
    assert_eq!(sent, 3 * 22_080);
}

#[test]
fn with_speech_only_pauses_just_longer_than_the_hangover_give_the_same_words_paced() {
    // Pauses of 1.12 s: the hangover's end, held back, is the next burst's
    // pre-roll; decoded early, it would leave that burst 80 ms of it.
    let frames: Vec<usize> = (12..12 + 5 * 17)
        .step_by(17)
        .flat_map(|s| s..s + 3)
        .collect();
    let audio = common::tone_audio(12 + 5 * 17 + 40, &frames);
    assert_fast_and_paced_send_the_same(&audio, &frames);
}
