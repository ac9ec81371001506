// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Section 3: CPU outside the engine (callgrind instruction counts).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use crate::harness::{init_gst, progress, run_element, run_engine, Audio, Report};
use crate::options::Opts;
use crate::DEFAULT_INTERVAL_MS;

/// Instructions counted by callgrind for one child run, by category.
#[derive(Debug, Default, Clone)]
struct Counts {
    total: f64,
    ours: f64,
    engine: f64,
    gstreamer: f64,
    rust_std: f64,
    system: f64,
    harness: f64,
    other: f64,
}

impl Counts {
    fn minus(&self, o: &Counts, per: f64) -> Counts {
        let d = |a: f64, b: f64| (a - b) / per;
        Counts {
            total: d(self.total, o.total),
            ours: d(self.ours, o.ours),
            engine: d(self.engine, o.engine),
            gstreamer: d(self.gstreamer, o.gstreamer),
            rust_std: d(self.rust_std, o.rust_std),
            system: d(self.system, o.system),
            harness: d(self.harness, o.harness),
            other: d(self.other, o.other),
        }
    }
}

/// Puts one function of callgrind_annotate's output (`file:function`) in a
/// category, by its object file and its (demangled) name.
fn categorize(c: &mut Counts, ir: f64, func: &str, object: &str) {
    let (file, f) = func.split_once(':').unwrap_or(("", func));
    let obj = object.rsplit('/').next().unwrap_or(object);
    let in_lib = |prefixes: &[&str]| prefixes.iter().any(|p| obj.starts_with(p));
    let rust_std = (f.starts_with("std::") && !f.contains('('))
        || [
            "core::",
            "alloc::",
            "<core::",
            "<alloc::",
            "<std::",
            "__rust",
            "__rdl",
            "hashbrown",
        ]
        .iter()
        .any(|p| f.starts_with(p));
    let slot = if in_lib(&[
        "libgst",
        "libglib",
        "libgobject",
        "libgmodule",
        "libgio",
        "liborc",
    ]) {
        &mut c.gstreamer
    } else if in_lib(&[
        "libc.",
        "libm.",
        "ld-linux",
        "libstdc++",
        "libgcc",
        "libgomp",
        "vgpreload",
    ]) || (obj.is_empty() && file.starts_with("./"))
    {
        &mut c.system
    } else if f.contains("gstvoxtralrt::") {
        &mut c.ours
    } else if f.contains("voxtralrt::") {
        &mut c.harness
    } else if f.contains("gstreamer::")
        || f.contains("gstreamer_base::")
        || f.contains("gstreamer_audio::")
        || f.contains("glib::")
    {
        &mut c.gstreamer
    } else if rust_std {
        &mut c.rust_std
    } else if !obj.is_empty() {
        // The rest of this binary is transcribe.cpp and ggml (C and C++).
        &mut c.engine
    } else {
        &mut c.other
    };
    *slot += ir;
}

fn read_counts(out_file: &Path) -> Option<(Counts, Vec<(f64, String)>)> {
    let annotated = Command::new("callgrind_annotate")
        .args(["--inclusive=no", "--threshold=100", "--auto=no"])
        .arg(out_file)
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&annotated.stdout);
    let mut counts = Counts::default();
    let mut rows = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((num, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(ir) = num.replace(',', "").parse::<f64>() else {
            continue;
        };
        let rest = rest.trim();
        // "(12.34%)  file:function [object]" in recent versions.
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or(r, |(_, r)| r).trim(),
            None => rest,
        };
        if rest.starts_with("PROGRAM TOTALS") {
            counts.total = ir;
            continue;
        }
        let (func, object) = match rest.rsplit_once(" [") {
            Some((f, o)) => (f, o.trim_end_matches(']')),
            None => (rest, ""),
        };
        categorize(&mut counts, ir, func, object);
        rows.push((
            ir,
            format!("{func} [{}]", object.rsplit('/').next().unwrap_or("")),
        ));
    }
    (counts.total > 0.0).then_some((counts, rows))
}

pub(crate) fn callgrind(opts: &Opts, rep: &mut Report) {
    rep.line("\n## 3. CPU outside the engine (callgrind instruction counts)\n");
    let have = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
        && Command::new("callgrind_annotate")
            .arg("--version")
            .output()
            .is_ok();
    if !have {
        rep.line("skipped: valgrind (callgrind, callgrind_annotate) is not installed.");
        return;
    }
    let exe = std::env::current_exe().expect("this binary's path");
    let dir = std::env::temp_dir().join(format!("voxtralrt-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    let (short, long) = opts.callgrind_s;
    let run = |kind: &str, secs: u64| -> Option<(Counts, Vec<(f64, String)>)> {
        progress(&format!("callgrind: {kind}, {secs} s of audio"));
        let out = dir.join(format!("callgrind.{kind}.{secs}.out"));
        let status = Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "-q",
                "--zero-before=voxtralrt_bench_measure_start",
                "--dump-before=voxtralrt_bench_measure_end",
            ])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe)
            .args(["--callgrind-child", kind, &secs.to_string()])
            .args(opts.child_args())
            .status()
            .ok()?;
        if !status.success() {
            eprintln!("callgrind child {kind} {secs} failed: {status}");
            return None;
        }
        // Part 1 is the dump at the end of the measured run.
        read_counts(&out.with_extension("out.1"))
    };
    let (Some(el_s), Some(el_l), Some(en_s), Some(en_l)) = (
        run("element", short),
        run("element", long),
        run("engine", short),
        run("engine", long),
    ) else {
        rep.line("skipped: a callgrind run failed (see stderr).");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    let per = (long - short) as f64;
    let el = el_l.0.minus(&el_s.0, per);
    let en = en_l.0.minus(&en_s.0, per);
    let outside = el.total - en.total;
    rep.line(format!(
        "Counted only during each run (from READY, the model loaded, to EOS: callgrind --zero-before/--dump-before on two \
         marker functions of this binary), then steady state: (count for {long} s of audio - count for {short} s) / {} s, \
         so that the fixed cost of a run (going to PLAYING, starting and finishing the stream) cancels out too. \
         Same input, decode interval {DEFAULT_INTERVAL_MS} ms, threads {}.\n",
        long - short,
        opts.threads
    ));
    // (Rounding -0.001 shows as 0.00, not -0.00.)
    let mi = |v: f64| format!("{:.2}", (v / 1e6 * 100.0).round() / 100.0 + 0.0);
    rep.line("| per second of audio (millions of instructions) | element pipeline | bare engine |");
    rep.line("|---|---|---|");
    for (name, a, b) in [
        ("total", el.total, en.total),
        (
            "engine (transcribe.cpp, ggml; C/C++ code in this binary)",
            el.engine,
            en.engine,
        ),
        (
            "our crate, self cost (gstvoxtralrt::, incl. its engine layer)",
            el.ours,
            en.ours,
        ),
        (
            "GStreamer / GLib (C libraries and gstreamer-rs)",
            el.gstreamer,
            en.gstreamer,
        ),
        ("Rust std / alloc (any caller)", el.rust_std, en.rust_std),
        ("libc, libstdc++, ld.so (any caller)", el.system, en.system),
        ("bench harness (feeding)", el.harness, en.harness),
        ("other", el.other, en.other),
    ] {
        rep.line(format!("| {name} | {} | {} |", mi(a), mi(b)));
    }
    rep.line(format!(
        "\nOutside the engine (element total - engine total): {} M instructions per second of audio, {:.2} % of the element's total.",
        mi(outside),
        100.0 * outside / el.total
    ));
    rep.line(format!(
        "In the element run, functions classified as our crate: {} M/s ({:.2} %), GStreamer/GLib: {} M/s ({:.2} %).",
        mi(el.ours),
        100.0 * el.ours / el.total,
        mi(el.gstreamer),
        100.0 * el.gstreamer / el.total
    ));
    // The functions the element adds, by their steady-state self cost.
    let short_rows: std::collections::HashMap<&str, f64> =
        el_s.1.iter().map(|(ir, f)| (f.as_str(), *ir)).collect();
    let mut top: Vec<(f64, &str)> = el_l
        .1
        .iter()
        .filter(|(_, f)| {
            let mut c = Counts::default();
            let (func, obj) = f.rsplit_once(" [").unwrap_or((f, ""));
            categorize(&mut c, 1.0, func, obj.trim_end_matches(']'));
            c.engine == 0.0 && c.system == 0.0
        })
        .map(|(ir, f)| {
            (
                (ir - short_rows.get(f.as_str()).unwrap_or(&0.0)) / per,
                f.as_str(),
            )
        })
        .collect();
    top.sort_by(|a, b| b.0.total_cmp(&a.0));
    rep.line(
        "\nHeaviest functions of the element side (our crate, GStreamer/GLib, Rust std), steady-state self cost:\n",
    );
    rep.line("| k instructions per s of audio | function [object] |");
    rep.line("|---|---|");
    for (ir, f) in top.iter().take(12) {
        let f = f.strip_prefix("???:").unwrap_or(f);
        rep.line(format!("| {:.1} | `{}` |", ir / 1e3, f.replace('|', "\\|")));
    }
    let share = 100.0 * outside / el.total;
    rep.goal(format!(
        "CPU outside the engine: {} M instructions per audio second, {share:.2} % of the whole (no numeric goal)",
        mi(outside)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child of `callgrind`: one run of `secs` of audio, element or engine.
pub(crate) fn callgrind_child(opts: &Opts, element: bool, secs: u64) {
    init_gst();
    let audio = Arc::new(Audio::load());
    let run = if element {
        run_element(opts, &audio, DEFAULT_INTERVAL_MS, secs)
    } else {
        run_engine(opts, &audio, DEFAULT_INTERVAL_MS, secs)
    };
    eprintln!("child: {} words in {:?}", run.words, run.wall);
}
