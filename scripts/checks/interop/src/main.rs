// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! gst-plugins-rs 0.15's consumers of `voxtralrttranscriber`, in one run
//! (scripts/checks/interop/run, on GStreamer 1.24 or newer):
//!
//! - `tttocea608`/`tttocea708` `speaker-prefix` and `textaccumulate` on
//!   its `rstranscribe/speaker-change` events (speakers.rs);
//! - `textaccumulate`, `tttocea608` and `tttocea708` on its
//!   `rstranscribe/final-transcript` events, on tone and on espeak-ng
//!   speech (utterances.rs);
//! - `transcriberbin` with it as a sink pad's `transcriber`: the transcript
//!   and its Spanish, then two audio streams (transcriberbin.rs).
//!
//! Each check prints what it read back; the run fails if any check does.
//!
//! Usage: voxtralrt-interop TONE_MODEL TINY_MODEL (GST_PLUGIN_PATH holding
//! the plugin).

mod audio;
mod captions;
mod chat;
mod pipeline;
mod speakers;
mod stand_in;
mod transcriberbin;
mod utterances;

use std::time::Instant;

type Check = fn(&str) -> Result<String, String>;

/// All checks take about 20 s.
const LONGEST_RUN_S: u64 = 300;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, tone_model, tiny_model] = &args[..] else {
        eprintln!("usage: voxtralrt-interop TONE_MODEL TINY_MODEL");
        std::process::exit(2);
    };
    // A pipeline that never ends can also hang on its way back to NULL:
    // the run fails instead of waiting for ever.
    std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_secs(LONGEST_RUN_S));
        eprintln!("interop: FAILED: the checks did not end within {LONGEST_RUN_S} s");
        std::process::exit(1);
    });
    gst::init().unwrap();
    gstrsclosedcaption::plugin_register_static().expect("the closedcaption plugin");
    gsttextaccumulate::plugin_register_static().expect("the textaccumulate plugin");
    gsttextwrap::plugin_register_static().expect("the textwrap plugin");
    if std::env::var_os("INTEROP_NO_STAND_IN").is_none() && stand_in::register_if_needed() {
        println!("interop: no awstranscriber (aws plugin): a stand-in for transcriberbin");
    }
    let checks: [(&str, Check, &str); 5] = [
        ("speaker changes", speakers::check, tone_model),
        ("final-transcript, tone", utterances::check_tone, tone_model),
        (
            "final-transcript, speech",
            utterances::check_speech,
            tiny_model,
        ),
        (
            "transcriberbin, translation",
            transcriberbin::check_translation,
            tone_model,
        ),
        (
            "transcriberbin, two streams",
            transcriberbin::check_two_streams,
            tone_model,
        ),
    ];
    // INTEROP_ONLY=WORDS: only the checks whose name has them (debugging).
    let only = std::env::var("INTEROP_ONLY").unwrap_or_default();
    let checks: Vec<_> = checks.into_iter().filter(|c| c.0.contains(&only)).collect();
    let mut failed = 0;
    for &(name, check, model) in &checks {
        println!("interop: {name}");
        let started = Instant::now();
        let result = check(model);
        let took = started.elapsed().as_secs_f64();
        match result {
            Ok(summary) => println!("interop: ok ({took:.1} s): {name}: {summary}"),
            Err(why) => {
                failed += 1;
                eprintln!("interop: FAILED ({took:.1} s): {name}: {why}");
            }
        }
    }
    if failed > 0 {
        eprintln!("interop: {failed} of {} checks FAILED", checks.len());
        std::process::exit(1);
    }
    println!("interop: all {} checks passed", checks.len());
}

/// Passes when `got` is `expected`, printing it; else says both.
pub fn expect<T: PartialEq + std::fmt::Debug + ?Sized>(
    what: &str,
    got: &T,
    expected: &T,
) -> Result<(), String> {
    if got == expected {
        println!("interop:   {what}: {got:?}");
        return Ok(());
    }
    Err(format!("{what}: {got:?}, expected {expected:?}"))
}
