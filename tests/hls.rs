// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! HLS with the captions in the video (docs/streaming.md, "HLS"): the transcriber's
//! pop-on `cc_data` in the H.264 SEI, cut into MPEG-TS segments by stock
//! `hlssink2` and served over HTTP on 127.0.0.1. ffmpeg reads the playlist
//! back, and hls.js (tests/hls/, from npm) plays it in headless Chromium,
//! where the CEA-608 captions are a text track; a second player joins the
//! live stream late. And why pop-on: hls.js shows roll-up rows early.
//!
//! Timing uses the tone fixture (tests/fixtures/README-tone.md): one word
//! "x" per 80 ms frame of 1 kHz tone, each at a known place in the audio.
//! Here the words come in bursts, one across each 2 s segment boundary,
//! each burst one pop-on caption: a cut at a boundary shows as a caption
//! short of words, a repeat as an extra caption.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gst::prelude::*;
use serde_json::Value;

use common::chromium::{Chromium, DevTools};
use common::http::Http;
use common::readback::{self, Recording, INTERVAL_MS, ROLL_UP_BOUND_MS};
use common::{tone_audio, tone_model, truth};

const MS: i64 = 1_000_000;
/// One segment: `target-duration=2` and `key-int-max=60` at 29.97 fps
/// without scene-cut keyframes, so each segment is one 60-frame GOP.
const SEGMENT_MS: u64 = 2002;
/// Segment boundaries with a burst of words across them.
const BOUNDARIES: usize = 10;
/// The audio: the last burst, then 2 s of silence, in 80 ms frames.
const AUDIO_FRAMES: usize = 284;
/// Video frames for as long as the audio (the guide's `num-buffers`).
const VIDEO_FRAMES: u32 = 682;
/// mpegtsmux writes running time 0 as PTS 3600 s (checked on segment 0).
const TS_OFFSET_S: f64 = 3600.0;
/// How late a pop-on caption may show after its last word's place: the
/// word's own timing error (a decode interval), the word itself (80 ms),
/// the 500 ms without a word that ends a caption, and the frames that
/// carry the end-of-caption code (measured worst: 694 ms; see the
/// eprintln lines).
const POP_ON_BOUND_MS: i64 = INTERVAL_MS as i64 + 80 + 500 + 100;
/// How long the live stream is when the late player opens it.
const LATE_JOIN: Duration = Duration::from_secs(10);
/// The longest one step may take on a loaded machine.
const STEP: Duration = Duration::from_secs(120);

/// The tone frames of the words, burst by burst: 5, 6 or 7 words in turn
/// (400 to 560 ms; captions in a row differ, as hls.js makes no new cue
/// for a caption like the one before), from 240 ms before each segment
/// boundary, at the element's default delay.
fn bursts() -> Vec<Vec<usize>> {
    (1..=BOUNDARIES)
        .map(|k| {
            let first = (k as u64 * SEGMENT_MS + 240).div_ceil(80) as usize;
            (first..first + 5 + (k - 1) % 3).collect()
        })
        .collect()
}

/// The guide's HLS line run on the tone bursts, once for all the tests here:
/// the directory holding its playlist.m3u8 and segments.
fn vod() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| run_readme_line("hls-vod", &common::doc_launch_line("hlssink2")))
}

/// The same with roll-up captions (the element's default mode).
fn vod_roll_up() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let line = common::doc_launch_line("hlssink2");
        assert!(line.contains(" caption-mode=pop-on "), "{line}");
        run_readme_line("hls-roll-up", &line.replace(" caption-mode=pop-on ", " "))
    })
}

/// Runs `line` in a fresh directory `name`, with the tone bursts for the
/// sample, as many video frames as audio, and the tone fixture model.
fn run_readme_line(name: &str, line: &str) -> PathBuf {
    let dir = common::scratch_dir(name);
    let wav = dir.join("tone.wav");
    let frames: Vec<usize> = bursts().concat();
    common::write_wav(&wav, &tone_audio(AUDIO_FRAMES, &frames));
    for part in ["examples/data/sample.wav", "num-buffers=300", "$MODEL"] {
        assert!(line.contains(part), "{part} is not in {line}");
    }
    let line = line
        .replace("examples/data/sample.wav", &wav.display().to_string())
        .replace("num-buffers=300", &format!("num-buffers={VIDEO_FRAMES}"));
    common::run_readme_line_with(&line, &dir, tone_model());
    dir
}

/// (URI, duration in s) of each segment of a media playlist.
fn segments(playlist: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut lines = playlist.lines();
    while let Some(line) = lines.next() {
        if let Some(extinf) = line.strip_prefix("#EXTINF:") {
            let duration = extinf.trim_end_matches(',').parse().unwrap();
            out.push((lines.next().unwrap().to_owned(), duration));
        }
    }
    out
}

/// The media sequence number of a playlist's first segment.
fn media_sequence(playlist: &str) -> u64 {
    playlist
        .lines()
        .find_map(|l| l.strip_prefix("#EXT-X-MEDIA-SEQUENCE:"))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// The first PTS (s) of `ts`'s streams, as ffprobe reads them.
fn start_times(ts: &Path) -> Vec<f64> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_entries", "stream=start_time"])
        .args(["-of", "csv=p=0"])
        .arg(ts)
        .output()
        .expect("running ffprobe (Debian package ffmpeg)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The pop-on captions a display showed: (time in ns, words) for each
/// change to a screen with text; a pop-on caption replaces the screen
/// whole, so two alike in a row are two captions.
fn captions(screens: &[(i64, Vec<String>)]) -> Vec<(i64, usize)> {
    screens
        .iter()
        .map(|(at, rows)| (*at, rows.iter().map(|r| r.matches('x').count()).sum()))
        .filter(|&(_, words)| words > 0)
        .collect()
}

/// Checks that `shown` are the captions of `bursts` one for one, in order,
/// each with all its words (the first one may have lost its first words:
/// a player that joins while a caption loads gets the rest), each shown
/// from a decode interval before to `bound` ms after its last word's
/// place; returns the offsets (earliest, latest) in ms.
fn assert_captions(
    what: &str,
    shown: &[(i64, usize)],
    bursts: &[Vec<usize>],
    bound: i64,
) -> (i64, i64) {
    assert_eq!(shown.len(), bursts.len(), "{what}: {shown:?}");
    let offsets: Vec<i64> = shown
        .iter()
        .zip(bursts)
        .map(|(&(at, _), burst)| (at - truth(*burst.last().unwrap()) as i64) / MS)
        .collect();
    eprintln!("{what}: caption after its last word's place (ms): {offsets:?}");
    for (i, ((&(at, words), burst), &off)) in shown.iter().zip(bursts).zip(&offsets).enumerate() {
        if i == 0 {
            assert!((1..=burst.len()).contains(&words), "{what}: {shown:?}");
        } else {
            assert_eq!(words, burst.len(), "{what}: caption {i} of {shown:?}");
        }
        assert!(
            (-(INTERVAL_MS as i64)..=bound).contains(&off),
            "{what}: caption of frames {burst:?} shown at {} ms, {off} ms after its last word",
            at / MS
        );
    }
    for pair in shown.windows(2) {
        assert!(pair[0].0 < pair[1].0, "{what}: out of order: {shown:?}");
    }
    (
        offsets.iter().copied().min().unwrap(),
        offsets.iter().copied().max().unwrap(),
    )
}

/// The stream's files over HTTP on 127.0.0.1, with the player page and
/// hls.js from tests/hls/; a file not (or no longer) there is a 404.
fn serve(dir: &Path) -> Http {
    Http::serve_with(
        dir,
        vec![
            ("player.html", player_dir().join("player.html")),
            ("hls.min.js", hls_js()),
        ],
    )
}

/// tests/hls/: the page and its npm package.
fn player_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hls")
}

/// hls.js as npm installed it (scripts/setup runs `npm ci` in tests/hls).
fn hls_js() -> PathBuf {
    let path = player_dir().join("node_modules/hls.js/dist/hls.min.js");
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup (it runs `npm ci` in tests/hls; npm is the Debian \
         package npm)",
        path.display()
    );
    path
}

/// What the page reports (tests/hls/player.html), with the video's state.
const PAGE_STATE: &str = "JSON.stringify({time: video.currentTime, ended: video.ended, \
     report: window.report, cues: window.allCues()})";

/// A page playing `src` through hls.js, as it reports itself.
struct Player {
    page: DevTools,
    state: Value,
}

impl Player {
    fn open(chromium: &mut Chromium, http: &Http, src: &str) -> Player {
        let url = http.url(&format!("player.html?src={src}"));
        Player {
            page: DevTools::open(&chromium.devtools_url(), &url),
            state: Value::Null,
        }
    }

    /// Reads the page's state again; false while the page is loading.
    fn poll(&mut self) -> bool {
        match self.page.evaluate(PAGE_STATE).as_str() {
            Some(text) => {
                self.state = serde_json::from_str(text).unwrap();
                true
            }
            None => false,
        }
    }

    fn ended(&self) -> bool {
        self.state["ended"] == true
    }

    fn fatal_errors(&self) -> Vec<Value> {
        let errors = self.state["report"]["errors"].as_array().cloned();
        errors
            .unwrap_or_default()
            .into_iter()
            .filter(|e| e["fatal"] == true)
            .collect()
    }

    /// The rows of the caption track now.
    fn rows_now(&self) -> Vec<String> {
        let screens = self.state["report"]["screens"].as_array();
        screens
            .and_then(|s| s.last())
            .map(|s| rows_of(&s["rows"]))
            .unwrap_or_default()
    }

    /// hls.js's media time 0 in the stream's running time (ns): the PTS
    /// it maps to media time 0 (its initPTS for the main stream), less
    /// mpegtsmux's offset.
    fn origin(&self) -> i64 {
        assert!(
            self.state["report"]["initPts"][0].is_object(),
            "hls.js found no initPTS: {}",
            self.state
        );
        self.origin_or_zero()
    }

    /// The same, 0 before hls.js has one.
    fn origin_or_zero(&self) -> i64 {
        let init = &self.state["report"]["initPts"][0];
        let (Some(pts), Some(timescale)) = (init["initPTS"].as_f64(), init["timescale"].as_f64())
        else {
            return 0;
        };
        let pts = pts / timescale;
        ((pts - TS_OFFSET_S) * 1e9).round() as i64
    }

    /// What the CC1 track showed, each time it changed: (running time of
    /// the media time then, rows).
    fn screens(&self) -> Vec<(i64, Vec<String>)> {
        let origin = self.origin();
        self.state["report"]["screens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let at = (s["at"].as_f64().unwrap() * 1e9).round() as i64;
                (origin + at, rows_of(&s["rows"]))
            })
            .collect()
    }

    /// The cues of the caption track's bottom row, in order: (running time
    /// of the start in ns, words).
    fn bottom_rows(&self) -> Vec<(i64, usize)> {
        let origin = self.origin_or_zero();
        let cues = self.state["cues"].as_array().cloned().unwrap_or_default();
        let bottom = cues.iter().filter_map(|c| c["line"].as_i64()).max();
        let mut rows: Vec<(i64, usize)> = cues
            .iter()
            .filter(|c| c["line"].as_i64() == bottom)
            .map(|c| {
                let start = (c["start"].as_f64().unwrap() * 1e9).round() as i64;
                (
                    origin + start,
                    c["text"].as_str().unwrap().matches('x').count(),
                )
            })
            .collect();
        rows.sort();
        rows
    }

    /// The first video fragment it buffered: (media sequence number,
    /// running time of its start in ns).
    fn first_fragment(&self) -> (u64, i64) {
        let frags = self.state["report"]["frags"].as_array().unwrap();
        let first = frags
            .iter()
            .filter(|f| f["type"] == "main")
            .min_by_key(|f| f["sn"].as_u64())
            .expect("a main fragment buffered");
        let start = (first["start"].as_f64().unwrap() * 1e9).round() as i64;
        (first["sn"].as_u64().unwrap(), self.origin() + start)
    }
}

fn rows_of(rows: &Value) -> Vec<String> {
    rows.as_array()
        .map(|r| r.iter().map(|t| t.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// Polls `player` every 250 ms until `done` holds, taking `screenshot`
/// of it first, once the longest caption (7 words) shows.
fn play_until(player: &mut Player, screenshot: Option<&Path>, done: impl Fn(&Player) -> bool) {
    let deadline = Instant::now() + STEP;
    let mut shot = screenshot.is_none();
    loop {
        player.poll();
        let fatal = player.fatal_errors();
        assert!(
            fatal.is_empty(),
            "hls.js failed: {fatal:?}\n{}",
            player.state
        );
        if let (false, Some(path)) = (shot, screenshot) {
            if player.rows_now().concat().matches('x').count() >= 7 {
                player.page.screenshot(path);
                shot = true;
            }
        }
        if shot && done(player) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the player did not finish in {STEP:?}: {}",
            player.state
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn the_readme_line_writes_two_second_segments_with_the_bursts_across_their_boundaries() {
    let dir = vod();
    let playlist = std::fs::read_to_string(dir.join("playlist.m3u8")).unwrap();
    assert!(playlist.contains("#EXT-X-ENDLIST"), "{playlist}");
    assert!(playlist.contains("#EXT-X-TARGETDURATION:2"), "{playlist}");
    let segments = segments(&playlist);
    assert!(segments.len() > BOUNDARIES, "{playlist}");
    let (last, gops) = segments.split_last().unwrap();
    for (uri, duration) in gops {
        let ms = (duration * 1000.0).round() as u64;
        assert_eq!(ms, SEGMENT_MS, "{uri}: {duration} s\n{playlist}");
    }
    assert!(last.1 <= 2.1, "{playlist}");
    // Boundary k lies inside burst k.
    for (k, burst) in bursts().iter().enumerate() {
        let boundary = (k as u64 + 1) * SEGMENT_MS * 1_000_000;
        assert!(
            truth(burst[0]) < boundary && truth(*burst.last().unwrap()) > boundary,
            "burst {k} does not cross {boundary} ns"
        );
    }
    // Running time 0 is PTS 3600 s, for audio and video alike.
    for start in start_times(&dir.join(&segments[0].0)) {
        assert!((start - TS_OFFSET_S).abs() < 0.001, "{start}");
    }
}

#[test]
fn ffmpeg_reading_the_playlist_over_http_gets_every_caption_as_cc1_whole_and_in_time() {
    let dir = vod();
    let http = serve(dir);
    let ts = common::scratch_dir("hls-ffmpeg").join("received.ts");
    let url = http.url("playlist.m3u8");
    let receiver = Recording::start(&["-i", &url], &ts);
    receiver.assert_ends_well(STEP, "ffmpeg still reading the playlist", "");
    // By default ffmpeg writes a pop-on caption when it is shown.
    let screens: Vec<(i64, Vec<String>)> = readback::subcc_cues_in(&ts, false)
        .into_iter()
        .map(|(start, text)| (start as i64, text.lines().map(str::to_owned).collect()))
        .collect();
    let shown = captions(&screens);
    let (early, late) = assert_captions("ffmpeg over HLS", &shown, &bursts(), POP_ON_BOUND_MS);
    eprintln!(
        "ffmpeg over HLS: {} captions, one across each of {BOUNDARIES} segment boundaries, shown \
         {early}..{late} ms after their last word's place",
        shown.len()
    );
}

#[test]
fn hls_js_in_chromium_shows_every_caption_whole_at_its_place_against_the_video_time() {
    hls_js();
    let started = Instant::now();
    let http = serve(vod());
    let scratch = common::scratch_dir("hls-chromium");
    let mut chromium = Chromium::start(&scratch.join("profile"));
    let mut player = Player::open(&mut chromium, &http, "playlist.m3u8");
    let screenshot = scratch.join("hls-captions.png");
    play_until(&mut player, Some(&screenshot), Player::ended);

    let report = &player.state["report"];
    let tracks = report["tracks"].as_array().unwrap();
    assert!(
        tracks.iter().any(|t| t["kind"] == "captions"),
        "no captions track: {tracks:?}"
    );
    let origin = player.origin();
    assert!(
        (0..100 * MS).contains(&origin),
        "media time 0 at {origin} ns"
    );
    let shown = captions(&player.screens());
    let (early, late) = assert_captions("hls.js", &shown, &bursts(), POP_ON_BOUND_MS);
    eprintln!(
        "hls.js {}: {} captions, one across each of {BOUNDARIES} segment boundaries, shown at \
         currentTime {early}..{late} ms after their last word's place; screenshot {}; {:.1} s \
         in all",
        report["version"],
        shown.len(),
        screenshot.display(),
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn hls_js_shows_a_roll_up_row_whole_from_the_time_of_its_first_word() {
    // Why the guide's HLS line uses pop-on: hls.js 1.7 gathers a roll-up
    // row's characters into one cue from the first one to the next
    // carriage return, so a word shows as early as the first word of its
    // row. The cues are there once hls.js has parsed the fragments;
    // nothing needs to play.
    hls_js();
    let http = serve(vod_roll_up());
    let scratch = common::scratch_dir("hls-roll-up-chromium");
    let mut chromium = Chromium::start(&scratch.join("profile"));
    let mut player = Player::open(&mut chromium, &http, "playlist.m3u8");
    let words: usize = bursts().iter().map(Vec::len).sum();
    play_until(&mut player, None, |p| {
        p.bottom_rows().iter().map(|r| r.1).sum::<usize>() >= words
    });

    let frames = bursts().concat();
    let rows = player.bottom_rows();
    let mut next = 0;
    let mut earliest = i64::MAX;
    for &(start, count) in &rows {
        let row = &frames[next..next + count];
        next += count;
        let first = (start - truth(row[0]) as i64) / MS;
        let last = (start - truth(*row.last().unwrap()) as i64) / MS;
        assert!(
            (-(INTERVAL_MS as i64)..=ROLL_UP_BOUND_MS as i64).contains(&first),
            "a row of {count} words from {} ms: {first} ms from its first word's place: {rows:?}",
            start / MS
        );
        earliest = earliest.min(last);
    }
    assert_eq!(next, words, "{rows:?}");
    assert!(rows.len() >= 3, "{rows:?}");
    eprintln!(
        "hls.js roll-up: {} rows, each shown whole from its first word; the last word of a row \
         shows up to {} ms before its place",
        rows.len(),
        -earliest
    );
}

/// The guide's chain, live: the tone bursts pushed in real time, a live
/// test pattern, and a sliding playlist (`playlist-length=3`, the least
/// the HLS specification allows a live playlist, files deleted after 5).
/// `overload=queue`: the test is about delivery to a late player; with the
/// default (skip), a model held back by a busy machine for more than the
/// latency skips audio and its captions lose words.
fn live_pipeline(dir: &Path) -> gst::Pipeline {
    let description = format!(
        "appsrc name=src is-live=true format=time \
           caps=audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved ! tee name=a \
         a. ! queue ! voxtralrttranscriber model-path={model} threads=1 caption-mode=pop-on \
           overload=queue ! \
           closedcaption/x-cea-708,format=cc_data,framerate=30000/1001 ! queue ! cc.caption \
         videotestsrc is-live=true num-buffers={VIDEO_FRAMES} ! \
           video/x-raw,width=640,height=360,framerate=30000/1001 ! queue ! cccombiner name=cc ! \
           x264enc tune=zerolatency key-int-max=60 option-string=scenecut=0 ! h264parse ! queue ! \
           hls.video \
         a. ! queue ! audioconvert ! audioresample ! audio/x-raw,rate=48000,channels=2 ! \
           voaacenc bitrate=128000 ! aacparse ! queue ! hls.audio \
         hlssink2 name=hls async-handling=true target-duration=2 playlist-length=3 max-files=5 \
           playlist-location={dir}/live.m3u8 location={dir}/live%05d.ts",
        model = tone_model(),
        dir = dir.display()
    );
    gst::parse::launch(&description)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap()
}

/// The playlist at `path` once it exists and `ready` holds for it.
fn wait_for_playlist(path: &Path, ready: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + STEP;
    loop {
        if let Ok(playlist) = std::fs::read_to_string(path) {
            if ready(&playlist) {
                return playlist;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{} never got ready",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_player_joining_the_live_stream_10_s_in_gets_the_captions_from_its_first_segment_on() {
    hls_js();
    common::init_plugin();
    let started = Instant::now();
    let dir = common::scratch_dir("hls-live");
    let pipeline = live_pipeline(&dir);
    let clock = gst::SystemClock::obtain();
    pipeline.use_clock(Some(&clock));
    pipeline.set_state(gst::State::Playing).unwrap();
    let src = pipeline.by_name("src").unwrap();
    let audio = tone_audio(AUDIO_FRAMES, &bursts().concat());
    let pusher = std::thread::spawn(move || {
        common::push_in_real_time(&src, &audio, &clock, || {});
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
    });
    let http = serve(&dir);
    let mut chromium = Chromium::start(&dir.join("profile"));

    // The player comes once the stream is LATE_JOIN long: the playlist
    // then lists its last segments only.
    let playlist = wait_for_playlist(&dir.join("live.m3u8"), |p| {
        let listed = segments(p).len() as u64 + media_sequence(p);
        listed * SEGMENT_MS >= LATE_JOIN.as_millis() as u64
    });
    assert!(!playlist.contains("#EXT-X-ENDLIST"), "{playlist}");
    assert!(
        media_sequence(&playlist) >= 2,
        "the first segments still listed:\n{playlist}"
    );
    let joined_at = started.elapsed();
    let mut late = Player::open(&mut chromium, &http, "live.m3u8");
    play_until(&mut late, None, Player::ended);
    pusher.join().unwrap();
    let message = pipeline
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(STEP.as_secs()),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .expect("the live pipeline ended");
    pipeline.set_state(gst::State::Null).unwrap();
    assert!(
        matches!(message.view(), gst::MessageView::Eos(_)),
        "{message:?}"
    );

    // The player starts from a segment of the playlist it found, and has
    // every caption from there on: the first one maybe without the words
    // loaded before its first segment, none from before it.
    let (sn, joined) = late.first_fragment();
    assert!(sn >= media_sequence(&playlist), "{sn}\n{playlist}");
    let shown = captions(&late.screens());
    let bursts = bursts();
    let from = bursts.len() - shown.len().min(bursts.len());
    let first_inside = bursts
        .iter()
        .position(|b| truth(b[0]) as i64 >= joined)
        .expect("bursts after the player's start");
    assert!(
        from <= first_inside,
        "captions missing after the start at {} ms: {shown:?}",
        joined / MS
    );
    assert!(
        truth(*bursts[from].last().unwrap()) as i64 >= joined,
        "a caption from before the start at {} ms: {shown:?}",
        joined / MS
    );
    let (early, late_ms) = assert_captions(
        "hls.js joining late",
        &shown,
        &bursts[from..],
        POP_ON_BOUND_MS,
    );
    eprintln!(
        "late player: came {:.1} s after the start, playlist from segment {}; played from segment \
         {sn} ({} ms); {} of {} captions (from burst {from}, the first with {} of its {} words), \
         shown {early}..{late_ms} ms after their last word's place; {:.1} s in all",
        joined_at.as_secs_f64(),
        media_sequence(&playlist),
        joined / MS,
        shown.len(),
        bursts.len(),
        shown[0].1,
        bursts[from].len(),
        started.elapsed().as_secs_f64()
    );
}
