// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! GPU backends. With `VOXTRALRT_GPU_BACKEND=vulkan` (or `cuda`) and a
//! plugin built with that cargo feature, the tone fixture and the tiny
//! model run on the GPU and must give the CPU's words at the CPU's times;
//! a device that does not exist is an ERROR naming the devices found. On
//! Mesa's lavapipe (a CPU-type Vulkan device, which ggml skips unless named)
//! set `GGML_VK_VISIBLE_DEVICES=0` and `LP_NUM_THREADS=0` too
//! (docs/gpu.md). Without the variable those tests say they are skipped. A backend the build lacks is an ERROR saying how to
//! build with it, tested in every build.

// The GPU backends are the local engine's (the client build has none).
#![cfg(feature = "local")]

mod common;

use gst::prelude::*;

const CAPS: &str = "audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved";

/// The backend under test, if this run has one (else says it skips).
fn gpu_backend(test: &str) -> Option<String> {
    let backend = std::env::var("VOXTRALRT_GPU_BACKEND")
        .ok()
        .filter(|b| !b.is_empty());
    if backend.is_none() {
        eprintln!(
            "{test}: skipped: VOXTRALRT_GPU_BACKEND is not set (scripts/checks/gpu-check sets it)"
        );
    }
    backend
}

/// (pts, text) of each word `props` give for `audio` (pushed from an
/// appsrc), or the ERROR.
fn words(model: &str, audio: &[f32], props: &str) -> Result<Vec<(u64, String)>, String> {
    run(
        &format!("appsrc name=src format=time caps={CAPS}"),
        model,
        props,
        Some(audio),
    )
}

/// The same for the README's sample file.
fn sample_words(model: &str, props: &str) -> Result<Vec<(u64, String)>, String> {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/sample.wav");
    let source = format!("filesrc location={sample} ! wavparse ! audioconvert ! audioresample");
    run(&source, model, props, None)
}

fn run(
    source: &str,
    model: &str,
    props: &str,
    pushed: Option<&[f32]>,
) -> Result<Vec<(u64, String)>, String> {
    common::init_plugin();
    let line = format!(
        "{source} ! voxtralrttranscriber name=t model-path={model} threads=1 {props} ! \
         fakesink name=out signal-handoffs=true sync=false"
    );
    let pipeline = gst::parse::launch(&line)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let out = common::handoffs(&pipeline, "out");
    if pipeline.set_state(gst::State::Playing).is_err() {
        let error = first_error(&pipeline);
        pipeline.set_state(gst::State::Null).unwrap();
        return Err(error);
    }
    if let Some(audio) = pushed {
        let src = pipeline.by_name("src").unwrap();
        for (k, piece) in audio.chunks(1600).enumerate() {
            let mut b = gst::Buffer::from_mut_slice(common::to_f32le(piece));
            b.get_mut()
                .unwrap()
                .set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
            if src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]) != gst::FlowReturn::Ok {
                break;
            }
        }
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    }
    let end = common::run_to_end(pipeline.upcast_ref(), time_allowed(props));
    let stats = pipeline
        .by_name("t")
        .unwrap()
        .property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    if let gst::MessageView::Error(e) = end.view() {
        return Err(e.error().to_string());
    }
    // The model ran where it was asked to (no silent fall-back to the CPU).
    let ran_on = stats.get::<String>("backend").unwrap().to_lowercase();
    if let Some(asked) = props
        .split_whitespace()
        .find_map(|p| p.strip_prefix("backend="))
    {
        assert!(ran_on.contains(asked), "asked for {asked}, ran on {ran_on}");
    }
    let words = out
        .lock()
        .unwrap()
        .iter()
        .map(|b| (b.pts().unwrap().nseconds(), common::text_of(b)))
        .filter(|w| !w.1.trim().is_empty())
        .collect();
    Ok(words)
}

/// How long one run may take. On a GPU backend the first runs include
/// compiling its shaders: Mesa's lavapipe compiles each with LLVM on first
/// use, which took over 3 minutes in a fresh Debian 13 root on 2 cores
/// (the same tests take 5 s once Mesa's shader cache holds them).
fn time_allowed(props: &str) -> std::time::Duration {
    let on_cpu = props.split_whitespace().any(|p| p == "backend=cpu");
    std::time::Duration::from_secs(if on_cpu { 120 } else { 900 })
}

fn first_error(pipeline: &gst::Pipeline) -> String {
    let bus = pipeline.bus().unwrap();
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(5)) {
        if let gst::MessageView::Error(e) = msg.view() {
            return e.error().to_string();
        }
    }
    "no ERROR message".into()
}

#[test]
fn the_gpu_backend_writes_the_cpus_words_at_the_cpus_times() {
    let Some(backend) = gpu_backend("the_gpu_backend_writes_the_cpus_words_at_the_cpus_times")
    else {
        return;
    };
    let tone = common::tone_audio(66, &common::tone_frames());
    let on_gpu = words(&common::tone_model(), &tone, &format!("backend={backend}")).unwrap();
    let on_cpu = words(&common::tone_model(), &tone, "backend=cpu").unwrap();
    assert_eq!(on_gpu.len(), common::tone_frames().len(), "{on_gpu:?}");
    assert_eq!(
        on_gpu, on_cpu,
        "the tone fixture on {backend} and on the CPU"
    );

    let tiny = common::tiny_model().display().to_string();
    let on_gpu = sample_words(&tiny, &format!("backend={backend}")).unwrap();
    let on_cpu = sample_words(&tiny, "backend=cpu").unwrap();
    assert!(!on_cpu.is_empty());
    assert_eq!(on_gpu, on_cpu, "the tiny model on {backend} and on the CPU");
    eprintln!("{backend}: {} words, the same as the CPU's", on_gpu.len());
}

#[test]
fn a_device_that_does_not_exist_is_an_error_naming_the_devices_found() {
    let Some(backend) =
        gpu_backend("a_device_that_does_not_exist_is_an_error_naming_the_devices_found")
    else {
        return;
    };
    let tone = common::tone_audio(20, &[]);
    let error = words(
        &common::tone_model(),
        &tone,
        &format!("backend={backend} device=99"),
    )
    .expect_err("device 99 does not exist");
    assert!(error.contains("no device 99"), "{error}");
    assert!(
        error.contains(&format!("({backend})")),
        "the devices are named, a {backend} one among them: {error}"
    );
}

#[test]
fn a_backend_this_build_lacks_is_an_error_saying_how_to_build_with_it() {
    let tone = common::tone_audio(20, &[]);
    for (backend, built) in [
        ("vulkan", cfg!(feature = "vulkan")),
        ("cuda", cfg!(feature = "cuda")),
    ] {
        if built {
            continue;
        }
        let error = words(&common::tone_model(), &tone, &format!("backend={backend}"))
            .expect_err("not built in");
        assert!(error.contains(&format!("--features {backend}")), "{error}");
        assert!(error.contains(&format!("-D{backend}=enabled")), "{error}");
    }
}
