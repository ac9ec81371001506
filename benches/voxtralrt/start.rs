// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 7: a start from nothing. Each row is a fresh child process, so
//! nothing of the model is mapped or touched yet: load, the first word, RSS,
//! with the model file evicted from the page cache (cold) and in it (warm).
//! The same child then closes the stream and opens a second one, which gets
//! the model from the pool, as the element's second start does.

use std::time::{Duration, Instant};

use gstvoxtralrt::engine::Stream;
use gstvoxtralrt::voxtral::StreamConfig;

use crate::harness::{init_gst, progress, rss_kib, run_child, Audio, Report};
use crate::options::{die, Opts};
use crate::{BUFFER_SAMPLES, DEFAULT_INTERVAL_MS, RATE};

/// Fed in 100 ms pieces, as the throughput section feeds the engine.
const PIECE: usize = BUFFER_SAMPLES;

/// The child of `start`: two streams one after the other, each timed from
/// `Stream::open` to the first word; one `START` line each.
pub(crate) fn start_child(opts: &Opts) {
    init_gst();
    let audio = Audio::load();
    for n in 1..=2 {
        let t0 = Instant::now();
        let mut stream = Stream::open(&opts.spec(&opts.model), opts.threads)
            .unwrap_or_else(|e| die(&format!("loading {}: {e}", opts.model.display())));
        let load = t0.elapsed();
        let audio_fed = feed_until_first_word(&mut stream, &audio, opts.delay_ms);
        let (rss, _) = rss_kib();
        println!(
            "START {n} {:.1} {:.1} {:.1} {rss}",
            ms(load),
            ms(audio_fed),
            ms(t0.elapsed()),
        );
        // Closing the stream leaves its model idle in the pool, so the
        // second open reuses it, as an element going to READY again does.
        drop(stream);
    }
}

/// Feeds `audio` until the first word comes; returns how much audio that
/// took.
fn feed_until_first_word(stream: &mut Stream, audio: &Audio, delay_ms: u32) -> Duration {
    let config = StreamConfig {
        delay_ms,
        decode_interval_ms: DEFAULT_INTERVAL_MS,
    };
    stream
        .begin(config)
        .unwrap_or_else(|e| die(&format!("starting the engine stream: {e}")));
    for i in 0..(60 * RATE as usize / PIECE) {
        let updates = stream
            .feed(audio.chunk_of(i, PIECE))
            .unwrap_or_else(|e| die(&format!("engine feed: {e}")));
        if updates.iter().any(|u| !u.text.trim().is_empty()) {
            return Duration::from_secs_f64(((i + 1) * PIECE) as f64 / RATE as f64);
        }
    }
    die("no word in 60 s of audio")
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Drops the model file's pages from the page cache, so the next start
/// reads it from the disk as after a reboot. Only pages no process maps
/// can go, which is why each start runs in a child of its own.
fn evict_from_page_cache(path: &std::path::Path) -> bool {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn posix_fadvise(fd: i32, offset: i64, len: i64, advice: i32) -> i32;
    }
    const POSIX_FADV_DONTNEED: i32 = 4;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    // SAFETY: a valid open descriptor; the call only advises the kernel.
    unsafe { posix_fadvise(file.as_raw_fd(), 0, 0, POSIX_FADV_DONTNEED) == 0 }
}

/// How much of the file is in the page cache, in percent (mincore over a
/// read-only mapping; the mapping itself reads nothing).
fn cached_percent(path: &std::path::Path) -> Option<f64> {
    use std::os::fd::AsRawFd;
    extern "C" {
        fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
        fn munmap(addr: *mut u8, len: usize) -> i32;
        fn mincore(addr: *mut u8, len: usize, vec: *mut u8) -> i32;
    }
    const PROT_READ: i32 = 1;
    const MAP_SHARED: i32 = 1;
    const PAGE: usize = 4096;
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len() as usize;
    // SAFETY: a fresh read-only shared mapping of an open file, unmapped
    // before return; mincore writes one byte per page into `pages`.
    unsafe {
        let addr = mmap(
            std::ptr::null_mut(),
            len,
            PROT_READ,
            MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        if addr as isize == -1 {
            return None;
        }
        let mut pages = vec![0u8; len.div_ceil(PAGE)];
        let ok = mincore(addr, len, pages.as_mut_ptr()) == 0;
        munmap(addr, len);
        ok.then(|| {
            pages.iter().filter(|&&p| p & 1 == 1).count() as f64 * 100.0 / pages.len() as f64
        })
    }
}

pub(crate) fn start(opts: &Opts, rep: &mut Report) {
    rep.line(format!(
        "\n## 7. A start from nothing (a fresh process per row; threads {}, delay {} ms, decode interval {} ms)\n",
        opts.threads, opts.delay_ms, DEFAULT_INTERVAL_MS
    ));
    rep.line("Times from opening the engine stream (`Stream::open`: load) to the first word, feeding the sample as fast as the engine takes it. The second stream is opened in the same process after the first was closed: its model waits in the pool and is reused, as on an element's second start.\n");
    rep.line("| page cache before | file cached before | stream | load ms | audio fed to the first word ms | open to first word ms | VmRSS MiB |");
    rep.line("|---|---|---|---|---|---|---|");
    for cold in [true, false] {
        if cold && !evict_from_page_cache(&opts.model) {
            rep.line("| cold | (could not evict the file from the page cache) | | | | | |");
            continue;
        }
        let cached = cached_percent(&opts.model).map_or("?".into(), |p| format!("{p:.0} %"));
        progress(&format!(
            "start: {} page cache",
            if cold { "cold" } else { "warm" }
        ));
        for line in run_child(opts, &["--start-child"], "start").lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if let ["START", n, load, audio, first_word, rss] = f.as_slice() {
                let rss_mib = rss.parse::<f64>().unwrap_or(f64::NAN) / 1024.0;
                rep.line(format!(
                    "| {} | {cached} | {} | {load} | {audio} | {first_word} | {rss_mib:.0} |",
                    if cold { "cold" } else { "warm" },
                    if *n == "1" {
                        "first"
                    } else {
                        "second (model from the pool)"
                    },
                ));
            }
        }
    }
}
