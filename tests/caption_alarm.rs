// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The missing-caption alarm (issue 48 §5): while the voice detector hears
//! speech and no word leaves for `caption-alarm`, a WARNING, a
//! `voxtralrt-caption-alarm` message (`active`, `since`, `reason`) and
//! `caption-alarm` in stats; the next word ends it (`active=false`). The
//! same per translate pad when its language's text stops while the source
//! words go on. Faults: a model and a vLLM session that go silent over
//! speech, a chat server that dies; and no alarm on a normal run or over
//! silence. Speech is espeak-ng's.

// The tiny model runs on the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use common::recognizers::MuteAfter;
use common::remote::Run;
use common::speech::{speech, transcribe_wav as run};
use common::vllm_double::{Double, Faults, SERVED_MODEL};
use gst::prelude::*;

const ALARM: &str = "voxtralrt-caption-alarm";

fn tiny() -> String {
    format!("model-path={}", common::tiny_model().display())
}

/// The alarm's messages: (active, since, running-time, reason).
fn alarms(run: &Run) -> Vec<(bool, u64, u64, String)> {
    run.messages_named(ALARM)
        .iter()
        .map(|m| {
            (
                m.get::<bool>("active").unwrap(),
                m.get::<u64>("since").unwrap(),
                m.get::<u64>("running-time").unwrap(),
                m.get::<String>("reason").unwrap(),
            )
        })
        .collect()
}

fn alarm_warnings(run: &Run) -> usize {
    run.warnings
        .iter()
        .filter(|w| w.contains("caption-alarm"))
        .count()
}

/// The alarm was raised once, `window` of talk after the last word left:
/// its `since` is no earlier than the last word, and it comes at least
/// `window` after that, and at most the word's lag (the 1.5 s latency) and
/// 1.5 s of slack later (measured: 1.2 s local, 1.9 s vLLM).
fn check_raised_after_the_last_word(run: &Run, window_ms: u64, reason: &str) {
    let alarms = alarms(run);
    let [(true, since, at, said)] = &alarms[..] else {
        panic!("one alarm expected: {alarms:?}");
    };
    let last = run.words.last().expect("words before the silence").0;
    assert!(*since >= last, "captions stopped at {since}, before {last}");
    let window = window_ms * 1_000_000;
    eprintln!(
        "last word at {} ms, captions stopped at {} ms, alarm at {} ms",
        last / 1_000_000,
        since / 1_000_000,
        at / 1_000_000
    );
    assert!(
        *at >= since + window,
        "raised at {at}, before {since} + {window}"
    );
    assert!(
        *at <= since + window + 3_000_000_000,
        "raised at {at}, long after {since} + {window}"
    );
    assert_eq!(said, reason);
    assert_eq!(alarm_warnings(run), 1, "{:?}", run.warnings);
    let stats = run.stats.as_ref().unwrap();
    assert!(stats.get::<bool>("caption-alarm").unwrap(), "{stats:?}");
    assert_eq!(stats.get::<String>("caption-alarm-reason").unwrap(), reason);
}

#[test]
fn a_model_that_falls_silent_over_speech_raises_the_alarm_its_window_after_the_last_word() {
    let dir = common::scratch_dir("alarm-mute");
    let wav = speech(&dir);
    // Silent for good after 3 s of the 13 s of speech; no watchdog.
    let run = run(
        &wav,
        &format!("{} stall-timeout=0 caption-alarm=3000", tiny()),
        Some(Box::new(|inner| {
            Box::new(MuteAfter::new(inner, 3 * 16_000, true))
        })),
    );
    check_raised_after_the_last_word(&run, 3000, "the model is silent over speech");
}

#[test]
fn a_vllm_session_that_goes_silent_over_speech_raises_the_alarm_its_window_after_the_last_word() {
    // The double writes only blanks from 4 s into the utterance on.
    let faults = Faults {
        blank_after_steps: Some(4_000 / 80),
        ..Faults::default()
    };
    let server = Double::start(common::tiny_model(), faults);
    let dir = common::scratch_dir("alarm-vllm");
    let run = run(
        &speech(&dir),
        &format!(
            "engine=vllm url={} model={SERVED_MODEL} stall-timeout=0 caption-alarm=3000",
            server.url()
        ),
        None,
    );
    check_raised_after_the_last_word(&run, 3000, "the model is silent over speech");
}

#[test]
fn words_that_flow_again_end_the_alarm() {
    // Silent after 3 s until the watchdog restarts it (2 s of speech): the
    // alarm (1 s) comes first, and the words after the restart end it.
    let dir = common::scratch_dir("alarm-recovers");
    let run = run(
        &speech(&dir),
        &format!("{} stall-timeout=2000 caption-alarm=1000", tiny()),
        Some(Box::new(|inner| {
            Box::new(MuteAfter::new(inner, 3 * 16_000, false))
        })),
    );
    let alarms = alarms(&run);
    let [(true, since, raised, reason), (false, same_since, cleared, _)] = &alarms[..] else {
        panic!("an alarm and its end expected: {alarms:?}");
    };
    assert_eq!(since, same_since);
    assert!(cleared > raised, "{alarms:?}");
    assert_eq!(reason, "the model is silent over speech");
    assert!(
        run.words.iter().any(|w| w.0 >= *cleared),
        "no words after the alarm's end: {:?}",
        run.words
    );
    let stats = run.stats.as_ref().unwrap();
    assert!(!stats.get::<bool>("caption-alarm").unwrap());
    assert_eq!(stats.get::<String>("caption-alarm-reason").unwrap(), "");
    assert_eq!(run.stat("stalls"), 1, "{stats:?}");
}

#[test]
fn a_normal_run_and_long_silence_raise_no_alarm() {
    let dir = common::scratch_dir("alarm-none");
    let wav = speech(&dir);
    // The default (10 s) and a short window, over speech the model writes.
    for props in ["", "caption-alarm=3000"] {
        let run = run(&wav, &format!("{} {props}", tiny()), None);
        assert!(run.words.len() > 10, "{props}: {:?}", run.words);
        assert!(alarms(&run).is_empty(), "{props}: {:?}", alarms(&run));
        assert_eq!(alarm_warnings(&run), 0, "{props}: {:?}", run.warnings);
    }
    // A minute of silence to a model that never writes.
    let silence = dir.join("silence.wav");
    common::write_wav(&silence, &vec![0.0; 60 * 16_000]);
    let run = run(
        &silence,
        &format!("{} caption-alarm=1000", tiny()),
        Some(Box::new(|inner| Box::new(MuteAfter::new(inner, 0, true)))),
    );
    assert!(alarms(&run).is_empty(), "{:?}", alarms(&run));
    assert_eq!(alarm_warnings(&run), 0, "{:?}", run.warnings);
}

#[test]
fn caption_alarm_counts_milliseconds_and_refuses_what_cannot_be() {
    common::init_plugin();
    for factory in ["voxtralrttranscriber", "voxtralrtsink"] {
        let element = gst::ElementFactory::make(factory).build().unwrap();
        assert_eq!(element.property::<u32>("caption-alarm"), 10_000);
        element.set_property("caption-alarm", 0u32);
        assert_eq!(element.property::<u32>("caption-alarm"), 0);
        element.set_property("caption-alarm", 30_000u32);
        assert_eq!(element.property::<u32>("caption-alarm"), 30_000);
        // Seconds by mistake: refused with a WARNING, the value stays.
        let pipeline = gst::Pipeline::new();
        pipeline.add(&element).unwrap();
        element.set_property("caption-alarm", 10u32);
        assert_eq!(element.property::<u32>("caption-alarm"), 30_000);
        let bus = pipeline.bus().unwrap();
        let warning = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(1),
                &[gst::MessageType::Warning],
            )
            .unwrap_or_else(|| panic!("{factory}: a WARNING"));
        let gst::MessageView::Warning(w) = warning.view() else {
            unreachable!()
        };
        let text = w.error().to_string();
        assert!(
            text.contains("caption-alarm counts milliseconds") && text.contains("10000 for 10 s"),
            "{text}"
        );
        // Beyond an hour: GLib refuses it, the value stays.
        let spec = element.find_property("caption-alarm").unwrap();
        let spec = spec.downcast_ref::<gst::glib::ParamSpecUInt>().unwrap();
        assert_eq!(spec.maximum(), 3_600_000);
    }
}

#[cfg(feature = "translate")]
mod translation {
    use super::*;
    use common::chat_double::{ChatDouble, ChatFaults, SERVED_MODEL as CHAT_MODEL};
    use common::translating::{pipeline, record};

    /// Tone words in units 1.6 s apart (a word per frame of tone): frames
    /// of each unit.
    fn unit(first: usize) -> [usize; 3] {
        [first, first + 1, first + 2]
    }

    #[test]
    fn a_chat_server_that_dies_raises_the_alarm_of_its_language() {
        let mut double = ChatDouble::start(ChatFaults::default());
        let pipeline = pipeline(
            &double.base(),
            &format!("translate-model={CHAT_MODEL} caption-alarm=1000"),
            "es",
            false,
        );
        let run = std::sync::Arc::new(std::sync::Mutex::new(Run::default()));
        let r = run.clone();
        pipeline.bus().unwrap().set_sync_handler(move |_, msg| {
            r.lock().unwrap().record(msg);
            gst::BusSyncReply::Pass
        });
        let translated = record(
            &pipeline
                .by_name("translated")
                .unwrap()
                .static_pad("sink")
                .unwrap(),
        );
        pipeline.set_state(gst::State::Playing).unwrap();
        let src = pipeline.by_name("src").unwrap();
        // Eight units; the server dies once the first two are translated.
        let frames: Vec<usize> = (0..8).flat_map(|k| unit(10 + 20 * k)).collect();
        let audio = common::tone_audio(170, &frames);
        let (first, rest) = audio.split_at(50 * common::FRAME);
        let push = |samples: &[f32], from_frame: usize| {
            let mut buffer = gst::Buffer::from_mut_slice(common::to_f32le(samples));
            let b = buffer.get_mut().unwrap();
            b.set_pts(gst::ClockTime::from_mseconds(80 * from_frame as u64));
            let _ = src.emit_by_name::<gst::FlowReturn>("push-buffer", &[&buffer]);
        };
        push(first, 0);
        assert!(
            common::process::wait_until(std::time::Duration::from_secs(30), || {
                translated.lock().unwrap().len() >= 2
            }),
            "the first two units were not translated"
        );
        double.kill();
        push(rest, 50);
        let _ = src.emit_by_name::<gst::FlowReturn>("end-of-stream", &[]);
        common::expect_eos(&pipeline);
        let stats = pipeline
            .by_name("t")
            .unwrap()
            .property::<gst::Structure>("stats");
        pipeline.set_state(gst::State::Null).unwrap();
        let run = run.lock().unwrap();
        let alarms = run.messages_named(ALARM);
        let [alarm] = alarms[..] else {
            panic!("one alarm expected: {alarms:?}");
        };
        assert_eq!(alarm.get::<String>("pad").unwrap(), "translate_src_0");
        assert_eq!(alarm.get::<String>("language-code").unwrap(), "es");
        assert!(alarm.get::<bool>("active").unwrap());
        let reason = alarm.get::<String>("reason").unwrap();
        assert!(
            reason.starts_with("translations into Spanish (es) fail"),
            "{reason}"
        );
        // The first unit after the death (frame 50 of tone, 0.48 s of delay
        // earlier) is where the Spanish stopped; the source went on a
        // second past it.
        let since = alarm.get::<u64>("since").unwrap();
        let at = alarm.get::<u64>("running-time").unwrap();
        assert!(
            (common::truth(50) - 100_000_000..=common::truth(50) + 100_000_000).contains(&since),
            "since {since}"
        );
        assert!(at >= since + 1_000_000_000, "{at}");
        let counts = common::translating::counts(&stats);
        assert!(counts.get::<bool>("caption-alarm").unwrap(), "{counts:?}");
        assert_eq!(
            counts.get::<String>("caption-alarm-reason").unwrap(),
            reason
        );
        assert_eq!(
            run.warnings
                .iter()
                .filter(|w| w.contains("caption-alarm"))
                .count(),
            1,
            "{:?}",
            run.warnings
        );
    }

    #[test]
    fn live_a_chat_server_that_stops_answering_raises_the_alarm_until_it_answers() {
        // Every answer takes 8 s: live, the first unit (its words end at
        // 0.56 s) is owed from there, and the source words go on past
        // 1.56 s; the last answer ends the alarm.
        let double = ChatDouble::start(ChatFaults {
            delay: Some(std::time::Duration::from_secs(8)),
            ..ChatFaults::default()
        });
        let outcome = common::translating::run_with(
            &double.base(),
            &format!("overload=queue translate-model={CHAT_MODEL} caption-alarm=1000"),
            "es",
            true,
        );
        let raised: Vec<&String> = outcome
            .warnings
            .iter()
            .filter(|w| w.contains("caption-alarm"))
            .collect();
        // Raised again after the first answer while the next unit is
        // still owed: each time for the same cause.
        assert!(!raised.is_empty(), "{:?}", outcome.warnings);
        for warning in raised {
            assert!(
                warning.starts_with("translate_src_0: captions in Spanish (es) are missing")
                    && warning.contains("the chat server has not answered"),
                "{warning}"
            );
        }
        assert_eq!(outcome.translated.len(), 3, "{:?}", outcome.translated);
        let counts = common::translating::counts(&outcome.stats);
        assert!(!counts.get::<bool>("caption-alarm").unwrap(), "{counts:?}");
        assert_eq!(counts.get::<u64>("failures").unwrap(), 0);
    }
}
