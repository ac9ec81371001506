// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The `voxtralrtmetrics` tracer (issue 48 §3, §4; issue 55 §3): `/metrics`
//! in Prometheus' text format with the figures `stats` gives, for every
//! element of the plugin (`voxtralrtsubenc` too), `/healthz` and `/readyz`;
//! a stalled client delays no word; a port in use, a bad address or a bad
//! parameter is a warning on the log and a WARNING message, never an abort
//! under `G_DEBUG=fatal-warnings`, and the pipeline runs on; a tracer let go
//! frees its port; a real Prometheus (Debian's) scrapes a live
//! gst-launch-1.0 pipeline.
//!
//! In this process the tracer is made as GStreamer makes it from
//! `GST_TRACERS` (an object with `params`); the gst-launch-1.0 tests set
//! `GST_TRACERS` itself. Each tracer here sees every element made after it,
//! so the tests take turns.

// The tone and tiny models run on the local engine.
#![cfg(feature = "local")]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::process::{unused_tcp_listener, unused_tcp_port, wait_until, Guarded};
use gst::prelude::*;
use gstvoxtralrt::metrics::VoxtralRtMetrics;

/// One test at a time: a tracer counts every element of the process.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// A tracer serving on a port of its own, as GST_TRACERS would make it.
fn tracer() -> (VoxtralRtMetrics, u16) {
    let port = unused_tcp_port();
    (tracer_on(port), port)
}

fn tracer_on(port: u16) -> VoxtralRtMetrics {
    common::init_plugin();
    gst::glib::Object::builder::<VoxtralRtMetrics>()
        .property("params", format!("address=127.0.0.1:{port}"))
        .build()
}

/// GET `path` on 127.0.0.1:`port`: the status code and the body.
fn get(port: u16, path: &str) -> (u16, String) {
    fetch(port, path).unwrap_or_else(|e| panic!("GET {path} on port {port}: {e}"))
}

fn fetch(port: u16, path: &str) -> std::io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let bad = || std::io::Error::other(format!("not an HTTP answer: {answer:?}"));
    let (head, body) = answer.split_once("\r\n\r\n").ok_or_else(bad)?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(bad)?;
    Ok((status, body.to_owned()))
}

/// The value of `series` (name and labels, as written) in a scrape.
fn value(scrape: &str, series: &str) -> f64 {
    scrape
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {series} in\n{scrape}"))
        .parse()
        .unwrap()
}

fn seconds(stats: &gst::StructureRef, field: &str) -> f64 {
    stats.get::<u64>(field).unwrap() as f64 / 1e9
}

/// Each counter `family` with `labels` in a scrape is the u64 `field` of
/// `stats`.
fn assert_counts(scrape: &str, labels: &str, stats: &gst::StructureRef, pairs: &[(&str, &str)]) {
    for &(family, field) in pairs {
        assert_eq!(
            value(scrape, &format!("{family}{labels}")),
            stats.get::<u64>(field).unwrap() as f64,
            "{family}"
        );
    }
}

/// `promtool check metrics` on a scrape: its complaints, if any.
fn promtool_check(scrape: &str) -> String {
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; scripts/setup installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(scrape.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = common::output_text(&out);
    if out.status.success() {
        text
    } else {
        format!("promtool failed: {text}")
    }
}

fn assert_promtool_finds_nothing(scrape: &str) {
    let complaints = promtool_check(scrape);
    assert!(complaints.trim().is_empty(), "{complaints}\n{scrape}");
}

/// Runs `pipeline` (its transcriber `t` fed by appsrc `src`) on the tone
/// fixture's audio to EOS and leaves it PLAYING.
fn run_tone(pipeline: &gst::Pipeline, frames: &[usize], total: usize) {
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let audio = common::tone_audio(total, frames);
    for (k, piece) in audio.chunks(1600).enumerate() {
        let mut buffer = gst::Buffer::from_mut_slice(common::to_f32le(piece));
        buffer
            .get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(100 * k as u64));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer]);
    }
    let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    common::expect_eos(pipeline);
}

#[cfg(feature = "translate")]
#[test]
fn the_figures_are_what_stats_says_and_promtool_finds_no_problem() {
    use common::chat_double::{ChatDouble, ChatFaults, SERVED_MODEL};
    let _turn = turn();
    let (_tracer, port) = tracer();
    let double = ChatDouble::start(ChatFaults::default());
    let pipeline = common::translating::pipeline(
        &double.base(),
        &format!("translate-model={SERVED_MODEL}"),
        "es",
        false,
    );
    let frames: Vec<usize> = common::translating::FRAMES.to_vec();
    run_tone(&pipeline, &frames, common::translating::TOTAL_FRAMES);
    let t = pipeline.by_name("t").unwrap();
    let before = t.property::<gst::Structure>("stats");
    let (status, scrape) = get(port, "/metrics");
    let stats = t.property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    assert_eq!(status, 200);
    // After EOS nothing moves but the ages.
    for field in ["audio-received", "words", "model-steps"] {
        assert_eq!(
            before.get::<u64>(field).unwrap(),
            stats.get::<u64>(field).unwrap()
        );
    }
    let e = r#"{element="t"}"#;
    let src = r#"{element="t",pad="src"}"#;
    for (family, field) in [
        ("voxtralrt_audio_received_seconds_total", "audio-received"),
        (
            "voxtralrt_audio_transcribed_seconds_total",
            "audio-transcribed",
        ),
        ("voxtralrt_audio_skipped_seconds_total", "audio-skipped"),
        ("voxtralrt_lag_seconds", "lag"),
    ] {
        assert_eq!(
            value(&scrape, &format!("{family}{e}")),
            seconds(&stats, field),
            "{family}"
        );
    }
    assert_counts(
        &scrape,
        e,
        &stats,
        &[
            ("voxtralrt_model_steps_total", "model-steps"),
            ("voxtralrt_watchdog_restarts_total", "stalls"),
            (
                "voxtralrt_caption_words_dropped_total",
                "caption-words-dropped",
            ),
        ],
    );
    let words = stats.get::<u64>("words").unwrap();
    assert_eq!(words, frames.len() as u64);
    assert_eq!(
        value(&scrape, &format!("voxtralrt_words_total{src}")),
        words as f64
    );
    assert!(stats.get::<u64>("model-steps").unwrap() > 0);
    // Each word's lag, counted.
    let lag = stats.get::<gst::Structure>("word-lag").unwrap();
    assert_eq!(lag.get::<u64>("count").unwrap(), words);
    assert_eq!(
        value(&scrape, &format!("voxtralrt_word_lag_seconds_count{e}")),
        words as f64
    );
    assert_eq!(
        value(&scrape, &format!("voxtralrt_word_lag_seconds_sum{e}")),
        seconds(&lag, "sum")
    );
    assert_eq!(
        value(
            &scrape,
            r#"voxtralrt_word_lag_seconds_bucket{element="t",le="+Inf"}"#
        ),
        words as f64
    );
    // The age of the last word grows between the two reads of stats.
    let age = value(&scrape, &format!("voxtralrt_last_word_age_seconds{src}"));
    assert!(
        seconds(&before, "last-word-age") <= age && age <= seconds(&stats, "last-word-age"),
        "{age}"
    );
    assert_eq!(
        value(&scrape, &format!("voxtralrt_caption_alarm{src}")),
        0.0
    );
    assert_eq!(value(&scrape, &format!("voxtralrt_ready{e}")), 1.0);
    // The translate pad's.
    let counts = common::translating::counts(&stats);
    let pad = r#"{element="t",pad="translate_src_0",language="es"}"#;
    assert_counts(
        &scrape,
        pad,
        &counts,
        &[
            ("voxtralrt_translation_requests_total", "requests"),
            ("voxtralrt_translation_failures_total", "failures"),
            ("voxtralrt_translation_catch_ups_total", "catch-ups"),
        ],
    );
    assert_eq!(counts.get::<u64>("requests").unwrap(), 3);
    let translated_words = counts.get::<u64>("words").unwrap();
    assert!(translated_words > 0, "{counts:?}");
    assert_eq!(
        value(
            &scrape,
            r#"voxtralrt_words_total{element="t",pad="translate_src_0"}"#
        ),
        translated_words as f64
    );
    assert_eq!(
        value(
            &scrape,
            &format!("voxtralrt_translation_lag_seconds_count{pad}")
        ),
        3.0
    );
    assert!(scrape.contains("voxtralrt_build_info{version=\""));
    assert_promtool_finds_nothing(&scrape);
}

#[test]
fn each_server_of_url_is_counted_as_stats_counts_it() {
    use common::vllm_double::{Double, Faults, SERVED_MODEL};
    let _turn = turn();
    let (_tracer, port) = tracer();
    let server = Double::start(common::tiny_model(), Faults::default());
    let refusing = Double::refusing_url();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src format=time caps={} ! voxtralrttranscriber name=v engine=vllm \
         url={refusing},{} server-choice=in-order model={SERVED_MODEL} ! fakesink sync=false",
        common::remote::F32_CAPS,
        server.url()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    run_tone(&pipeline, &[10, 11, 12], 40);
    let v = pipeline.by_name("v").unwrap();
    let (_, scrape) = get(port, "/metrics");
    let stats = v.property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    let servers = stats.get::<gst::Array>("servers").unwrap();
    assert_eq!(servers.len(), 2, "{stats:?}");
    for server in servers.iter() {
        let s = server.get::<gst::Structure>().unwrap();
        let url = s.get::<String>("url").unwrap();
        let labels = format!(r#"{{element="v",server="{url}"}}"#);
        for (family, field) in [
            ("voxtralrt_server_connects_total", "connections"),
            ("voxtralrt_server_errors_total", "failures"),
        ] {
            assert_eq!(
                value(&scrape, &format!("{family}{labels}")),
                s.get::<u64>(field).unwrap() as f64,
                "{family} {url}"
            );
        }
    }
    assert!(
        value(
            &scrape,
            &format!(r#"voxtralrt_server_errors_total{{element="v",server="{refusing}"}}"#)
        ) >= 1.0
    );
    assert_eq!(
        value(&scrape, r#"voxtralrt_server_failovers_total{element="v"}"#),
        stats.get::<u64>("failovers").unwrap() as f64
    );
    assert_promtool_finds_nothing(&scrape);
}

#[test]
fn the_subtitle_encoder_is_served_with_its_cue_counts() {
    let _turn = turn();
    let (_tracer, port) = tracer();
    let pipeline = gst::parse::launch(&format!(
        "appsrc name=src format=time caps={} ! voxtralrttranscriber name=t model-path={} \
         threads=1 ! voxtralrtsubenc name=enc format=srt ! fakesink sync=false",
        common::remote::F32_CAPS,
        common::tone_model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    run_tone(&pipeline, &[10, 11, 12, 30, 31, 50], 60);
    let enc = pipeline.by_name("enc").unwrap();
    let (status, scrape) = get(port, "/metrics");
    let stats = enc.property::<gst::Structure>("stats");
    pipeline.set_state(gst::State::Null).unwrap();
    assert_eq!(status, 200);
    let cues = stats.get::<u64>("subtitle-cues").unwrap();
    assert!(cues > 0, "{stats:?}");
    let e = r#"{element="enc"}"#;
    assert_counts(
        &scrape,
        e,
        &stats,
        &[
            ("voxtralrt_subtitle_cues_total", "subtitle-cues"),
            (
                "voxtralrt_subtitle_cues_too_fast_total",
                "subtitle-cues-too-fast",
            ),
            ("voxtralrt_subtitle_cues_short_total", "subtitle-cues-short"),
            (
                "voxtralrt_subtitle_chars_replaced_total",
                "subtitle-chars-replaced",
            ),
            (
                "voxtralrt_invalid_utf8_buffers_total",
                "invalid-utf8-buffers",
            ),
        ],
    );
    assert_eq!(value(&scrape, &format!("voxtralrt_ready{e}")), 1.0);
    // It runs no model: no model series of its own.
    assert!(
        !scrape.contains(r#"voxtralrt_words_total{element="enc""#),
        "{scrape}"
    );
    assert!(scrape.contains(r#"voxtralrt_words_total{element="t",pad="src"} 6"#));
    assert_promtool_finds_nothing(&scrape);
}

#[test]
fn a_tracer_let_go_frees_its_port_for_the_next() {
    let _turn = turn();
    let (first, port) = tracer();
    assert_eq!(get(port, "/healthz").0, 200);
    // What gst_deinit() does to the tracers it holds, by their last unref.
    // SAFETY: after its dispose the tracer still takes the hooks GStreamer
    // calls (it finds elements, it serves nothing); nothing else uses it.
    unsafe { first.run_dispose() };
    let free = wait_until(Duration::from_secs(5), || {
        std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
    });
    assert!(free, "port {port} still taken after dispose");
    let _second = tracer_on(port);
    assert_eq!(get(port, "/healthz"), (200, "ok\n".to_owned()));
}

#[test]
fn a_client_that_connects_and_stalls_delays_no_word() {
    let _turn = turn();
    let (_tracer, port) = tracer();
    // Live: a word per 80 ms of tone.
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc is-live=true freq=1000 samplesperbuffer=320 ! \
         audio/x-raw,rate=16000,channels=1 ! voxtralrttranscriber name=live \
         model-path={} threads=1 ! fakesink name=out signal-handoffs=true",
        common::tone_model()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let log = arrivals.clone();
    pipeline
        .by_name("out")
        .unwrap()
        .connect("handoff", false, move |_| {
            log.lock().unwrap().push(Instant::now());
            None
        });
    pipeline.set_state(gst::State::Playing).unwrap();
    assert!(wait_until(Duration::from_secs(20), || arrivals
        .lock()
        .unwrap()
        .len()
        > 5));
    // One client says nothing, one half a request line; both for 5 s.
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.write_all(b"GET /metr").unwrap();
    let stalled_from = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let asked = Instant::now();
    let (status, scrape) = get(port, "/metrics");
    let answered_in = asked.elapsed();
    std::thread::sleep(Duration::from_secs(5).saturating_sub(stalled_from.elapsed()));
    let stalled_to = Instant::now();
    drop((silent, half));
    pipeline.set_state(gst::State::Null).unwrap();
    assert_eq!(status, 200);
    assert!(scrape.contains(r#"voxtralrt_words_total{element="live",pad="src"}"#));
    assert!(answered_in < Duration::from_secs(1), "{answered_in:?}");
    let during: Vec<Instant> = arrivals
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|t| (stalled_from..stalled_to).contains(t))
        .collect();
    assert!(during.len() >= 20, "{} words in 5 s", during.len());
    let longest = during
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    eprintln!(
        "{} words while two clients stalled, longest gap {longest:?}; scrape in {answered_in:?}",
        during.len()
    );
    assert!(longest < Duration::from_secs(1), "{longest:?}");
}

#[test]
fn readyz_says_per_element_why_it_is_not_ready() {
    use common::recognizers::MuteAfter;
    use common::vllm_double::{Double, Faults, SERVED_MODEL};
    let _turn = turn();
    let (_tracer, port) = tracer();
    assert_eq!(get(port, "/healthz"), (200, "ok\n".to_owned()));
    let (status, body) = get(port, "/readyz");
    assert_eq!(status, 503);
    assert!(body.contains("no voxtralrt element"), "{body}");
    assert_eq!(get(port, "/other").0, 404);

    // PAUSED, then PLAYING.
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc is-live=true ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber name=ready model-path={} threads=1 ! fakesink",
        common::tone_model()
    ))
    .unwrap();
    pipeline.set_state(gst::State::Paused).unwrap();
    // Once the worker has its model (at once, or nearly).
    let paused = (
        503,
        "ready: not ready: it is PAUSED, not PLAYING\n".to_owned(),
    );
    let mut answer = (0, String::new());
    assert!(
        wait_until(Duration::from_secs(10), || {
            answer = get(port, "/readyz");
            answer == paused
        }),
        "{answer:?}"
    );
    pipeline.set_state(gst::State::Playing).unwrap();
    assert!(wait_until(Duration::from_secs(10), || get(port, "/readyz")
        == (200, "ready: ready\n".to_owned())));
    let (_, scrape) = get(port, "/metrics");
    assert_eq!(value(&scrape, r#"voxtralrt_ready{element="ready"}"#), 1.0);
    pipeline.set_state(gst::State::Null).unwrap();
    drop(pipeline);

    // A model silent over speech: the watchdog restarts it in vain and the
    // caption alarm is on when the file ends (the pipeline still PLAYING).
    let dir = common::scratch_dir("metrics-readyz");
    let wav = common::speech::speech(&dir);
    let pipeline = gst::parse::launch(&format!(
        "filesrc location={} ! wavparse ! audioconvert ! audioresample ! \
         audio/x-raw,rate=16000,channels=1 ! voxtralrttranscriber name=mute threads=1 \
         model-path={} stall-timeout=2000 caption-alarm=3000 ! fakesink sync=false",
        wav.display(),
        common::tiny_model().display()
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    common::recognizers::wrap(&pipeline.by_name("mute").unwrap(), |inner| {
        Box::new(MuteAfter::new(inner, 3 * 16_000, true))
    });
    pipeline.set_state(gst::State::Playing).unwrap();
    common::expect_eos(&pipeline);
    let (status, body) = get(port, "/readyz");
    assert_eq!(status, 503);
    assert_eq!(
        body,
        "mute: not ready: the watchdog is restarting a model that writes nothing over speech; \
         caption alarm: the model is silent over speech (1 watchdog restarts since the last \
         word)\n"
    );
    let (_, scrape) = get(port, "/metrics");
    assert_eq!(value(&scrape, r#"voxtralrt_ready{element="mute"}"#), 0.0);
    assert_eq!(
        value(
            &scrape,
            r#"voxtralrt_caption_alarm{element="mute",pad="src"}"#
        ),
        1.0
    );
    pipeline.set_state(gst::State::Null).unwrap();
    drop(pipeline);

    // A vLLM server that dies: the element waits for it, and says so.
    let faults = Faults {
        die_after: Some(20),
        ..Faults::default()
    };
    let server = Double::start(common::tiny_model(), faults);
    let pipeline = gst::parse::launch(&format!(
        "filesrc location={} ! wavparse ! audioconvert ! audioresample ! \
         audio/x-raw,rate=16000,channels=1 ! voxtralrttranscriber name=remote \
         engine=vllm url={} model={SERVED_MODEL} ! fakesink sync=false",
        wav.display(),
        server.url()
    ))
    .unwrap();
    pipeline.set_state(gst::State::Playing).unwrap();
    let mut body = String::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            body = get(port, "/readyz").1;
            body.contains("the model has not answered for")
        }),
        "{body}"
    );
    assert!(body.starts_with("remote: not ready: "), "{body}");
    pipeline.set_state(gst::State::Null).unwrap();
}

/// Runs a short gst-launch-1.0 pipeline of the tone model with
/// `GST_TRACERS` set to `tracers`, the tracer's warnings on the log and
/// GLib's warnings fatal: whether it succeeded, and its output.
fn launch_with_tracers(tracers: &str) -> (bool, String) {
    let out = std::process::Command::new("gst-launch-1.0")
        .args(
            format!(
                "audiotestsrc num-buffers=20 freq=1000 ! audio/x-raw,rate=16000,channels=1 ! \
                 voxtralrttranscriber name=t model-path={} threads=1 ! fakesink",
                common::tone_model()
            )
            .split(' '),
        )
        .env("GST_PLUGIN_PATH", common::plugin_dir())
        .env("GST_TRACERS", tracers)
        .env("GST_DEBUG", "voxtralrtmetrics:2")
        .env("GST_DEBUG_NO_COLOR", "1")
        .env("G_DEBUG", "fatal-warnings")
        .output()
        .expect("gst-launch-1.0");
    (out.status.success(), common::output_text(&out))
}

#[test]
fn a_port_in_use_a_bad_address_or_parameter_warns_and_the_pipeline_runs_on() {
    // A line of the tracer's debug category at WARNING level.
    let logged = |output: &str, text: &str| {
        output
            .lines()
            .any(|l| l.contains(" WARN ") && l.contains(" voxtralrtmetrics ") && l.contains(text))
    };
    let (_taken, port) = unused_tcp_listener();
    let in_use = format!("127.0.0.1:{port}");
    for (tracers, expected) in [
        (
            format!("voxtralrtmetrics(address={in_use})"),
            vec![
                format!("cannot serve on {in_use}"),
                "Address already in use".to_owned(),
            ],
        ),
        (
            "voxtralrtmetrics(address=no-such-host.invalid:9464)".to_owned(),
            vec!["cannot serve on no-such-host.invalid:9464".to_owned()],
        ),
        (
            "voxtralrtmetrics(adress=127.0.0.1:9464)".to_owned(),
            vec!["no parameter \"adress\" (its one parameter is address)".to_owned()],
        ),
    ] {
        let (ran, output) = launch_with_tracers(&tracers);
        // Under G_DEBUG=fatal-warnings a g_warning would have aborted it.
        assert!(ran, "{tracers}: the pipeline did not run on\n{output}");
        assert!(!output.contains("voxtralrtmetrics-WARNING"), "{output}");
        // The log's warning at once, and the element's WARNING on the bus.
        assert!(
            logged(&output, &expected[0]),
            "{tracers}: not logged\n{output}"
        );
        assert!(
            output
                .contains("WARNING: from element /GstPipeline:pipeline0/GstVoxtralRtTranscriber:t"),
            "{output}"
        );
        for text in expected {
            assert!(
                output.contains(&text),
                "{tracers}: no {text:?} in\n{output}"
            );
        }
    }
}

/// Debian's Prometheus, on a free port, scraping `target` every second
/// from a configuration and storage of its own in `dir`.
fn prometheus(dir: &std::path::Path, target: u16) -> (Guarded, u16) {
    let port = unused_tcp_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n\
             scrape_configs:\n  - job_name: voxtralrt\n    static_configs:\n      \
             - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    let guarded = Guarded::spawn(
        std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).unwrap()),
        "prometheus (Debian package prometheus; scripts/setup installs it)",
    );
    (guarded, port)
}

/// The first value Prometheus at `port` answers for `query`, if any.
fn query(port: u16, query: &str) -> Option<f64> {
    let path = format!("/api/v1/query?query={query}");
    let (status, body) = fetch(port, &path).ok()?;
    if status != 200 {
        return None;
    }
    let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
    answer["data"]["result"][0]["value"][1]
        .as_str()?
        .parse()
        .ok()
}

/// The line of docs/metrics.md that enables the tracer.
fn docs_line() -> String {
    include_str!("../docs/metrics.md")
        .lines()
        .find(|l| l.starts_with("GST_TRACERS=") && l.contains("gst-launch-1.0 "))
        .expect("docs/metrics.md has a GST_TRACERS=... gst-launch-1.0 line")
        .to_owned()
}

#[test]
fn a_real_prometheus_scrapes_the_live_pipeline_of_the_guide() {
    let dir = common::scratch_dir("metrics-prometheus");
    let target = unused_tcp_port();
    // The guide's line, on a port of this test's, with one thread.
    let line = docs_line()
        .replace("127.0.0.1:9464", &format!("127.0.0.1:{target}"))
        .replace("model-path=$MODEL", "model-path=$MODEL threads=1");
    let mut launch = Guarded::spawn(
        std::process::Command::new("sh")
            .args(["-c", &line])
            .env("MODEL", common::tiny_model())
            .env("GST_PLUGIN_PATH", common::plugin_dir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
        "gst-launch-1.0",
    );
    let (mut prometheus, port) = prometheus(&dir, target);
    let mut words = None;
    let scraped = wait_until(Duration::from_secs(30), || {
        words = query(port, "voxtralrt_words_total%7Belement%3D%22captions%22%7D");
        words.is_some_and(|w| w > 0.0)
    });
    let up = query(port, "up%7Bjob%3D%22voxtralrt%22%7D");
    let ready = query(port, "voxtralrt_ready%7Belement%3D%22captions%22%7D");
    prometheus.stop();
    launch.stop();
    let log = std::fs::read_to_string(dir.join("prometheus.log")).unwrap_or_default();
    assert!(scraped, "Prometheus got no words: {words:?}\n{log}");
    assert_eq!(up, Some(1.0), "{log}");
    assert_eq!(ready, Some(1.0), "{log}");
}
