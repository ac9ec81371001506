// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Translation against llama.cpp's real chat servers on 127.0.0.1: its own
//! `llama-server` and llama-cpp-python's server, built from the
//! llama-cpp-python 0.3.36 sdist by `scripts/servers/llama-server install` (`.ci/run`
//! does), serving tiny GGUF chat models whose made weights answer "hola
//! mundo" (or go on to count to 500). Without them each test says it is
//! skipped and passes.
//!
//! What these servers do that a client must live with: llama-server sends
//! an empty comment (`:`) when a stream stays silent for
//! `--sse-ping-interval` seconds (30 by default); llama-cpp-python sends
//! `: ping - <time>` every 15 s of a stream, data or not; a one-model
//! server answers under any model name, a router refuses an unknown one by
//! name; llama-cpp-python cuts a stream short with a bare `[DONE]` when a
//! newer request comes, unless started with `--interrupt_requests False`.

#![cfg(feature = "translate")]

mod common;

use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::llama::{
    body_of, installed, long_answer, post, Kind, Model, Server, Tap, CHAT_MODEL, LONG_MODEL,
};
use gstvoxtralrt::translation::{
    ApiKey, ChatClient, ChatConfig, Error, History, Language, Translation,
};

const UNIT: &str = "Good evening, and welcome to the panel.";

fn client(base: &str, model: &str, stream: bool, timeout: Duration) -> ChatClient {
    let config = ChatConfig {
        stream,
        key: ApiKey::none(),
        timeout,
        ..ChatConfig::new(model)
    };
    ChatClient::new(base, config).unwrap()
}

fn spanish() -> Language {
    Language::parse("es").unwrap()
}

fn ask(base: &str, model: &str, stream: bool) -> Result<Translation, Error> {
    client(base, model, stream, Duration::from_secs(30)).translate(
        &spanish(),
        &History::new(0),
        UNIT,
    )
}

/// The SSE lines of the response on a tap's first connection.
fn sse_lines(tap: &Tap) -> Vec<String> {
    body_of(&tap.sent_back(0))
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The text of the content deltas among `lines`.
fn deltas(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v.pointer("/choices/0/delta/content")
                .and_then(|c| c.as_str())
                .map(str::to_owned)
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// The finish_reasons among `lines`.
fn finish_reasons(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v.pointer("/choices/0/finish_reason")
                .and_then(|c| c.as_str())
                .map(str::to_owned)
        })
        .collect()
}

/// Streamed and plain, the answer is the model's; the stream comes in one
/// chunk per token, ends with a finish_reason and `[DONE]`, and has no
/// comment line when nothing is slow.
fn answers_streamed_and_plain(kind: Kind) {
    let server = Server::start(kind, Model::Tiny, &[]);
    let tap = Tap::start(server.port);
    let streamed = ask(&tap.base(), CHAT_MODEL, true).unwrap();
    assert_eq!(streamed.text, "hola mundo", "{}", server.log_text());
    let lines = sse_lines(&tap);
    assert_eq!(deltas(&lines).concat().trim(), "hola mundo", "{lines:#?}");
    assert_eq!(deltas(&lines).len(), 2, "{lines:#?}");
    assert_eq!(finish_reasons(&lines), ["stop"], "{lines:#?}");
    assert_eq!(
        lines.iter().rev().find(|l| !l.is_empty()).unwrap(),
        "data: [DONE]"
    );
    assert!(!lines.iter().any(|l| l.starts_with(':')), "{lines:#?}");
    let plain = ask(&server.base(), CHAT_MODEL, false).unwrap();
    assert_eq!(plain.text, "hola mundo");
}

#[test]
fn llama_server_answers_streamed_and_plain() {
    if installed("llama_server_answers_streamed_and_plain") {
        answers_streamed_and_plain(Kind::LlamaServer);
    }
}

#[test]
fn llama_cpp_python_answers_streamed_and_plain() {
    if installed("llama_cpp_python_answers_streamed_and_plain") {
        answers_streamed_and_plain(Kind::Python);
    }
}

/// A server of one model serves it under any name: a wrong
/// translate-model goes unnoticed there. The answer's `model` is the
/// served name on llama-server, the name asked for on llama-cpp-python.
#[test]
fn a_one_model_server_answers_under_any_model_name() {
    if !installed("a_one_model_server_answers_under_any_model_name") {
        return;
    }
    for (kind, named) in [
        (Kind::LlamaServer, CHAT_MODEL),
        (Kind::Python, "no-such-model"),
    ] {
        let server = Server::start(kind, Model::Tiny, &[]);
        for stream in [true, false] {
            let tap = Tap::start(server.port);
            let answer = ask(&tap.base(), "no-such-model", stream);
            assert_eq!(
                answer.unwrap().text,
                "hola mundo",
                "{kind:?}, stream {stream}"
            );
            let body = body_of(&tap.sent_back(0));
            let json = body
                .lines()
                .map(|l| l.strip_prefix("data: ").unwrap_or(l))
                .find(|l| l.starts_with('{'))
                .unwrap();
            let json: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(json["model"], named, "{kind:?}, stream {stream}");
        }
    }
}

/// `llama-server --models-dir` (the router) refuses a model it does not
/// have with a 400 naming it, and the error names it too.
#[test]
fn a_llama_server_router_refuses_an_unknown_model_by_name() {
    if !installed("a_llama_server_router_refuses_an_unknown_model_by_name") {
        return;
    }
    let server = Server::start(Kind::Router, Model::Tiny, &[]);
    // Each model of the folder by its file name.
    let long = ask(&server.base(), LONG_MODEL, true);
    assert_eq!(long.unwrap().text, long_answer(), "{}", server.log_text());
    for stream in [true, false] {
        let answer = ask(&server.base(), CHAT_MODEL, stream);
        assert_eq!(answer.unwrap().text, "hola mundo", "{}", server.log_text());
        let error = ask(&server.base(), "no-such-model", stream).unwrap_err();
        assert!(
            matches!(&error, Error::UnknownModel { model, answer, .. }
                if model == "no-such-model" && answer == "model 'no-such-model' not found"),
            "{error:?}"
        );
        assert!(error.to_string().contains("'no-such-model'"), "{error}");
    }
}

/// llama-server sends `:` (an empty comment) when a stream stays silent
/// for `--sse-ping-interval` seconds: here a long prompt, processed after
/// the stream began, keeps it silent longer than the 1 s asked for. The
/// client skips the pings and reads the answer.
///
/// It looks for silence at its 1 s polls and pings once more than the
/// interval has passed, so the first ping needs about 2 s of silence. The
/// prompt is read 4 tokens a batch, each batch attending to all before it:
/// about 8 s on an idle 2-core machine (3 pings), where the default batch
/// read twice the prompt in 1.8 s and no ping came.
#[test]
fn llama_server_pings_a_stream_silent_for_its_ping_interval() {
    if !installed("llama_server_pings_a_stream_silent_for_its_ping_interval") {
        return;
    }
    let server = Server::start(
        Kind::LlamaServer,
        Model::Tiny,
        &[
            "--sse-ping-interval",
            "1",
            "--ctx-size",
            "16384",
            "--parallel",
            "1",
            "--batch-size",
            "4",
            "--ubatch-size",
            "4",
        ],
    );
    let tap = Tap::start(server.port);
    let long_unit = long_prompt();
    let start = Instant::now();
    let answer = client(&tap.base(), CHAT_MODEL, true, Duration::from_secs(120))
        .translate(&spanish(), &History::new(0), &long_unit)
        .unwrap();
    let took = start.elapsed();
    assert_eq!(answer.text, "hola mundo");
    let lines = sse_lines(&tap);
    let pings = lines.iter().filter(|l| *l == ":").count();
    let first_data = lines.iter().position(|l| l.starts_with("data: ")).unwrap();
    eprintln!("{pings} pings in a stream of {took:?}; first data at line {first_data}");
    assert!(pings >= 1, "no ping in {took:?}: {lines:#?}");
    assert!(
        lines[..first_data].iter().all(|l| l.is_empty() || l == ":"),
        "{lines:#?}"
    );
}

/// About 10 600 tokens of text the tiny model's vocabulary has no word
/// for (each byte is a token).
fn long_prompt() -> String {
    "abcdefgh ".repeat(960)
}

/// llama-cpp-python's server (sse-starlette) sends `: ping - <time>`
/// every 15 s from the start of a stream, data or not. A stream that waits
/// 15 s for the model gets one: the model is held by a stream nobody reads.
/// The client skips it and reads the answer once the model is free.
#[test]
fn llama_cpp_python_pings_every_15_s_of_a_stream() {
    if !installed("llama_cpp_python_pings_every_15_s_of_a_stream") {
        return;
    }
    let server = Server::start(
        Kind::Python,
        Model::Tiny,
        &["--interrupt_requests", "False", "--n_ctx", "32768"],
    );
    let holder = hold_the_model(&server);
    let tap = Tap::start(server.port);
    let base = tap.base();
    let sent = Instant::now();
    let waiting = std::thread::spawn(move || {
        let start = Instant::now();
        let answer = client(&base, CHAT_MODEL, true, Duration::from_secs(90)).translate(
            &spanish(),
            &History::new(0),
            UNIT,
        );
        (answer, start.elapsed())
    });
    let pinged = common::process::wait_until(Duration::from_secs(40), || {
        sse_lines(&tap).iter().any(|l| l.starts_with(": ping"))
    });
    let waited_for_ping = sent.elapsed();
    drop(holder);
    let (answer, took) = waiting.join().unwrap();
    let lines = sse_lines(&tap);
    eprintln!("pinged after about {waited_for_ping:?}; answered in {took:?}: {lines:#?}");
    assert!(pinged, "no ping within 40 s: {lines:#?}");
    assert!(
        waited_for_ping >= Duration::from_secs(15),
        "{waited_for_ping:?}"
    );
    // While it waited: the ping came before any data.
    let ping = lines.iter().position(|l| l.starts_with(": ping")).unwrap();
    assert!(
        !lines[..ping].iter().any(|l| l.starts_with("data: ")),
        "{lines:#?}"
    );
    assert_eq!(answer.unwrap().text, "hola mundo");
}

/// A stream whose end-of-answer token is banned, so that it would run to
/// the context's end ("hola mundo" over and over), and whose answer nobody
/// reads: the server's writes block, and it holds the model until the
/// connection closes.
fn hold_the_model(server: &Server) -> std::net::TcpStream {
    let body = serde_json::json!({
        "model": CHAT_MODEL,
        "messages": [{"role": "user", "content": "hold"}],
        "stream": true,
        "max_tokens": 30000,
        "logit_bias": {"2": -100},
    });
    let tcp = post(server.port, "/v1/chat/completions", &body.to_string());
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    // Its first chunk: the model is taken (the headers come before).
    let mut seen = Vec::new();
    let mut buffer = [0u8; 512];
    while !String::from_utf8_lossy(&seen).contains("data: ") {
        let n = (&tcp).read(&mut buffer).unwrap();
        assert!(n > 0, "the held stream ended");
        seen.extend_from_slice(&buffer[..n]);
    }
    tcp
}

/// Two streams side by side, the second sent when the first's text
/// begins; what each gives.
fn side_by_side(base: &str) -> (Result<Translation, Error>, Result<Translation, Error>) {
    let (began, first_text) = mpsc::channel();
    let first = {
        let base = base.to_owned();
        std::thread::spawn(move || {
            let client = client(&base, CHAT_MODEL, true, Duration::from_secs(60));
            let from = client.servers().order()[0];
            client
                .translate_from(from, &spanish(), &History::new(0), UNIT, |_| {
                    let _ = began.send(());
                })
                .result
        })
    };
    first_text
        .recv_timeout(Duration::from_secs(60))
        .expect("the first stream's text began");
    let second = client(base, CHAT_MODEL, true, Duration::from_secs(60)).translate(
        &spanish(),
        &History::new(0),
        UNIT,
    );
    (first.join().unwrap(), second)
}

/// llama-cpp-python, as started by default (`interrupt_requests` on), ends
/// a stream with a bare `data: [DONE]` when a newer request comes: the
/// client sends units side by side, and each cut answer is an error, never
/// its partial text. Started with `--interrupt_requests False`, it answers
/// both whole, one after the other.
#[test]
fn llama_cpp_python_cuts_a_stream_for_a_newer_request_unless_told_not_to() {
    if !installed("llama_cpp_python_cuts_a_stream_for_a_newer_request_unless_told_not_to") {
        return;
    }
    let server = Server::start(Kind::Python, Model::Long, &[]);
    let tap = Tap::start(server.port);
    let (first, second) = side_by_side(&tap.base());
    let error = first.unwrap_err();
    assert!(matches!(error, Error::Cut { .. }), "{error:?}");
    assert!(
        error.to_string().contains("--interrupt_requests False"),
        "{error}"
    );
    assert_eq!(second.unwrap().text, long_answer());
    // On the wire: the first stream stopped mid-answer, [DONE] and no
    // finish_reason.
    let lines = sse_lines(&tap);
    let said = deltas(&lines).concat();
    eprintln!("cut after {} of 502 words", said.split_whitespace().count());
    assert!(long_answer().starts_with(said.trim()), "{said}");
    assert!(said.trim().len() < long_answer().len(), "{said}");
    assert!(finish_reasons(&lines).is_empty(), "{lines:#?}");
    assert!(lines.contains(&"data: [DONE]".to_owned()), "{lines:#?}");
    drop(server);

    let server = Server::start(
        Kind::Python,
        Model::Long,
        &["--interrupt_requests", "False"],
    );
    let (first, second) = side_by_side(&server.base());
    assert_eq!(first.unwrap().text, long_answer());
    assert_eq!(second.unwrap().text, long_answer());
}

#[cfg(feature = "local")]
mod file {
    //! A file through the transcriber's translate pad, against each
    //! server: every unit translated, at its words' times.

    use super::*;
    use common::translating::{counts, run_with, units};

    #[test]
    fn a_file_through_either_server_gets_every_unit_translated_at_its_words_times() {
        if !installed("a_file_through_either_server_gets_every_unit_translated_at_its_words_times")
        {
            return;
        }
        for kind in [Kind::LlamaServer, Kind::Python] {
            let server = Server::start(kind, Model::Tiny, &[]);
            let run = run_with(
                &server.base(),
                &format!("translate-model={CHAT_MODEL}"),
                "es",
                false,
            );
            let expected: Vec<(u64, u64, String)> = units(&run.words)
                .into_iter()
                .map(|(start, end, _)| (start, end - start, "hola mundo".to_owned()))
                .collect();
            assert_eq!(expected.len(), 3, "{:?}", run.words);
            assert_eq!(run.translated, expected, "{kind:?}: {}", server.log_text());
            let counts = counts(&run.stats);
            assert_eq!(counts.get::<u64>("translated").unwrap(), 3, "{counts}");
            assert_eq!(counts.get::<u64>("failures").unwrap(), 0, "{counts}");
        }
    }
}
