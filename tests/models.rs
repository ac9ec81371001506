// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Models by name against a small Hub lookalike on 127.0.0.1: the
//! file-resolve and model-info endpoints with the headers huggingface_hub
//! reads (ETag, X-Linked-Etag, X-Linked-Size, X-Repo-Commit) and Range
//! support, serving the fixture GGUF. No machine here reaches the real Hub.

#![cfg(all(feature = "local", feature = "download"))]

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gstvoxtralrt::models::hub::{FetchError, Hub, HubConfig, Progress};
use gstvoxtralrt::models::{FileChoice, HubFile, ModelRef, PRESET_REPO};
use sha2::{Digest, Sha256};

const REPO: &str = "testowner/voxtral-test-gguf";
const FILE: &str = "voxtral-test-Q4_K_M.gguf";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

/// How the lookalike misbehaves.
#[derive(Default, Clone)]
struct Faults {
    /// Close the connection after this many body bytes of the first
    /// transfer (a cut download).
    cut_after: Option<usize>,
    /// Serve other bytes than the ETag names.
    corrupt: bool,
    /// 401 for everything without this bearer token.
    token: Option<String>,
    /// Accept and never answer.
    silent: bool,
    /// Sleep this long per 64 KiB sent (a slow transfer).
    slow: Option<Duration>,
    /// Announce a file far larger than any disk.
    huge: bool,
}

struct Lookalike {
    endpoint: String,
    /// Every request line seen.
    requests: Arc<Mutex<Vec<String>>>,
    content: Arc<Vec<u8>>,
}

impl Lookalike {
    fn start(faults: Faults) -> Lookalike {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let content = Arc::new(std::fs::read(common::tiny_model()).unwrap());
        let transfers = Arc::new(AtomicUsize::new(0));
        let (seen, served) = (requests.clone(), content.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, served, faults, transfers) = (
                    seen.clone(),
                    served.clone(),
                    faults.clone(),
                    transfers.clone(),
                );
                std::thread::spawn(move || serve(stream, &seen, &served, &faults, &transfers));
            }
        });
        Lookalike {
            endpoint,
            requests,
            content,
        }
    }

    fn requests(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    fn sha256(&self) -> String {
        hex(&Sha256::digest(&*self.content))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn serve(
    mut stream: TcpStream,
    seen: &Mutex<Vec<String>>,
    content: &[u8],
    faults: &Faults,
    transfers: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_owned());
        }
    }
    seen.lock().unwrap().push(line.trim().to_owned());
    if faults.silent {
        std::thread::sleep(Duration::from_secs(120));
        return;
    }
    if let Some(token) = &faults.token {
        if headers.get("authorization") != Some(&format!("Bearer {token}")) {
            let _ = write!(
                stream,
                "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n"
            );
            return;
        }
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let not_found = |stream: &mut TcpStream, code: &str| {
        let _ = write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nX-Error-Code: {code}\r\nContent-Length: 0\r\n\r\n"
        );
    };
    let listing = format!("/api/models/{REPO}");
    if path == listing || path.starts_with(&format!("{listing}/revision/")) {
        let body = format!(
            r#"{{"sha":"{COMMIT}","siblings":[{{"rfilename":"README.md"}},{{"rfilename":"{FILE}"}},{{"rfilename":"voxtral-test-Q8_0.gguf"}}]}}"#
        );
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        return;
    }
    let Some(rest) = path.strip_prefix(&format!("/{REPO}/resolve/")) else {
        return not_found(&mut stream, "RepoNotFound");
    };
    let Some((_revision, file)) = rest.split_once('/') else {
        return not_found(&mut stream, "EntryNotFound");
    };
    if file != FILE && file != "voxtral-test-Q8_0.gguf" {
        return not_found(&mut stream, "EntryNotFound");
    }
    let mut body = content.to_vec();
    if faults.corrupt {
        body[1000] ^= 0xff;
    }
    let total = body.len();
    let (start, end) = match headers.get("range").and_then(|r| r.strip_prefix("bytes=")) {
        Some(r) => {
            let (a, b) = r.split_once('-').unwrap();
            let a: usize = a.parse().unwrap();
            let b = if b.is_empty() {
                total - 1
            } else {
                b.parse().unwrap()
            };
            (a, b.min(total - 1))
        }
        None => (0, total - 1),
    };
    let etag = hex(&Sha256::digest(content));
    let announced = if faults.huge {
        1u64 << 50
    } else {
        total as u64
    };
    let _ = write!(
        stream,
        "HTTP/1.1 206 Partial Content\r\nETag: \"{etag}\"\r\nX-Linked-Etag: \"{etag}\"\r\n\
         X-Linked-Size: {announced}\r\nX-Repo-Commit: {COMMIT}\r\nAccept-Ranges: bytes\r\n\
         Content-Range: bytes {start}-{end}/{total}\r\nContent-Length: {}\r\n\r\n",
        end + 1 - start
    );
    let slice = &body[start..=end];
    let whole_transfer = end + 1 - start > 1;
    let cut = if whole_transfer && transfers.fetch_add(1, Ordering::SeqCst) == 0 {
        faults.cut_after
    } else {
        None
    };
    for (i, chunk) in slice.chunks(64 * 1024).enumerate() {
        if let Some(cut) = cut {
            if (i + 1) * 64 * 1024 > cut {
                let _ = stream.write_all(&chunk[..cut - i * 64 * 1024]);
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
        if stream.write_all(chunk).is_err() {
            return;
        }
        if let Some(pause) = faults.slow {
            std::thread::sleep(pause);
        }
    }
}

fn config(hub: &Lookalike, cache: &Path) -> HubConfig {
    HubConfig {
        cache_dir: cache.to_owned(),
        endpoint: hub.endpoint.clone(),
        token: None,
        offline: false,
    }
}

fn file(name: &str) -> HubFile {
    HubFile {
        repo: REPO.to_owned(),
        revision: None,
        file: FileChoice::Name(name.to_owned()),
    }
}

fn fetch(config: HubConfig, what: &HubFile) -> (Result<PathBuf, FetchError>, Vec<Progress>) {
    let mut seen = Vec::new();
    let result = Hub::new(config).fetch(what, &mut |p| seen.push(p), &AtomicBool::new(false));
    (result, seen)
}

fn blobs(cache: &Path) -> PathBuf {
    cache
        .join("models--testowner--voxtral-test-gguf")
        .join("blobs")
}

#[test]
fn a_first_download_reports_progress_and_lands_in_the_hugging_face_layout() {
    let hub = Lookalike::start(Faults::default());
    let cache = common::scratch_dir("hub-first");
    let (path, progress) = fetch(config(&hub, &cache), &file(FILE));
    let path = path.unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), *hub.content);
    assert_eq!(
        path,
        cache.join(format!(
            "models--testowner--voxtral-test-gguf/snapshots/{COMMIT}/{FILE}"
        ))
    );
    assert!(std::fs::symlink_metadata(&path).unwrap().is_symlink());
    assert!(blobs(&cache).join(hub.sha256()).is_file());
    let main = cache.join("models--testowner--voxtral-test-gguf/refs/main");
    assert_eq!(std::fs::read_to_string(main).unwrap(), COMMIT);
    let last = progress.last().expect("progress was reported");
    assert_eq!(last.done, hub.content.len() as u64);
    assert_eq!(last.total, hub.content.len() as u64);
    assert!(last.bytes_per_second > 0.0);
    // hf-hub, the Hub's own client, finds it in the same cache.
    let cached = hf_hub::Cache::new(cache.clone())
        .model(REPO.to_owned())
        .get(FILE)
        .expect("hf-hub sees the file");
    assert_eq!(std::fs::read(cached).unwrap(), *hub.content);
}

#[test]
fn a_cached_file_is_used_without_any_request() {
    let hub = Lookalike::start(Faults::default());
    let cache = common::scratch_dir("hub-cached");
    fetch(config(&hub, &cache), &file(FILE)).0.unwrap();
    let before = hub.requests();
    let (path, progress) = fetch(config(&hub, &cache), &file(FILE));
    path.unwrap();
    assert_eq!(hub.requests(), before, "the server saw a request");
    assert!(progress.is_empty());
    // By quantisation tag too, from the cached snapshot.
    let by_tag = HubFile {
        file: FileChoice::Quant("q4_k_m".into()),
        ..file(FILE)
    };
    fetch(config(&hub, &cache), &by_tag).0.unwrap();
    assert_eq!(hub.requests(), before);
}

#[test]
fn a_cut_transfer_is_resumed_from_where_it_stopped() {
    let hub = Lookalike::start(Faults {
        cut_after: Some(200 * 1024),
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-cut");
    let (path, _) = fetch(config(&hub, &cache), &file(FILE));
    assert_eq!(std::fs::read(path.unwrap()).unwrap(), *hub.content);
    let ranges: Vec<String> = hub.requests.lock().unwrap().clone();
    assert!(ranges.len() >= 3, "{ranges:?}");
}

#[test]
fn a_wrong_checksum_deletes_the_download_and_names_both_hashes() {
    let hub = Lookalike::start(Faults {
        corrupt: true,
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-corrupt");
    let err = fetch(config(&hub, &cache), &file(FILE)).0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, FetchError::Checksum { .. }), "{text}");
    assert!(text.contains(&hub.sha256()), "{text}");
    let leftovers: Vec<_> = std::fs::read_dir(blobs(&cache))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| !n.to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_missing_repository_or_file_is_named() {
    let hub = Lookalike::start(Faults::default());
    let cache = common::scratch_dir("hub-404");
    let err = fetch(config(&hub, &cache), &file("nope.gguf"))
        .0
        .unwrap_err();
    assert!(err.to_string().starts_with("the file not found"), "{err}");
    let other = HubFile {
        repo: "someone/else".into(),
        ..file(FILE)
    };
    let err = fetch(config(&hub, &cache), &other).0.unwrap_err();
    assert!(
        err.to_string().starts_with("the repository not found"),
        "{err}"
    );
}

#[test]
fn a_refused_request_mentions_hf_token_and_a_token_opens_it() {
    let hub = Lookalike::start(Faults {
        token: Some("secret".into()),
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-401");
    let err = fetch(config(&hub, &cache), &file(FILE)).0.unwrap_err();
    assert!(err.to_string().contains("HF_TOKEN"), "{err}");
    let with_token = HubConfig {
        token: Some("secret".into()),
        ..config(&hub, &cache)
    };
    fetch(with_token, &file(FILE)).0.unwrap();
}

#[test]
fn a_server_that_never_answers_is_an_error_within_30_s() {
    let hub = Lookalike::start(Faults {
        silent: true,
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-silent");
    let started = Instant::now();
    let err = fetch(config(&hub, &cache), &file(FILE)).0.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(30));
    let text = err.to_string();
    assert!(text.contains(&hub.endpoint), "{text}");
    assert!(text.contains(&cache.display().to_string()), "{text}");
    assert!(text.contains("model-path"), "{text}");
}

#[test]
fn offline_makes_no_request_and_uses_the_cache() {
    let hub = Lookalike::start(Faults::default());
    let cache = common::scratch_dir("hub-offline");
    let offline = HubConfig {
        offline: true,
        ..config(&hub, &cache)
    };
    let err = fetch(offline.clone(), &file(FILE)).0.unwrap_err();
    assert!(err.to_string().contains("HF_HUB_OFFLINE"), "{err}");
    assert_eq!(hub.requests(), 0);
    fetch(config(&hub, &cache), &file(FILE)).0.unwrap();
    let before = hub.requests();
    fetch(offline, &file(FILE)).0.unwrap();
    assert_eq!(hub.requests(), before);
}

#[test]
fn two_fetches_of_one_file_download_it_once_and_both_get_it() {
    let hub = Lookalike::start(Faults {
        slow: Some(Duration::from_millis(20)),
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-two");
    let results: Vec<PathBuf> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| fetch(config(&hub, &cache), &file(FILE)).0.unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results[0], results[1]);
    let transfers = hub
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("/resolve/"))
        .count();
    // Each asks for the metadata once; one of them transfers the file.
    assert_eq!(transfers, 3, "{:?}", hub.requests.lock().unwrap());
}

#[test]
fn a_cancel_stops_within_a_second_and_the_next_fetch_resumes() {
    let hub = Lookalike::start(Faults {
        slow: Some(Duration::from_millis(150)),
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-cancel");
    let cancel = Arc::new(AtomicBool::new(false));
    let hub_client = Hub::new(config(&hub, &cache));
    let c = cancel.clone();
    let worker = std::thread::spawn(move || hub_client.fetch(&file(FILE), &mut |_| {}, &c));
    std::thread::sleep(Duration::from_millis(700));
    let asked = Instant::now();
    cancel.store(true, Ordering::Relaxed);
    let result = worker.join().unwrap();
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    assert!(matches!(result, Err(FetchError::Cancelled)), "{result:?}");
    let part = blobs(&cache).join(format!("{}.part", hub.sha256()));
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0 && kept < hub.content.len() as u64, "{kept}");
    let (path, progress) = fetch(config(&hub, &cache), &file(FILE));
    assert_eq!(std::fs::read(path.unwrap()).unwrap(), *hub.content);
    let last = hub.requests.lock().unwrap().last().cloned().unwrap();
    assert!(last.contains("/resolve/"), "{last}");
    // The resumed transfer started where the first stopped.
    assert!(progress.iter().all(|p| p.done >= kept), "{progress:?}");
}

#[test]
fn a_full_disk_names_the_cache_and_the_space_needed() {
    // A file of a petabyte, announced: more than this disk has.
    let hub = Lookalike::start(Faults {
        huge: true,
        ..Faults::default()
    });
    let cache = common::scratch_dir("hub-full");
    let err = fetch(config(&hub, &cache), &file(FILE)).0.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, FetchError::DiskFull { .. }), "{text}");
    assert!(
        text.contains(&blobs(&cache).display().to_string()),
        "{text}"
    );
    assert!(!blobs(&cache).join(hub.sha256()).exists());
}

#[test]
fn a_quantisation_tag_resolves_through_the_repository_listing() {
    let hub = Lookalike::start(Faults::default());
    let cache = common::scratch_dir("hub-tag");
    let by_tag = HubFile {
        file: FileChoice::Quant("Q4_K_M".into()),
        ..file(FILE)
    };
    let (path, _) = fetch(config(&hub, &cache), &by_tag);
    assert!(path.unwrap().ends_with(FILE));
    assert!(hub.requests.lock().unwrap()[0].contains(&format!("/api/models/{REPO}")));
    let missing = HubFile {
        file: FileChoice::Quant("Q6_K".into()),
        ..file(FILE)
    };
    let err = fetch(config(&hub, &cache), &missing).0.unwrap_err();
    assert!(
        err.to_string().contains("no GGUF file with \"Q6_K\""),
        "{err}"
    );
    // The presets are tags on the published repository.
    let ModelRef::Hub(preset) = ModelRef::from_model_name("q8_0").unwrap() else {
        panic!()
    };
    assert_eq!(preset.repo, PRESET_REPO);
    assert_eq!(preset.file, FileChoice::Quant("Q8_0".into()));
}

#[test]
fn a_reference_that_leaves_the_repository_is_refused() {
    for bad in [
        "hf://a/b/../../x",
        "hf://a/b/../../../etc/passwd",
        "hf://../../x/y",
    ] {
        assert!(ModelRef::from_model_path(bad).is_err(), "{bad}");
        assert!(ModelRef::from_model_name(bad).is_err(), "{bad}");
    }
}

/// Plays `model-path=REFERENCE` through the transcriber; returns the
/// Progress messages' texts, the words, and the ERROR text if any.
fn transcribe_with(reference: &str) -> (Vec<String>, usize, Option<String>) {
    transcribe_with_properties(&format!("model-path={reference}"))
}

fn transcribe_with_properties(properties: &str) -> (Vec<String>, usize, Option<String>) {
    use gst::prelude::*;
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "audiotestsrc num-buffers=40 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber {properties} threads=1 ! fakesink name=out signal-handoffs=true"
    ))
    .unwrap()
    .downcast::<gst::Pipeline>()
    .unwrap();
    let words = common::handoffs(&pipeline, "out");
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    let mut progress = Vec::new();
    let mut error = None;
    while let Some(msg) = bus.timed_pop(gst::ClockTime::from_seconds(60)) {
        match msg.view() {
            gst::MessageView::Progress(p) => {
                let (_, code, text) = p.get();
                if code == "download-model" {
                    progress.push(text.to_string());
                }
            }
            gst::MessageView::Error(e) => {
                error = Some(e.error().to_string());
                break;
            }
            gst::MessageView::Eos(_) => break,
            _ => {}
        }
    }
    pipeline.set_state(gst::State::Null).unwrap();
    let n = words.lock().unwrap().len();
    (progress, n, error)
}

/// The element reads the HF_* variables, which are the whole process's:
/// the tests that set them take turns.
static HF_ENV: Mutex<()> = Mutex::new(());

/// A lookalike with `faults` that the element's HF_* variables point at,
/// a fresh HF_HOME, and the turn to use them (held while the guard lives).
fn element_hub(
    faults: Faults,
    name: &str,
) -> (std::sync::MutexGuard<'static, ()>, Lookalike, PathBuf) {
    let turn = HF_ENV.lock().unwrap_or_else(|e| e.into_inner());
    let hub = Lookalike::start(faults);
    let home = common::scratch_dir(name);
    std::env::set_var("HF_HOME", &home);
    std::env::set_var("HF_ENDPOINT", &hub.endpoint);
    std::env::remove_var("HF_HUB_OFFLINE");
    (turn, hub, home)
}

#[test]
fn the_transcriber_downloads_an_hf_model_path_with_progress_then_uses_the_cache() {
    let (_turn, hub, home) = element_hub(Faults::default(), "hub-element");
    let reference = format!("hf://{REPO}/{FILE}");
    let (progress, words, error) = transcribe_with(&reference);
    assert_eq!(error, None);
    assert!(words > 5, "{words} words");
    assert!(
        progress.first().unwrap().starts_with("Downloading hf://"),
        "{progress:?}"
    );
    assert!(
        progress.iter().any(|p| p.contains(" MB at ")),
        "{progress:?}"
    );
    assert!(
        progress.last().unwrap().starts_with("Downloaded"),
        "{progress:?}"
    );
    assert!(home
        .join("hub/models--testowner--voxtral-test-gguf")
        .is_dir());

    // Offline: the cached file, and no request at all.
    std::env::set_var("HF_HUB_OFFLINE", "1");
    let before = hub.requests();
    let (progress, words, error) = transcribe_with(&reference);
    assert_eq!(error, None);
    assert!(words > 5 && progress.is_empty());
    assert_eq!(hub.requests(), before);
    // Offline and not cached: an ERROR that says what to do.
    let (_, _, error) = transcribe_with(&format!("hf://{REPO}/voxtral-test-Q8_0.gguf"));
    let error = error.expect("an ERROR");
    assert!(
        error.contains("HF_HUB_OFFLINE") && error.contains("model-path"),
        "{error}"
    );
    assert_eq!(hub.requests(), before);
    std::env::remove_var("HF_HUB_OFFLINE");
    // The model property names it too (model-path, when set, wins).
    let (_, words, error) = transcribe_with_properties(&format!("model={reference}"));
    assert_eq!(error, None);
    assert!(words > 5);
    let (_, _, error) = transcribe_with_properties(&format!(
        "model={reference} model-path=/nonexistent/model.gguf"
    ));
    assert!(error.expect("an ERROR").contains("/nonexistent/model.gguf"));
    // A reference that leaves the repository never reaches the network.
    let (_, _, error) = transcribe_with("hf://a/b/../../x");
    assert!(error.expect("an ERROR").contains("hf://OWNER/REPO"));
    assert_eq!(hub.requests(), before);
}

#[test]
fn voxtralrt_fetch_prints_the_cached_path_and_says_what_went_wrong() {
    let hub = Lookalike::start(Faults::default());
    let home = common::scratch_dir("hub-fetch-bin");
    let run = |model: &str, offline: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_voxtralrt-fetch"));
        cmd.arg(model)
            .env("HF_HOME", &home)
            .env("HF_ENDPOINT", &hub.endpoint)
            .env_remove("HF_TOKEN");
        if offline {
            cmd.env("HF_HUB_OFFLINE", "1");
        } else {
            cmd.env_remove("HF_HUB_OFFLINE");
        }
        cmd.output().unwrap()
    };
    let by_tag = format!("hf://{REPO}:Q4_K_M");
    let out = run(&by_tag, false);
    assert!(out.status.success(), "{}", common::output_text(&out));
    let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(std::fs::read(&path).unwrap(), *hub.content);
    let out = run(&by_tag, true);
    assert!(out.status.success(), "{}", common::output_text(&out));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        path.to_str().unwrap()
    );
    let out = run("q3_nonsense", false);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::output_text(&out).contains("q4_k_m"));
}

#[test]
fn going_to_null_stops_a_download_within_a_second_and_the_next_start_resumes_it() {
    use gst::prelude::*;
    let slow = Faults {
        slow: Some(Duration::from_millis(300)),
        ..Faults::default()
    };
    let (_turn, hub, home) = element_hub(slow, "hub-element-cancel");
    common::init_plugin();
    let line = format!(
        "audiotestsrc num-buffers=40 samplesperbuffer=1600 ! audio/x-raw,rate=16000,channels=1 ! \
         voxtralrttranscriber model-path=hf://{REPO}/{FILE} threads=1 ! fakesink"
    );
    let pipeline = gst::parse::launch(&line).unwrap();
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    // Wait until bytes are coming.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let msg = bus.timed_pop(gst::ClockTime::from_mseconds(100));
        if let Some(gst::MessageView::Progress(p)) = msg.as_ref().map(|m| m.view()) {
            if p.get().2.contains(" MB at ") {
                break;
            }
        }
        assert!(Instant::now() < deadline, "no download progress");
    }
    let asked = Instant::now();
    pipeline.set_state(gst::State::Null).unwrap();
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(1), "NULL took {took:?}");
    // The transfer stops within a second and keeps what came.
    std::thread::sleep(Duration::from_millis(1200));
    let part = blobs(&home.join("hub")).join(format!("{}.part", hub.sha256()));
    let kept = std::fs::metadata(&part)
        .expect("the partial file is kept")
        .len();
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(
        std::fs::metadata(&part).unwrap().len(),
        kept,
        "still downloading"
    );
    assert!(kept > 0 && kept < hub.content.len() as u64, "{kept}");
    // Again: the download resumes from there, and the words come.
    let ranges_before = hub.requests();
    let _ = pipeline.set_state(gst::State::Playing);
    let msg = bus
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(60),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("EOS");
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    pipeline.set_state(gst::State::Null).unwrap();
    let requests = hub.requests.lock().unwrap().clone();
    assert!(requests.len() > ranges_before, "{requests:?}");
    assert!(blobs(&home.join("hub")).join(hub.sha256()).is_file());
}

/// `model` takes any name when it is set (with engine=vllm it names a
/// served model, and engine may come after it); with engine=local a name
/// that is neither a preset nor a reference is an ERROR when the element
/// starts, naming it and the way to a served model.
#[test]
fn an_unknown_local_model_name_is_an_error_at_ready_naming_it() {
    use gst::prelude::*;
    common::init_plugin();
    for factory in ["voxtralrttranscriber", "voxtralrtsink"] {
        let element = gst::ElementFactory::make(factory).build().unwrap();
        element.set_property("model", "q3_nonsense");
        assert_eq!(
            element.property::<Option<String>>("model").as_deref(),
            Some("q3_nonsense")
        );
        let pipeline = gst::Pipeline::new();
        pipeline.add(&element).unwrap();
        assert!(pipeline.set_state(gst::State::Ready).is_err(), "{factory}");
        let bus = pipeline.bus().unwrap();
        let error = bus
            .pop_filtered(&[gst::MessageType::Error])
            .expect("an ERROR");
        pipeline.set_state(gst::State::Null).unwrap();
        let gst::MessageView::Error(e) = error.view() else {
            unreachable!()
        };
        let text = e.error().to_string();
        assert!(
            text.contains("unknown model \"q3_nonsense\"")
                && text.contains("q8_0")
                && text.contains("set engine=vllm"),
            "{factory}: {text}"
        );
    }
}

#[test]
fn two_elements_on_one_hub_file_download_it_once_and_both_transcribe() {
    let slow = Faults {
        slow: Some(Duration::from_millis(50)),
        ..Faults::default()
    };
    let (_turn, hub, _home) = element_hub(slow, "hub-two-elements");
    let reference = format!("hf://{REPO}/{FILE}");
    let results: Vec<(Vec<String>, usize, Option<String>)> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| s.spawn(|| transcribe_with(&reference)))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for (_, words, error) in &results {
        assert_eq!(error, &None);
        assert!(*words > 5, "{words} words");
    }
    let transfers = hub
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("/resolve/"))
        .count();
    // Each asks for the metadata once; one of them transfers the file.
    assert_eq!(transfers, 3, "{:?}", hub.requests.lock().unwrap());
}
