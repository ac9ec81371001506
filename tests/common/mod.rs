// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Helpers shared by the integration tests.

#![allow(dead_code)]

pub mod bulletin;
pub mod cc608;
pub mod cc708;
pub mod chat_double;
pub mod chromium;
pub mod http;
pub mod llama;
pub mod nginx;
pub mod process;
pub mod readback;
pub mod readers;
pub mod recognizers;
pub mod remote;
pub mod speech;
pub mod subtitle_checks;
pub mod tone_stand_in;
pub mod translating;
pub mod vllm;
pub mod vllm_double;

use std::path::PathBuf;

/// The tiny synthetic model: real transcribe.cpp code paths, fixed text.
pub fn tiny_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/voxtral-rt-tiny.gguf")
}

/// A fixture model by file name (see tests/fixtures/README*.md).
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Samples in one 80 ms frame of the model.
pub const FRAME: usize = 1280;

/// Adds a half-scale sine of `freq` over `frames` (80 ms each) of `audio`:
/// for the tone fixtures, 1 kHz writes "x" and 2 kHz is the end token.
pub fn add_tone(audio: &mut [f32], frames: std::ops::Range<usize>, freq: f32) {
    let first = frames.start * FRAME;
    for (i, sample) in audio[first..frames.end * FRAME].iter_mut().enumerate() {
        let n = (first + i) as f32;
        *sample += 0.5 * (2.0 * std::f32::consts::PI * freq * n / 16_000.0).sin();
    }
}

/// `seconds` of a 440 Hz sine at half scale, 16 kHz mono.
pub fn sine(seconds: f32) -> Vec<f32> {
    let n = (seconds * 16_000.0) as usize;
    (0..n)
        .map(|i| 0.5 * (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 16_000.0).sin())
        .collect()
}

/// The same signal as S16LE bytes, quantised the way the converter reads it.
pub fn to_s16le(samples: &[f32]) -> Vec<u8> {
    samples
        .iter()
        .flat_map(|v| ((v * 32768.0).round().clamp(-32768.0, 32767.0) as i16).to_le_bytes())
        .collect()
}

pub fn to_f32le(samples: &[f32]) -> Vec<u8> {
    samples.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The samples of a raw F32LE file (what `sox ... -e float -b 32 -t raw`
/// writes).
pub fn read_f32le(path: &std::path::Path) -> Vec<f32> {
    std::fs::read(path)
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// A fresh scratch directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("voxtralrt-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A minimal valid GGUF file naming `arch`, with no tensors.
pub fn gguf_of_architecture(arch: &str) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    let key = "general.architecture";
    out.extend((key.len() as u64).to_le_bytes());
    out.extend(key.as_bytes());
    out.extend(8u32.to_le_bytes());
    out.extend((arch.len() as u64).to_le_bytes());
    out.extend(arch.as_bytes());
    out
}

/// Registers the plugin in this process (once).
pub fn init_plugin() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gst::init().unwrap();
        gstvoxtralrt::plugin_register_static().expect("registering the plugin");
    });
}

/// Where this test binary's cargo profile puts its outputs (`target/debug`
/// for `cargo test`, `target/release` for `cargo test --release`): builds
/// that tests start go there too, so they reuse what cargo already built
/// (transcribe.cpp's C++ above all) instead of building another profile.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(std::path::Path::parent)
        .expect("the test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// This test binary's cargo features, as arguments that build the plugin
/// with the same ones (so the client build's tests never build
/// transcribe.cpp).
pub fn feature_args() -> Vec<String> {
    let features: Vec<&str> = [
        ("local", cfg!(feature = "local")),
        ("download", cfg!(feature = "download")),
        ("vllm", cfg!(feature = "vllm")),
        ("translate", cfg!(feature = "translate")),
        ("cuda", cfg!(feature = "cuda")),
        ("vulkan", cfg!(feature = "vulkan")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    vec![
        "--no-default-features".into(),
        "--features".into(),
        features.join(","),
    ]
}

/// Runs `cargo build ARGS` in the profile of this test binary, with its
/// features, and returns that profile's output directory.
pub fn cargo_build(args: &[&str]) -> PathBuf {
    let dir = profile_dir();
    let profile = match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev".to_owned(),
        Some(name) => name.to_owned(),
        None => panic!("no profile in {}", dir.display()),
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    // cargo test gives tests the package's variables (CARGO_PKG_NAME,
    // OUT_DIR, ...), which a `cargo build` by hand does not have: build
    // scripts that watch them (ring's) rebuilt on every switch between the
    // two, a minute or more per test binary on 2 cores.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_MANIFEST_")
            || name.starts_with("CARGO_BIN_EXE_")
            || [
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref())
        {
            command.env_remove(name.as_ref());
        }
    }
    let status = command
        .arg("build")
        .args(args)
        .args(feature_args())
        .args(["--profile", &profile])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("running cargo build");
    assert!(status.success(), "cargo build {args:?} failed");
    dir
}

/// The directory holding the built plugin library, built on first use so
/// that `gst-launch-1.0` subprocesses can load it.
pub fn plugin_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        // With the examples, cargo resolves features as `cargo test` does
        // (dev-dependencies on): `--lib` alone resolves them otherwise and
        // builds transcribe.cpp's C++ a second time on a fresh machine.
        let dir = cargo_build(&["--lib", "--examples"]);
        assert!(
            dir.join("libgstvoxtralrt.so").exists(),
            "no plugin in {}",
            dir.display()
        );
        dir
    })
    .clone()
}

/// Runs a gst-launch-1.0 line (given as arguments) with the plugin on the
/// plugin path; returns its exit success and its stdout+stderr.
pub fn gst_launch(args: &[&str]) -> (bool, String) {
    let output = std::process::Command::new("gst-launch-1.0")
        .args(args)
        .env("GST_PLUGIN_PATH", plugin_dir())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running gst-launch-1.0");
    (output.status.success(), output_text(&output))
}

/// A finished process's stdout and then its stderr, as one text.
pub fn output_text(output: &std::process::Output) -> String {
    let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    text
}

/// Every buffer the fakesink `name` of `pipeline` hands off (it needs
/// `signal-handoffs=true`), as they come.
pub fn handoffs(
    pipeline: &gst::Pipeline,
    name: &str,
) -> std::sync::Arc<std::sync::Mutex<Vec<gst::Buffer>>> {
    use gst::prelude::*;
    let buffers = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = buffers.clone();
    pipeline
        .by_name(name)
        .expect("the pipeline has the sink")
        .connect("handoff", false, move |args| {
            let buffer = args[1].get::<gst::Buffer>().unwrap();
            seen.lock().unwrap().push(buffer);
            None
        });
    buffers
}

/// The text of a word buffer.
pub fn text_of(buffer: &gst::Buffer) -> String {
    String::from_utf8(buffer.map_readable().unwrap().to_vec()).unwrap()
}

/// The engine's own text for `samples`, run the way the element runs it.
#[cfg(feature = "local")]
pub fn engine_text(samples: &[f32], delay_ms: u32, decode_interval_ms: u32) -> String {
    use gstvoxtralrt::engine::{ModelSpec, Stream};
    use gstvoxtralrt::voxtral::StreamConfig;
    let mut stream = Stream::open(&ModelSpec::new(tiny_model()), 1).unwrap();
    stream
        .begin(StreamConfig {
            delay_ms,
            decode_interval_ms,
        })
        .unwrap();
    let mut text: String = stream
        .feed(samples)
        .unwrap()
        .into_iter()
        .map(|u| u.text)
        .collect();
    text.push_str(&stream.finalize().unwrap().text);
    text
}

/// The voxtralrttranscriber inside a harness made from a launch line.
pub fn transcriber_in(h: &gst_check::Harness) -> gst::Element {
    use gst::prelude::*;
    let bin = h.element().unwrap().downcast::<gst::Bin>().unwrap();
    bin.iterate_elements()
        .into_iter()
        .map(Result::unwrap)
        .find(|e| {
            e.factory()
                .is_some_and(|f| f.name() == "voxtralrttranscriber")
        })
        .expect("a transcriber in the harness")
}

/// Writes 16-bit mono 16 kHz WAV.
pub fn write_wav(path: &std::path::Path, samples: &[f32]) {
    let data = to_s16le(samples);
    let mut out = b"RIFF".to_vec();
    out.extend((36 + data.len() as u32).to_le_bytes());
    out.extend(b"WAVEfmt ");
    out.extend(16u32.to_le_bytes());
    out.extend(1u16.to_le_bytes()); // PCM
    out.extend(1u16.to_le_bytes()); // mono
    out.extend(16_000u32.to_le_bytes());
    out.extend(32_000u32.to_le_bytes());
    out.extend(2u16.to_le_bytes());
    out.extend(16u16.to_le_bytes());
    out.extend(b"data");
    out.extend((data.len() as u32).to_le_bytes());
    out.extend(data);
    std::fs::write(path, out).unwrap();
}

/// The tone timing fixture (tests/fixtures/README-tone.md): a word per
/// 80 ms frame of 1 kHz tone.
pub fn tone_model() -> String {
    fixture("voxtral-rt-tone.gguf").display().to_string()
}

/// The element's default delay, in the timing fixture's terms.
const TONE_DELAY_MS: u64 = 480;

/// The timing bursts (0.8 s for 240 ms, 2.4 s for 400 ms, 3.2 s for
/// 800 ms) moved past the default delay: tone frames 16-18, 36-40 and
/// 46-55 of 66.
pub fn tone_frames() -> Vec<usize> {
    let d = (TONE_DELAY_MS / 80) as usize;
    [(d + 10, 3), (d + 30, 5), (d + 40, 10)]
        .iter()
        .flat_map(|&(start, len)| start..start + len)
        .collect()
}

/// `total_frames` of silence with the tone on `frames`.
pub fn tone_audio(total_frames: usize, frames: &[usize]) -> Vec<f32> {
    let mut audio = vec![0.0f32; total_frames * FRAME];
    for &f in frames {
        add_tone(&mut audio, f..f + 1, 1000.0);
    }
    audio
}

/// Where the fixture puts the word of tone frame `f` (ns, audio from 0) at
/// the default delay.
pub fn truth(f: usize) -> u64 {
    (f as u64 * 80 - TONE_DELAY_MS) * 1_000_000
}

/// Pushes `audio` into the live appsrc `src` in real time on `clock`, one
/// 80 ms buffer every 80 ms stamped from 0, calling `after_each` after each
/// push.
pub fn push_in_real_time(
    src: &gst::Element,
    audio: &[f32],
    clock: &gst::Clock,
    mut after_each: impl FnMut(),
) {
    use gst::prelude::*;
    let started = clock.time();
    for (i, piece) in audio.chunks(FRAME).enumerate() {
        let due = started + gst::ClockTime::from_mseconds(80 * i as u64);
        while clock.time() < due {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut b = gst::Buffer::from_mut_slice(to_f32le(piece));
        let bm = b.get_mut().unwrap();
        bm.set_pts(gst::ClockTime::from_mseconds(80 * i as u64));
        bm.set_duration(gst::ClockTime::from_mseconds(80));
        let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]);
        after_each();
    }
}

/// Plays `pipeline` until EOS or an error and returns that message.
pub fn run_to_end(pipeline: &gst::Element, timeout: std::time::Duration) -> gst::Message {
    use gst::prelude::*;
    let bus = pipeline.bus().unwrap();
    let _ = pipeline.set_state(gst::State::Playing);
    let message = bus
        .timed_pop_filtered(
            gst::ClockTime::from_nseconds(timeout.as_nanos() as u64),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("the pipeline neither ended nor failed in time");
    pipeline.set_state(gst::State::Null).unwrap();
    message
}

/// A file of the crate, by path from its root, with its text.
macro_rules! doc {
    ($file:literal) => {
        ($file, include_str!(concat!("../../", $file)))
    };
}

/// The README and the guides under docs/ that have `gst-launch-1.0` lines,
/// by path from the crate's root, with their text. The tests find the
/// lines they run here; tests/readme.rs fails when a file of docs/ with
/// such a line is missing.
pub const DOCS: &[(&str, &str)] = &[
    doc!("README.md"),
    doc!("docs/files-and-muxing.md"),
    doc!("docs/closed-captions.md"),
    doc!("docs/streaming.md"),
    doc!("docs/remote-servers.md"),
    doc!("docs/timing.md"),
    doc!("docs/wording.md"),
    doc!("docs/speakers.md"),
    doc!("docs/translation.md"),
];

/// A `gst-launch-1.0` line of the README or a guide, and the file it is in.
/// It reads as the line (`&str`); `{}` prints the file too.
#[derive(Clone, Debug)]
pub struct DocLine {
    /// The file, from the crate's root: `README.md`, `docs/streaming.md`.
    pub file: &'static str,
    pub line: String,
}

impl std::ops::Deref for DocLine {
    type Target = str;
    fn deref(&self) -> &str {
        &self.line
    }
}

impl std::fmt::Display for DocLine {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.line)
    }
}

/// The lines of `text` that a shell runs as `gst-launch-1.0`.
pub fn launch_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gst-launch-1.0 "))
}

/// The `gst-launch-1.0` lines of the README and the guides ([`DOCS`]) that
/// contain `part` (`""`: all of them), in order.
pub fn doc_launch_lines(part: &str) -> Vec<DocLine> {
    DOCS.iter()
        .flat_map(|&(file, text)| {
            launch_lines(text)
                .filter(|l| l.contains(part))
                .map(move |l| DocLine {
                    file,
                    line: l.to_owned(),
                })
        })
        .collect()
}

/// The first `gst-launch-1.0` line of the README and the guides that
/// contains `part`.
pub fn doc_launch_line(part: &str) -> DocLine {
    doc_launch_lines(part)
        .into_iter()
        .next()
        .unwrap_or_else(|| {
            panic!("neither the README nor a guide of docs/ has a gst-launch-1.0 line with {part}")
        })
}

/// A scratch directory named `name` where the lines of the README and the
/// guides can run as written (`examples/` linked in).
pub fn readme_dir(name: &str) -> PathBuf {
    let dir = scratch_dir(name);
    std::os::unix::fs::symlink(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"),
        dir.join("examples"),
    )
    .unwrap();
    dir
}

/// Runs a shell line of the README or a guide in `dir` with the plugin
/// built for the tests and `$MODEL` set to `model`, for at most 120 s.
pub fn readme_line_output(
    line: &str,
    dir: &std::path::Path,
    model: impl AsRef<std::ffi::OsStr>,
) -> std::process::Output {
    std::process::Command::new("timeout")
        .args(["120", "sh", "-c", line])
        .current_dir(dir)
        .env("MODEL", model)
        .env("GST_PLUGIN_PATH", plugin_dir())
        .output()
        .unwrap()
}

/// The same, asserting that the line succeeds without an ERROR.
pub fn run_readme_line_with(line: &str, dir: &std::path::Path, model: impl AsRef<std::ffi::OsStr>) {
    let out = readme_line_output(line, dir, model);
    let log = output_text(&out);
    assert!(out.status.success(), "{line}\n{log}");
    assert!(!log.contains("ERROR"), "{line}\n{log}");
}

/// Runs a shell line of the README or a guide in `dir` with the plugin
/// built for the tests (`$MODEL` the tiny model); asserts it succeeds
/// without an ERROR.
pub fn run_readme_line(line: &str, dir: &std::path::Path) {
    run_readme_line_with(line, dir, tiny_model());
}

/// espeak-ng saying `text` (with SSML breaks if any) in `voice` (e.g.
/// `en+m3`, `en+f4`; None: the default), 16 kHz samples.
pub fn espeak(text: &str, voice: Option<&str>, dir: &std::path::Path) -> Vec<f32> {
    let name = voice.unwrap_or("default").replace('+', "-");
    let wav = dir.join(format!("speech-{name}.wav"));
    let mut command = std::process::Command::new("espeak-ng");
    command.args(["-m", "-s", "150", "-w"]).arg(&wav);
    if let Some(voice) = voice {
        command.args(["-v", voice]);
    }
    let spoke = command
        .arg(text)
        .status()
        .expect("espeak-ng (Debian package espeak-ng)");
    assert!(spoke.success());
    raw_of(
        std::process::Command::new("sox").arg(&wav),
        &dir.join(format!("speech-{name}.f32")),
        &[],
    )
}

/// A panel: two espeak-ng voices, Host (`en+m3`) and Guest (`en+f4`),
/// speaking in turn (Host, Guest, Host), each turn with 0.75 s of silence
/// either side (the tone fixture places a word 480 ms before its sound, so
/// a word stays inside its turn). Per turn: its speaker and its audio.
pub fn panel_turns(dir: &std::path::Path) -> Vec<(&'static str, Vec<f32>)> {
    let host = espeak("Good evening and welcome to the panel", Some("en+m3"), dir);
    let guest = espeak("Thank you, it is good to be here", Some("en+f4"), dir);
    let half_pause = vec![0.0f32; 12_000];
    let turn = |speech: &[f32]| [&half_pause[..], speech, &half_pause[..]].concat();
    vec![
        ("Host", turn(&host)),
        ("Guest", turn(&guest)),
        ("Host", turn(&host)),
    ]
}

/// The (start, speaker) of each object of a JSONL transcript.
pub fn jsonl_words(jsonl: &str) -> Vec<(u64, String)> {
    jsonl
        .lines()
        .map(|line| {
            let cue: serde_json::Value = serde_json::from_str(line).unwrap();
            let start = (cue["start"].as_f64().unwrap() * 1e9).round() as u64;
            (
                start,
                cue["speaker"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Where each turn of a panel starts (ns) and who speaks from there.
pub fn panel_starts(turns: &[(&'static str, Vec<f32>)]) -> Vec<(u64, &'static str)> {
    let mut at = 0u64;
    turns
        .iter()
        .map(|(name, audio)| {
            let start = at;
            at += audio.len() as u64 * 1_000_000_000 / 16_000;
            (start, *name)
        })
        .collect()
}

/// The panel's speaker at `t` (ns).
pub fn panel_speaker_at(starts: &[(u64, &'static str)], t: u64) -> &'static str {
    starts
        .iter()
        .rev()
        .find(|(from, _)| *from <= t)
        .map_or(starts[0].1, |s| s.1)
}

/// `speaker`'s own microphone in a panel: their turns, silence in the
/// others'.
pub fn panel_microphone(turns: &[(&'static str, Vec<f32>)], speaker: &str) -> Vec<f32> {
    turns
        .iter()
        .flat_map(|(name, audio)| {
            let keep = *name == speaker;
            audio.iter().map(move |&x| if keep { x } else { 0.0 })
        })
        .collect()
}

/// What `sox` (its input already given) makes as 16 kHz mono f32.
pub fn raw_of(
    sox: &mut std::process::Command,
    raw: &std::path::Path,
    effects: &[&str],
) -> Vec<f32> {
    let ok = sox
        .args([
            "-r", "16000", "-c", "1", "-e", "float", "-b", "32", "-t", "raw",
        ])
        .arg(raw)
        .args(effects)
        .status()
        .expect("sox");
    assert!(ok.success());
    read_f32le(raw)
}

/// Calls `f` with each word (a non-empty buffer) that passes `pad`: its
/// PTS, text and the speaker of the last `rstranscribe/speaker-change`
/// before it.
pub fn on_each_spoken_word(
    pad: &gst::Pad,
    f: impl Fn(u64, String, Option<String>) + Send + Sync + 'static,
) {
    use gst::prelude::*;
    let speaker = std::sync::Mutex::new(None::<String>);
    pad.add_probe(
        gst::PadProbeType::BUFFER | gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            match &info.data {
                Some(gst::PadProbeData::Buffer(b)) if b.size() > 0 => {
                    let who = speaker.lock().unwrap().clone();
                    f(b.pts().unwrap().nseconds(), text_of(b), who);
                }
                Some(gst::PadProbeData::Event(e)) => {
                    if let Some(s) = e
                        .structure()
                        .filter(|s| s.name() == "rstranscribe/speaker-change")
                    {
                        *speaker.lock().unwrap() = s.get::<String>("speaker").ok();
                    }
                }
                _ => {}
            }
            gst::PadProbeReturn::Ok
        },
    );
}

/// Waits up to 60 s for `pipeline`'s EOS; an ERROR (or none) fails the
/// test. The pipeline is left as it is (its stats can still be read).
pub fn expect_eos(pipeline: &gst::Pipeline) {
    use gst::prelude::*;
    let msg = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(60),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("EOS within 60 s");
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
}

/// Links `transcriberbin` in `pipeline` as the transcriberbin tests use
/// it: the queues `vq` (video) and `aq` (audio) into it, its video out to
/// `x` (a ccextractor) and its audio out to `aout`.
pub fn link_transcriberbin(pipeline: &gst::Pipeline, tb: &gst::Element) {
    use gst::prelude::*;
    let by = |name: &str| pipeline.by_name(name).unwrap();
    by("vq")
        .link_pads(Some("src"), tb, Some("sink_video"))
        .unwrap();
    by("aq")
        .link_pads(Some("src"), tb, Some("sink_audio"))
        .unwrap();
    tb.link_pads(Some("src_video"), &by("x"), Some("sink"))
        .unwrap();
    tb.link_pads(Some("src_audio"), &by("aout"), Some("sink"))
        .unwrap();
}

/// The LATENCY answer (live, min) of `pad` of element `t` in `pipeline`,
/// brought to PAUSED for it and back to NULL.
pub fn latency_of_pad(pipeline: &gst::Element, pad: &str) -> (bool, gst::ClockTime) {
    use gst::prelude::*;
    pipeline.set_state(gst::State::Paused).unwrap();
    let t = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("t")
        .unwrap();
    let mut q = gst::query::Latency::new();
    let answered = t.static_pad(pad).unwrap().query(&mut q);
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(answered, "no LATENCY answer on {pad}");
    let (live, min, _) = q.result();
    (live, min)
}

/// Pushes `samples` (16 kHz) from appsrc `src` at `pts_ms`, with their
/// duration; the push must be taken.
pub fn push_at(src: &gst::Element, samples: &[f32], pts_ms: u64) {
    use gst::prelude::*;
    let mut b = gst::Buffer::from_mut_slice(to_f32le(samples));
    let bm = b.get_mut().unwrap();
    bm.set_pts(gst::ClockTime::from_mseconds(pts_ms));
    bm.set_duration(gst::ClockTime::from_mseconds(samples.len() as u64 / 16));
    assert_eq!(
        src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&b]),
        gst::FlowReturn::Ok
    );
}

/// Whether `scripts/servers/NAME path` finds what `scripts/servers/NAME
/// install` installs; if not, says that `test` is skipped and why.
pub fn installed_by(name: &str, test: &str, what: &str) -> bool {
    let ok = std::process::Command::new(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("scripts/servers")
            .join(name),
    )
    .arg("path")
    .stderr(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .status()
    .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("{test}: skipped: {what} (run scripts/servers/{name} install)");
    }
    ok
}
