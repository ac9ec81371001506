// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The translation client (`translation::ChatClient`) against the chat
//! server double (`common::chat_double`): what it asks, how it reads plain
//! and streamed answers, which answers are errors and what their texts
//! tell the user, and failover over the servers of `translate-url`.

#![cfg(feature = "translate")]

mod common;

use std::time::{Duration, Instant};

use common::chat_double::{ChatDouble, ChatFaults, SERVED_MODEL};
use gstvoxtralrt::translation::key::{KEY_VAR, OPENAI_KEY_VAR};
use gstvoxtralrt::translation::{
    ApiKey, ChatClient, ChatConfig, Error, History, Language, Translation,
};

const UNIT: &str = "Good evening, and welcome to the panel.";

fn config(stream: bool) -> ChatConfig {
    ChatConfig {
        stream,
        key: ApiKey::none(),
        timeout: Duration::from_secs(5),
        ..ChatConfig::new(SERVED_MODEL)
    }
}

fn spanish() -> Language {
    Language::parse("es").unwrap()
}

fn client(urls: &str, config: ChatConfig) -> ChatClient {
    ChatClient::new(urls, config).unwrap()
}

fn translate(client: &ChatClient, text: &str) -> Result<Translation, Error> {
    client.translate(&spanish(), &History::new(0), text)
}

/// The error of translating [`UNIT`] on `double`, asked `stream`ed or not.
fn failure(double: &ChatDouble, stream: bool) -> Error {
    match translate(&client(&double.base(), config(stream)), UNIT) {
        Err(e) => e,
        Ok(t) => panic!("{:?} was taken", t.text),
    }
}

#[test]
fn plain_and_streamed_answers_give_the_same_text() {
    let double = ChatDouble::start(ChatFaults::default());
    let plain = translate(&client(&double.base(), config(false)), UNIT).unwrap();
    let streamed = translate(&client(&double.base(), config(true)), UNIT).unwrap();
    assert_eq!(plain.text, format!("[es] {UNIT}"));
    assert_eq!(streamed.text, plain.text);
    assert_eq!(streamed.server, double.base());
    let asked: Vec<bool> = double
        .bodies()
        .iter()
        .map(|b| b["stream"].as_bool().unwrap())
        .collect();
    assert_eq!(asked, [false, true]);
}

#[test]
fn pings_and_the_usage_chunk_are_skipped() {
    let double = ChatDouble::start(ChatFaults {
        pings: true,
        usage_chunk: true,
        ..ChatFaults::default()
    });
    let answer = translate(&client(&double.base(), config(true)), UNIT).unwrap();
    assert_eq!(answer.text, format!("[es] {UNIT}"));
}

#[test]
fn a_cut_stream_is_an_error_not_text() {
    let double = ChatDouble::start(ChatFaults {
        cut_stream: true,
        ..ChatFaults::default()
    });
    let error = failure(&double, true);
    assert!(matches!(error, Error::Cut { .. }), "{error:?}");
    assert!(error.to_string().contains(&double.base()), "{error}");
    assert!(
        error.to_string().contains("broke off its answer"),
        "{error}"
    );
}

#[test]
fn an_empty_answer_is_an_error_streamed_or_not() {
    for answer in ["", "  \n "] {
        let double = ChatDouble::start(ChatFaults {
            answer: Some(answer.into()),
            ..ChatFaults::default()
        });
        for stream in [false, true] {
            let error = failure(&double, stream);
            assert!(matches!(error, Error::Empty { .. }), "{error:?}");
            assert!(
                error.to_string().contains("without a translation"),
                "{error}"
            );
        }
    }
}

#[test]
fn a_translation_cut_at_the_token_limit_is_an_error() {
    let double = ChatDouble::start(ChatFaults {
        finish_length: true,
        ..ChatFaults::default()
    });
    for stream in [false, true] {
        let error = failure(&double, stream);
        assert!(matches!(error, Error::TooLong { .. }), "{error:?}");
        assert!(error.to_string().contains("token limit"), "{error}");
    }
}

#[test]
fn a_refused_key_names_the_environment_variable() {
    let double = ChatDouble::start(ChatFaults {
        api_key: Some("sk-right".into()),
        ..ChatFaults::default()
    });
    let error = failure(&double, true);
    assert!(
        matches!(error, Error::Unauthorized { status: 401, .. }),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("no API key was sent"), "{text}");
    assert!(text.contains(KEY_VAR), "{text}");

    let from_openai = ApiKey::from_vars(|name| (name == OPENAI_KEY_VAR).then(|| "sk-wrong".into()));
    let wrong = ChatConfig {
        key: from_openai,
        ..config(true)
    };
    let text = translate(&client(&double.base(), wrong), UNIT)
        .unwrap_err()
        .to_string();
    assert!(text.contains("came from OPENAI_API_KEY"), "{text}");
    assert!(!text.contains("sk-wrong"), "{text}");
}

#[test]
fn the_right_key_goes_as_a_bearer_token() {
    let double = ChatDouble::start(ChatFaults {
        api_key: Some("sk-right".into()),
        ..ChatFaults::default()
    });
    let keyed = ChatConfig {
        key: ApiKey::given("sk-right"),
        ..config(false)
    };
    translate(&client(&double.base(), keyed), UNIT).unwrap();
    let request = double.requests().pop().unwrap();
    assert_eq!(request.authorization.as_deref(), Some("Bearer sk-right"));
    assert_eq!(request.path, "/v1/chat/completions");
}

#[test]
fn an_unknown_model_is_named() {
    let double = ChatDouble::start(ChatFaults {
        served_model: Some("qwen3-8b".into()),
        ..ChatFaults::default()
    });
    let error = failure(&double, true);
    assert!(matches!(error, Error::UnknownModel { .. }), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains(&format!("does not serve the model '{SERVED_MODEL}'")),
        "{text}"
    );
    assert!(text.contains(&double.base()), "{text}");
}

#[test]
fn a_wrong_path_is_not_taken_for_an_unknown_model() {
    let double = ChatDouble::start(ChatFaults::default());
    let root = double.base().trim_end_matches("/v1").to_owned();
    let error = translate(&client(&root, config(false)), UNIT).unwrap_err();
    assert!(matches!(error, Error::NoEndpoint { .. }), "{error:?}");
    assert!(error.to_string().contains("API base"), "{error}");
}

#[test]
fn a_failing_server_hands_over_to_the_next_which_later_requests_start_from() {
    let failing = ChatDouble::start(ChatFaults {
        fail_first: usize::MAX,
        ..ChatFaults::default()
    });
    let working = ChatDouble::start(ChatFaults::default());
    let client = client(
        &format!("{},{}", failing.base(), working.base()),
        config(true),
    );
    let first = translate(&client, "one.").unwrap();
    assert_eq!(
        (first.text.as_str(), first.server.clone()),
        ("[es] one.", working.base())
    );
    let second = translate(&client, "two.").unwrap();
    assert_eq!(second.server, working.base());
    assert_eq!(
        failing.requests().len(),
        1,
        "the failed server was asked again"
    );
    assert_eq!(working.requests().len(), 2);
}

#[test]
fn a_server_that_recovers_answers_again() {
    let double = ChatDouble::start(ChatFaults {
        fail_first: 1,
        ..ChatFaults::default()
    });
    let client = client(&double.base(), config(true));
    let error = translate(&client, UNIT).unwrap_err();
    assert!(
        matches!(error, Error::ServerFailure { status: 500, .. }),
        "{error:?}"
    );
    assert!(error.is_retryable());
    assert!(error.to_string().contains("EngineCore"), "{error}");
    assert_eq!(
        translate(&client, UNIT).unwrap().text,
        format!("[es] {UNIT}")
    );
}

#[test]
fn when_every_server_fails_each_is_named() {
    let gone = ChatDouble::start(ChatFaults::default());
    let gone_base = gone.base();
    drop(gone);
    let failing = ChatDouble::start(ChatFaults {
        fail_first: usize::MAX,
        ..ChatFaults::default()
    });
    let client = client(&format!("{gone_base},{}", failing.base()), config(true));
    let error = translate(&client, UNIT).unwrap_err();
    let Error::NoServer { failures } = &error else {
        panic!("{error:?}");
    };
    assert!(
        matches!(failures[0], Error::Unreachable { .. }),
        "{failures:?}"
    );
    assert!(
        matches!(failures[1], Error::ServerFailure { .. }),
        "{failures:?}"
    );
    let text = error.to_string();
    assert!(
        text.contains(&gone_base) && text.contains(&failing.base()),
        "{text}"
    );
}

#[test]
fn a_slow_server_times_out_as_unreachable() {
    let double = ChatDouble::start(ChatFaults {
        delay: Some(Duration::from_secs(3)),
        ..ChatFaults::default()
    });
    let quick = ChatConfig {
        timeout: Duration::from_millis(500),
        ..config(true)
    };
    let started = Instant::now();
    let error = translate(&client(&double.base(), quick), UNIT).unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert!(matches!(error, Error::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains("500ms"), "{error}");
}

#[test]
fn the_user_message_is_exactly_the_unit_and_the_system_message_names_the_language() {
    let double = ChatDouble::start(ChatFaults::default());
    translate(&client(&double.base(), config(true)), UNIT).unwrap();
    let body = double.bodies().pop().unwrap();
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "system");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains("Spanish (es)"), "{system}");
    assert!(system.contains("translation only"), "{system}");
    assert_eq!(messages[1]["role"], "user");
    assert_eq!(messages[1]["content"], UNIT);
}

#[test]
fn the_request_asks_for_temperature_zero_from_the_model() {
    let double = ChatDouble::start(ChatFaults::default());
    translate(&client(&double.base(), config(false)), UNIT).unwrap();
    let body = double.bodies().pop().unwrap();
    assert_eq!(body["temperature"].as_f64(), Some(0.0));
    assert_eq!(body["model"], SERVED_MODEL);
}

#[test]
fn earlier_units_and_their_translations_come_as_context() {
    let double = ChatDouble::start(ChatFaults::default());
    let client = client(&double.base(), config(true));
    let french = Language::parse("fr-FR").unwrap();
    let mut history = History::new(1);
    for unit in ["One.", "Two.", "Three."] {
        let answer = client.translate(&french, &history, unit).unwrap();
        assert_eq!(answer.text, format!("[fr-FR] {unit}"));
        history.push(unit, &answer.text);
    }
    let body = double.bodies().pop().unwrap();
    let said: Vec<(&str, &str)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "Two."),
            ("assistant", "[fr-FR] Two."),
            ("user", "Three.")
        ]
    );
}
