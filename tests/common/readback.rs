// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Recording a stream with ffmpeg (Debian `ffmpeg`), reading the captions
//! of an MPEG-TS file back with it (its `subcc` output of the lavfi movie
//! source), and checking when the tone fixture's words show
//! (tests/captions.rs, tests/rtsp.rs, tests/srt.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::process::Guarded;
use super::{tone_frames, truth};

const MS: u64 = 1_000_000;

/// The transcriber's default decode interval: a word's own timing error.
pub const INTERVAL_MS: u64 = 160;

/// How late a word may show on a decoder's screen after its place in the
/// audio, roll-up: the word's own timing error (a decode interval), then
/// the 608 codes before it (mode and row: 4 frames for the first word, a
/// carriage return twice at a line break) and its own characters, and up
/// to a frame of placement by the muxer (measured worst: the eprintln
/// lines of tests/captions.rs).
pub const ROLL_UP_BOUND_MS: u64 = INTERVAL_MS + 250;

/// ffmpeg receiving a stream and copying it as it is (`-c copy`) into the
/// MPEG-TS file `ts`, its errors logged beside it (`ts` with `.log`).
pub struct Recording {
    ffmpeg: Guarded,
    ts: PathBuf,
}

impl Recording {
    /// `input`: what names the stream (`-i URL` and its options), and any
    /// limit on the recording (`-t 6`).
    pub fn start(input: &[&str], ts: &Path) -> Recording {
        let log = std::fs::File::create(ts.with_extension("log")).unwrap();
        let ffmpeg = Guarded::spawn(
            Command::new("ffmpeg")
                .args(["-nostdin", "-loglevel", "error", "-y"])
                .args(input)
                .args(["-c", "copy", "-f", "mpegts"])
                .arg(ts)
                .stdout(Stdio::null())
                .stderr(log),
            "ffmpeg (Debian package ffmpeg)",
        );
        Recording {
            ffmpeg,
            ts: ts.to_owned(),
        }
    }

    /// Waits for ffmpeg to end by itself, and asserts that it succeeded;
    /// the failure message has its log, then `context`.
    pub fn assert_ends_well(mut self, timeout: Duration, not_ended: &str, context: &str) {
        let status = self.ffmpeg.wait_for(timeout).expect(not_ended);
        let log = std::fs::read_to_string(self.ts.with_extension("log")).unwrap();
        assert!(status.success(), "ffmpeg: {status}\n{log}{context}");
    }
}

/// The rest of a launch line after captions reach `c.caption`: `frames`
/// black frames at `fps` through cccombiner `c`, x264enc (A/53 SEI) and
/// mpegtsmux into the file `ts`.
pub fn video_into_ts(frames: u64, fps: &str, ts: &Path) -> String {
    format!(
        "videotestsrc num-buffers={frames} pattern=black ! \
           video/x-raw,width=160,height=120,framerate={fps} ! queue ! cccombiner name=c ! \
           x264enc speed-preset=ultrafast tune=zerolatency ! h264parse ! mpegtsmux ! \
           filesink location={}",
        ts.display()
    )
}

/// ffmpeg's decoding of the CEA-608 captions in the H.264 SEI of `ts`, in
/// real-time mode (a cue for every change of the screen): (start in ns,
/// screen text without ffmpeg's font markup) per cue. The SRT it wrote is
/// kept next to `ts`.
pub fn subcc_cues(ts: &Path) -> Vec<(u64, String)> {
    subcc_cues_in(ts, true)
}

/// The same, in real-time mode or, without it, as ffmpeg decodes by
/// default: a roll-up caption is written only when its row is committed or
/// erased.
pub fn subcc_cues_in(ts: &Path, real_time: bool) -> Vec<(u64, String)> {
    let mode = if real_time {
        ["-real_time", "1", "-real_time_latency_msec", "0"].as_slice()
    } else {
        [].as_slice()
    };
    subcc_cues_with(ts, mode, "srt")
}

/// The same with ffmpeg's caption decoder options `options` (such as
/// `-data_field 1` for field 2, CC3), writing `ts` with extension `srt_ext`.
pub fn subcc_cues_with(ts: &Path, options: &[&str], srt_ext: &str) -> Vec<(u64, String)> {
    let srt = ts.with_extension(srt_ext);
    let output = std::process::Command::new("timeout")
        .args(["120", "ffmpeg", "-loglevel", "error", "-y"])
        .args(options)
        .args(["-f", "lavfi", "-i"])
        .arg(format!("movie={}[out0+subcc]", ts.display()))
        .args(["-map", "0:s"])
        .arg(&srt)
        .output()
        .expect("running ffmpeg (Debian package ffmpeg)");
    assert!(output.status.success(), "{}", super::output_text(&output));
    srt_cues(&std::fs::read_to_string(&srt).unwrap())
        .into_iter()
        .map(|(start, text)| {
            let text = text
                .replace("<font face=\"Monospace\">", "")
                .replace("{\\an7}", "")
                .replace("</font>", "");
            (start, text)
        })
        .collect()
}

/// The rows of a two-row roll-up screen, as ffmpeg showed them, each in
/// its final form: the top row of each screen once a row rolled up, then
/// the bottom row of the last screen.
pub fn rolled_rows(cues: &[(u64, String)]) -> Vec<String> {
    let screens: Vec<Vec<&str>> = cues
        .iter()
        .map(|(_, text)| {
            text.lines()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|rows| !rows.is_empty())
        .collect();
    let mut rows: Vec<String> = Vec::new();
    for screen in screens.iter().filter(|s| s.len() == 2) {
        if rows.last().map(String::as_str) != Some(screen[0]) {
            rows.push(screen[0].to_owned());
        }
    }
    if let Some(last) = screens.last().and_then(|s| s.last()) {
        rows.push(last.to_string());
    }
    rows
}

/// The rows of a roll-up screen, as ffmpeg showed them, each as it first
/// appeared: a row is new where the screen rolled up (its top row was the
/// bottom one), where the bottom row is not the last one grown, and after
/// the screen was erased.
pub fn new_rows(cues: &[(u64, String)]) -> Vec<String> {
    // The row above the bottom one, if the screen has two.
    fn above(screen: &[&str]) -> Option<String> {
        let i = screen.len().checked_sub(2)?;
        Some(screen[i].to_owned())
    }
    let mut rows = Vec::new();
    let mut last: Vec<&str> = Vec::new();
    for (_, text) in cues {
        let screen: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|r| !r.is_empty())
            .collect();
        let Some(&bottom) = screen.last() else {
            last.clear();
            continue;
        };
        let last_bottom = last.last().copied();
        let rolled = above(&screen).as_deref() == last_bottom && above(&screen) != above(&last);
        let grown = last_bottom.is_some_and(|b| bottom.starts_with(b));
        if rolled || !grown {
            rows.push(bottom.to_owned());
        }
        last = screen;
    }
    rows
}

/// When each "x" (the tone fixture's word) first showed on ffmpeg's screen.
pub fn x_times(ts: &Path) -> Vec<u64> {
    let mut shown = Vec::new();
    for (start, text) in subcc_cues(ts) {
        let count = text.matches('x').count();
        while shown.len() < count {
            shown.push(start);
        }
    }
    shown
}

/// (start, text) of each SRT cue.
pub fn srt_cues(srt: &str) -> Vec<(u64, String)> {
    srt.split("\n\n")
        .filter_map(|block| {
            let mut lines = block.lines().skip_while(|l| !l.contains(" --> "));
            let times = lines.next()?;
            let start = srt_time(times.split(" --> ").next()?);
            let text = lines.collect::<Vec<_>>().join("\n");
            Some((start, text))
        })
        .collect()
}

fn srt_time(t: &str) -> u64 {
    let (hms, ms) = t.trim().split_once(',').unwrap();
    let parts: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
    ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 * MS + ms.parse::<u64>().unwrap() * MS
}

/// Checks one time per tone frame, in order, each from a decode interval
/// early to `bound_ms` late; returns the worst lateness (ms).
pub fn assert_shown_in_time(what: &str, shown: &[u64], bound_ms: u64) -> i64 {
    let frames = tone_frames();
    assert_eq!(shown.len(), frames.len(), "{what}: {shown:?}");
    let mut worst = i64::MIN;
    for (&t, &f) in shown.iter().zip(&frames) {
        let late = (t as i64 - truth(f) as i64) / MS as i64;
        assert!(
            (-(INTERVAL_MS as i64)..=bound_ms as i64).contains(&late),
            "{what}: word of frame {f} shown at {} ms, {late} ms from its place",
            t / MS
        );
        worst = worst.max(late);
    }
    for pair in shown.windows(2) {
        assert!(pair[0] <= pair[1], "{what}: out of order {shown:?}");
    }
    worst
}
