// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! engine=vllm with several servers in `url`: a stream moves to the next
//! server when its own dies, refuses, errs or stalls, with every word at its
//! frame; a bad list is an ERROR before anything starts. Against the
//! protocol-faithful double (`common::vllm_double`); tests/vllm_server.rs
//! does the same with real vLLM servers and nginx in front of them.

mod common;

use std::time::Duration;

use common::remote::{transcribe, transcribe_paced, Run};
use common::vllm_double::{Double, Faults, SERVED_MODEL};

fn tone() -> (Vec<f32>, Vec<usize>) {
    let frames = common::tone_frames();
    (common::tone_audio(66, &frames), frames)
}

fn double(faults: Faults) -> Double {
    Double::start(common::fixture("voxtral-rt-tone.gguf"), faults)
}

/// `url` listing `urls`, quoted for gst-launch syntax.
fn list(urls: &[String]) -> String {
    format!("\"{}\"", urls.join(","))
}

/// Through the servers of `urls`, each stream starting at the first.
fn in_order(urls: &[String], audio: &[f32], extra: &str) -> Run {
    transcribe(
        &list(urls),
        SERVED_MODEL,
        audio,
        &format!("server-choice=in-order {extra}"),
    )
}

fn assert_every_word_at_its_frame(run: &Run, frames: &[usize]) {
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    let times: Vec<u64> = run.words.iter().map(|w| w.0).collect();
    let truth: Vec<u64> = frames.iter().map(|&f| common::truth(f)).collect();
    assert_eq!(times, truth, "{:?}", run.words);
    assert!(
        run.words.iter().all(|w| w.1.trim() == "x"),
        "{:?}",
        run.words
    );
}

/// `stats`' `servers`: (url, connections, failures) of each server tried.
fn server_counts(run: &Run) -> Vec<(String, u64, u64)> {
    let stats = run.stats.as_ref().unwrap();
    let servers = stats.get::<gst::Array>("servers").unwrap();
    servers
        .iter()
        .map(|v| {
            let s = v.get::<gst::Structure>().unwrap();
            (
                s.get::<String>("url").unwrap(),
                s.get::<u64>("connections").unwrap(),
                s.get::<u64>("failures").unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_server_that_dies_mid_stream_hands_the_stream_to_the_next_with_every_word_at_its_frame() {
    let (audio, frames) = tone();
    let dying = double(Faults {
        die_after: Some(25),
        ..Default::default()
    });
    let spare = double(Faults::default());
    let run = in_order(&[dying.url(), spare.url()], &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected.len(), 1, "{:?}", run.messages);
    assert_eq!(reconnected[0].get::<String>("left").unwrap(), dying.url());
    assert_eq!(reconnected[0].get::<String>("joined").unwrap(), spare.url());
    assert_eq!(run.stat("reconnects"), 1);
    // Nothing lost, nothing twice: the spare got the audio from the first
    // frame the dying one had not answered.
    let (died, took_over) = (dying.seen.lock().unwrap(), spare.seen.lock().unwrap());
    assert_eq!(died.deltas, 25);
    assert_eq!(
        took_over.samples,
        audio.len() as u64 - 25 * 1280,
        "the spare's audio"
    );
    assert_eq!(
        server_counts(&run),
        [(dying.url(), 1, 1), (spare.url(), 1, 0)]
    );
    assert_eq!(
        run.stats.as_ref().unwrap().get::<String>("server").unwrap(),
        spare.url()
    );
}

#[test]
fn a_refused_first_server_at_the_start_is_a_warning_and_the_next_takes_the_stream() {
    let (audio, frames) = tone();
    let refusing = Double::refusing_url();
    let server = double(Faults::default());
    let run = in_order(&[refusing.clone(), server.url()], &audio, "");
    assert_every_word_at_its_frame(&run, &frames);
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
    assert!(run.warnings[0].contains(&refusing), "{}", run.warnings[0]);
    assert_eq!(run.stat("reconnects"), 0, "a start is no reconnection");
    assert_eq!(
        server_counts(&run),
        [(refusing, 0, 1), (server.url(), 1, 0)]
    );
}

#[test]
fn a_stalled_server_is_left_after_server_timeout_for_the_next() {
    let (audio, frames) = tone();
    let stalling = double(Faults {
        stall_after: Some(20),
        ..Default::default()
    });
    let spare = double(Faults::default());
    let run = in_order(
        &[stalling.url(), spare.url()],
        &audio,
        "server-timeout=1000",
    );
    assert_every_word_at_its_frame(&run, &frames);
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected.len(), 1, "{:?}", run.messages);
    assert_eq!(reconnected[0].get::<String>("joined").unwrap(), spare.url());
    // Detected after server-timeout; the spare answers soon after.
    let outage = reconnected[0].get::<u64>("outage").unwrap();
    assert!(outage < 1_500_000_000, "outage {outage} ns");
    assert!(run.took < Duration::from_secs(10), "{:?}", run.took);
}

#[test]
fn a_server_that_refuses_the_key_is_a_warning_naming_it_and_all_refusing_is_an_error() {
    let (audio, frames) = tone();
    let other_key = double(Faults {
        api_key: Some("another-key".into()),
        ..Default::default()
    });
    let ours = double(Faults {
        api_key: Some("our-key".into()),
        ..Default::default()
    });
    let run = in_order(&[other_key.url(), ours.url()], &audio, "api-key=our-key");
    assert_every_word_at_its_frame(&run, &frames);
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
    assert!(
        run.warnings[0].contains(&other_key.url()) && run.warnings[0].contains("401"),
        "{}",
        run.warnings[0]
    );
    // The key went to both servers.
    assert_eq!(other_key.seen.lock().unwrap().authorizations.len(), 1);

    let run = in_order(
        &[other_key.url(), ours.url()],
        &audio,
        "api-key=a-wrong-key",
    );
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    let e = &run.errors[0];
    assert!(
        e.contains("every vLLM server") && e.contains("api-key"),
        "{e}"
    );
    assert!(
        e.contains(&other_key.url()) && e.contains(&ours.url()),
        "{e}"
    );
    assert!(!e.contains("a-wrong-key"), "{e}");
}

#[test]
fn a_list_of_unreachable_servers_is_an_error_naming_each_within_15_s() {
    let (audio, _) = tone();
    let urls = [Double::refusing_url(), Double::refusing_url()];
    let run = in_order(&urls, &audio, "");
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    for url in &urls {
        assert!(run.errors[0].contains(url), "{}", run.errors[0]);
    }
    assert!(run.took < Duration::from_secs(15), "{:?}", run.took);
}

#[test]
fn a_bad_list_is_an_error_naming_the_entry_before_anything_is_sent() {
    let server = double(Faults::default());
    let (audio, _) = tone();
    let good = server.url();
    for (bad, says) in [
        (
            format!("{good},,{}", Double::refusing_url()),
            "entry 2 of the list is empty",
        ),
        (format!("{good},"), "entry 2 of the list is empty"),
        (format!("{good},gpu2:8000"), "'gpu2:8000'"),
        (format!("{good},{good}"), "the same server as entry 1"),
        (
            format!("{good},wss://127.0.0.1:1/v1/realtime"),
            "mixes ws:// and wss://",
        ),
    ] {
        let run = transcribe(&format!("\"{bad}\""), SERVED_MODEL, &audio, "");
        assert_eq!(run.errors.len(), 1, "{bad}: {run:?}");
        assert!(run.errors[0].contains(says), "{bad}: {}", run.errors[0]);
    }
    assert_eq!(server.seen.lock().unwrap().connections, 0);
}

#[test]
fn streams_of_several_elements_spread_over_the_servers() {
    // The only test here that uses the process's rotation: four elements
    // one after the other start at successive servers.
    let (audio, frames) = tone();
    let servers = [double(Faults::default()), double(Faults::default())];
    let urls: Vec<String> = servers.iter().map(Double::url).collect();
    for _ in 0..4 {
        let run = transcribe(&list(&urls), SERVED_MODEL, &audio, "");
        assert_every_word_at_its_frame(&run, &frames);
    }
    for server in &servers {
        assert_eq!(server.seen.lock().unwrap().connections, 2);
    }
}

#[test]
fn the_readme_rack_line_runs_against_two_servers_one_dying() {
    let model = Some("mistralai/Voxtral-Mini-4B-Realtime-2602".to_owned());
    let dying = double(Faults {
        served_model: model.clone(),
        die_after: Some(20),
        ..Default::default()
    });
    let spare = double(Faults {
        served_model: model,
        ..Default::default()
    });
    let line = common::doc_launch_line("sample-rack.srt")
        .replace("ws://gpu1:8000/v1/realtime", &dying.url())
        .replace("ws://gpu2:8000/v1/realtime", &spare.url());
    let dir = common::readme_dir("readme-rack");
    common::run_readme_line(&line, &dir);
    assert!(dir.join("sample-rack.srt").is_file());
    // Whichever server the stream started on, the whole file was heard.
    let heard = dying.seen.lock().unwrap().samples + spare.seen.lock().unwrap().samples;
    assert!(heard > 16_000 * 5, "{heard}");
}

#[test]
fn servers_of_a_rack_closing_idle_sessions_cost_no_rest_and_no_warning() {
    let (audio, frames) = common::remote::bursts_4_s_apart();
    let idle = || {
        double(Faults {
            idle_timeout: Some(Duration::from_millis(1500)),
            ..Faults::default()
        })
    };
    let servers = [idle(), idle()];
    let urls: Vec<String> = servers.iter().map(Double::url).collect();
    let run = transcribe_paced(&list(&urls), SERVED_MODEL, &audio, "speech-only=true");
    assert!(run.warnings.is_empty(), "no WARNING: {:?}", run.warnings);
    assert_every_word_at_its_frame(&run, &frames);
    let idle_closes: u64 = servers
        .iter()
        .map(|s| s.seen.lock().unwrap().idle_closes)
        .sum();
    assert_eq!(
        idle_closes, 3,
        "both pauses' and the last idle session closed"
    );
    for (url, connections, failures) in server_counts(&run) {
        assert_eq!(
            failures, 0,
            "{url}: {connections} connections, {failures} failures"
        );
    }
    assert_eq!(run.stat("reconnects"), 0, "{:?}", run.stats);
    assert_eq!(run.stat("audio-resent"), 0, "{:?}", run.stats);
}
