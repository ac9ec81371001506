// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! `translate_src_%u` pads (issue 38, text output): the transcript's words
//! gathered into units, translated by a chat server (the double for
//! content and faults, vLLM for the protocol), each
//! unit one buffer timed from its first word's start to its last word's
//! end; the src pad's words never wait for it.

#![cfg(all(feature = "local", feature = "translate"))]

mod common;

use std::time::Duration;

use common::chat_double::{ChatDouble, ChatFaults, SERVED_MODEL};
use common::remote::F32_CAPS;
use common::tone_model;
use common::translating::{counts, run_with, units, Outcome, FRAMES};
use common::vllm::{installed, Server, CHAT_MODEL};
use gstvoxtralrt::translation::{ApiKey, ChatClient, ChatConfig, Error, History, Language};

/// The tone fixture's words through a transcriber with a translate pad
/// for `language` on `url` (the double's model), not live.
fn run(url: &str, language: &str) -> Outcome {
    run_with(
        url,
        &format!("translate-model={SERVED_MODEL}"),
        language,
        false,
    )
}

/// Live: pushed in real time, `overload=queue` (the words are not the
/// subject), with `props` for the translation.
fn run_live(url: &str, props: &str) -> Outcome {
    let props = format!("overload=queue translate-model={SERVED_MODEL} {props}");
    run_with(url, &props, "es", true)
}

#[test]
fn a_file_gives_one_translated_buffer_per_unit_timed_by_its_words() {
    let double = ChatDouble::start(ChatFaults::default());
    let outcome = run(&double.base(), "es");
    assert_eq!(outcome.words.len(), FRAMES.len(), "{:?}", outcome.words);
    let expected: Vec<(u64, u64, String)> = units(&outcome.words)
        .into_iter()
        .map(|(start, end, text)| (start, end - start, format!("[es] {text}")))
        .collect();
    assert_eq!(expected.len(), 3);
    assert_eq!(outcome.translated, expected);
    let counts = counts(&outcome.stats);
    assert_eq!(counts.get::<u64>("translated").unwrap(), 3);
    assert_eq!(counts.get::<u64>("failures").unwrap(), 0);
    // One request per unit, its text alone in the user message.
    let users: Vec<String> = double
        .bodies()
        .iter()
        .map(|b| {
            let messages = b["messages"].as_array().unwrap();
            messages.last().unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(users, ["x x x", "x x", "x"]);
}

/// The real chat server of scripts/servers/vllm-server (vLLM, `--api-key`): the
/// protocol and its faults are vLLM's own; its made weights answer
/// "hola mundo" to every prompt, so content is the double's to check.
#[test]
fn a_real_vllm_chat_server_translates_every_unit_of_a_file() {
    const KEY: &str = "sk-chat-test";
    if !installed("a_real_vllm_chat_server_translates_every_unit_of_a_file") {
        return;
    }
    let server = Server::chat(&["--api-key", KEY]);
    let spanish = Language::parse("es").unwrap();
    let ask = |model: &str, key: ApiKey, stream: bool| {
        let config = ChatConfig {
            stream,
            key,
            ..ChatConfig::new(model)
        };
        ChatClient::new(&server.base(), config).unwrap().translate(
            &spanish,
            &History::new(0),
            "Good evening.",
        )
    };
    for stream in [true, false] {
        let answer = ask(CHAT_MODEL, ApiKey::given(KEY), stream);
        assert_eq!(answer.unwrap().text, "hola mundo", "stream: {stream}");
    }
    let unknown = ask("no-such-model", ApiKey::given(KEY), true).unwrap_err();
    assert!(
        matches!(&unknown, Error::UnknownModel { model, .. } if model == "no-such-model"),
        "{unknown:?}"
    );
    let refused = ask(CHAT_MODEL, ApiKey::none(), true).unwrap_err();
    assert!(
        matches!(refused, Error::Unauthorized { status: 401, .. }),
        "{refused:?}"
    );

    let outcome = run_with(
        &server.base(),
        &format!("translate-model={CHAT_MODEL} translate-api-key={KEY}"),
        "es",
        false,
    );
    let expected: Vec<(u64, u64, String)> = units(&outcome.words)
        .into_iter()
        .map(|(start, end, _)| (start, end - start, "hola mundo".to_owned()))
        .collect();
    assert_eq!(expected.len(), 3, "{:?}", outcome.words);
    assert_eq!(outcome.translated, expected, "{}", server.log_text());
    assert_eq!(counts(&outcome.stats).get::<u64>("failures").unwrap(), 0);

    // Live: the same units, each sent as it closes (streamed, paced).
    let live = run_with(
        &server.base(),
        &format!("overload=queue translate-model={CHAT_MODEL} translate-api-key={KEY}"),
        "es",
        true,
    );
    let texts: Vec<&str> = live.translated.iter().map(|(.., t)| t.as_str()).collect();
    assert_eq!(texts, ["hola mundo"; 3], "{}", server.log_text());
    let live_counts = counts(&live.stats);
    assert_eq!(live_counts.get::<u64>("failures").unwrap(), 0);
    assert_eq!(live_counts.get::<u64>("requests").unwrap(), 3);
}

#[test]
fn the_src_pads_words_are_the_same_with_a_slow_or_dead_server() {
    let plain = run("http://127.0.0.1:9/v1", "es");
    assert_eq!(plain.words.len(), FRAMES.len());
    assert!(plain.translated.is_empty(), "{:?}", plain.translated);
    let counts = counts(&plain.stats);
    assert_eq!(
        counts.get::<u64>("failures").unwrap(),
        3,
        "every unit failed"
    );
    assert!(
        plain.warnings.iter().any(|w| w.contains("127.0.0.1:9")),
        "the WARNING names the server: {:?}",
        plain.warnings
    );
    let slow = ChatDouble::start(ChatFaults {
        delay: Some(Duration::from_millis(300)),
        ..ChatFaults::default()
    });
    let with_slow = run(&slow.base(), "es");
    assert_eq!(
        with_slow.words, plain.words,
        "the same words at the same times"
    );
    assert_eq!(with_slow.translated.len(), 3);
}

#[test]
fn a_malformed_language_code_is_refused_with_a_warning_naming_it() {
    let double = ChatDouble::start(ChatFaults::default());
    let outcome = run(&double.base(), "español");
    assert_eq!(outcome.words.len(), FRAMES.len());
    assert!(outcome.translated.is_empty());
    assert!(
        outcome.warnings.iter().any(|w| w.contains("español")),
        "{:?}",
        outcome.warnings
    );
    assert!(double.bodies().is_empty(), "nothing is sent");
}

#[test]
fn live_a_translate_pad_answers_latency_with_translate_latency_added() {
    common::init_plugin();
    let double = ChatDouble::start(ChatFaults::default());
    let pipeline = gst::parse::launch(&format!(
        "appsrc is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 translate-url={} \
         translate-model={SERVED_MODEL} translate-latency=700 \
         translate_src_0::language-code=es ! fakesink \
         t.translate_src_0 ! fakesink",
        tone_model(),
        double.base()
    ))
    .unwrap();
    let (src_live, src_min) = common::latency_of_pad(&pipeline, "src");
    let (live, min) = common::latency_of_pad(&pipeline, "translate_src_0");
    assert!(src_live && live);
    assert_eq!(min, src_min + gst::ClockTime::from_mseconds(700));
    assert_eq!(
        src_min,
        src_latency_without_translation(),
        "the src pad's answer does not change with a translate pad"
    );
}

/// The src pad's LATENCY answer, live, with no translation at all.
fn src_latency_without_translation() -> gst::ClockTime {
    let pipeline = gst::parse::launch(&format!(
        "appsrc is-live=true format=time caps={F32_CAPS} ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink",
        tone_model(),
    ))
    .unwrap();
    common::latency_of_pad(&pipeline, "src").1
}

/// Each unit's translation came, in order, never before its words:
/// returns the units.
fn assert_every_unit_translated_in_order(outcome: &Outcome) -> Vec<(u64, u64, String)> {
    let translated = &outcome.translated;
    let units = units(&outcome.words);
    assert_eq!(translated.len(), units.len(), "{translated:?}");
    for ((pts, _, text), (start, _, source)) in translated.iter().zip(&units) {
        assert_eq!(text, &format!("[es] {source}"));
        assert!(
            *pts >= *start,
            "never earlier than its words: {translated:?}"
        );
    }
    assert!(
        translated.windows(2).all(|w| w[0].0 <= w[1].0),
        "{translated:?}"
    );
    units
}

#[test]
fn live_with_a_slow_server_the_words_are_on_time_and_each_unit_is_translated_in_order() {
    let slow = ChatDouble::start(ChatFaults {
        delay: Some(Duration::from_millis(300)),
        ..ChatFaults::default()
    });
    let outcome = run_live(&slow.base(), "");
    assert_eq!(outcome.words.len(), FRAMES.len(), "{:?}", outcome.words);
    assert_every_unit_translated_in_order(&outcome);
}

#[test]
fn live_a_translation_later_than_translate_latency_goes_out_where_the_pad_stands() {
    // The server takes 1.5 s, translate-latency is 0: every unit's
    // answer comes after its time. GAPs move the pad on meanwhile; each
    // late unit goes out at the pad's position, never earlier, counted,
    // and the run of late ones is warned about once.
    let slow = ChatDouble::start(ChatFaults {
        delay: Some(Duration::from_millis(1500)),
        ..ChatFaults::default()
    });
    let outcome = run_live(&slow.base(), "translate-latency=0");
    let units = assert_every_unit_translated_in_order(&outcome);
    let translated = &outcome.translated;
    let late = translated
        .iter()
        .zip(&units)
        .filter(|((pts, ..), (start, ..))| pts > start)
        .count();
    assert_eq!(
        late,
        units.len(),
        "every unit late: {translated:?} {units:?}"
    );
    assert_eq!(
        counts(&outcome.stats).get::<u64>("retimed").unwrap(),
        late as u64
    );
    let late_warnings: Vec<&String> = outcome
        .warnings
        .iter()
        .filter(|w| w.contains("after its time had passed"))
        .collect();
    assert_eq!(
        late_warnings.len(),
        1,
        "one run of late units: {late_warnings:?}"
    );
    let timeline = &outcome.timeline;
    assert!(
        timeline.iter().any(|(kind, _)| *kind == "gap"),
        "GAPs while a unit is in flight: {timeline:?}"
    );
    assert!(
        timeline.windows(2).all(|w| w[0].1 <= w[1].1),
        "the pad's time never goes back: {timeline:?}"
    );
}

/// docs/translation.md's line, run as written against the double: a file
/// gives an English SRT and a Spanish one, each Spanish cue a unit's
/// translation starting at its first English word.
#[test]
fn the_guides_line_writes_a_translated_srt_beside_the_transcript() {
    let double = ChatDouble::start(ChatFaults::default());
    let line = common::doc_launch_line("srtenc ! filesink location=sample.es.srt")
        .line
        .replace("http://127.0.0.1:8080/v1", &double.base())
        .replace("$TRANSLATE_MODEL", SERVED_MODEL);
    let dir = common::readme_dir("translation-guide");
    common::run_readme_line(&line, &dir);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let english = common::readback::srt_cues(&read("sample.en.srt"));
    let spanish = common::readback::srt_cues(&read("sample.es.srt"));
    assert!(
        !english.is_empty() && !spanish.is_empty(),
        "{english:?} {spanish:?}"
    );
    assert_eq!(spanish.len(), double.requests().len(), "one cue per unit");
    // The double's translation is "[es] " and the unit's words: together,
    // the units are the transcript, in order, none lost or repeated.
    let words = |cues: &[(u64, String)], prefix: &str| -> Vec<String> {
        cues.iter()
            .flat_map(|(_, t)| t.strip_prefix(prefix).unwrap_or(t).split_whitespace())
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(words(&spanish, "[es] "), words(&english, ""));
    assert_eq!(
        spanish[0].0, english[0].0,
        "the first unit starts with the first word"
    );
    assert!(spanish.windows(2).all(|w| w[0].0 < w[1].0), "{spanish:?}");
}

#[test]
fn a_long_translation_is_split_into_cues_of_the_style_within_its_units_time() {
    let answer = "Buenas noches y bienvenidos a las últimas noticias. Esta noche miramos el \
                  tiempo, las carreteras y los mercados de todo el país.";
    let double = ChatDouble::start(ChatFaults {
        answer: Some(answer.to_owned()),
        ..ChatFaults::default()
    });
    // broadcast, the default: a buffer per unit.
    let plain = run(&double.base(), "es");
    assert_eq!(plain.translated.len(), 3, "{:?}", plain.translated);
    assert!(plain.translated.iter().all(|t| t.2 == answer));
    let styled = run_with(
        &double.base(),
        &format!("translate-model={SERVED_MODEL} subtitle-style=netflix"),
        "es",
        false,
    );
    let units = units(&styled.words);
    assert_eq!(units.len(), 3);
    for (start, end, _) in units {
        let cues: Vec<&(u64, u64, String)> = styled
            .translated
            .iter()
            .filter(|(pts, _, _)| (start..end).contains(pts))
            .collect();
        assert!(cues.len() >= 2, "{cues:?}");
        assert_eq!(cues[0].0, start, "the first cue starts with the unit");
        let last = cues.last().unwrap();
        assert_eq!(last.0 + last.1, end, "the last cue ends with the unit");
        for cue in &cues {
            let lines: Vec<&str> = cue.2.lines().collect();
            assert!(lines.len() <= 2 && lines.iter().all(|l| l.chars().count() <= 42));
        }
        let words: Vec<&str> = cues.iter().flat_map(|c| c.2.split_whitespace()).collect();
        assert_eq!(
            words.join(" "),
            answer.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
}
