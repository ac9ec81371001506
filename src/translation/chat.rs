// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The client of an OpenAI-compatible `/v1/chat/completions` endpoint
//! (vLLM, llama.cpp's server, llama-cpp-python, Ollama, OpenAI): one
//! blocking request per unit, on ureq, over the servers of `translate-url`
//! in failover order.
//!
//! An answer is read by its Content-Type: server-sent events
//! ([`super::sse`]) or one JSON completion (`choices[0].message.content`),
//! whichever was asked for, as a server may ignore `stream`. Its text is
//! trimmed; an empty one is an error. Redirects are not followed, so the
//! key goes to the listed servers only.

use std::io::BufReader;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::key::ApiKey;
use super::language::Language;
use super::prompt::{request_body, History};
use super::servers::Servers;
use super::sse::{error_text, read_stream_with, AnswerFault};
use super::Error;

/// How requests are made.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// The served model's name (vLLM: `--served-model-name`).
    pub model: String,
    /// Ask for a streamed answer (the first words arrive sooner, and a
    /// dead server is seen mid-answer).
    pub stream: bool,
    /// The longest a connection takes to open.
    pub connect_timeout: Duration,
    /// The longest a whole request takes, answer read, on one server.
    pub timeout: Duration,
    pub key: ApiKey,
}

/// Defaults: a connection opens within 2 s on a working network, and a
/// unit's translation takes well under 10 s on any server fit for live
/// captions.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

impl ChatConfig {
    /// Streamed, the default timeouts, the key of the environment.
    pub fn new(model: &str) -> ChatConfig {
        ChatConfig {
            model: model.to_owned(),
            stream: true,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            key: ApiKey::from_env(),
        }
    }
}

/// A translation, the server that gave it (its base URL, its place in
/// the list) and how long it took there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translation {
    pub text: String,
    pub server: String,
    pub server_index: usize,
    pub timing: AnswerTiming,
}

/// How long an answer took: to its first text, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerTiming {
    pub first: Duration,
    pub total: Duration,
}

/// A request's outcome, and the servers that failed it on the way.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub result: Result<Translation, Error>,
    pub failed: Vec<usize>,
}

/// The chat servers of one element. Shared by its languages: requests
/// may come from several threads.
#[derive(Debug)]
pub struct ChatClient {
    servers: Servers,
    agent: ureq::Agent,
    config: ChatConfig,
}

impl ChatClient {
    /// Checks `urls` (translate-url); sends nothing yet.
    pub fn new(urls: &str, config: ChatConfig) -> Result<ChatClient, Error> {
        let servers = Servers::parse(urls, config.key.source())?;
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(config.connect_timeout)
            .timeout(config.timeout)
            .redirects(0)
            .build();
        Ok(ChatClient {
            servers,
            agent,
            config,
        })
    }

    pub fn servers(&self) -> &Servers {
        &self.servers
    }

    /// Translates `text` into `language`, with `history` as the
    /// conversation so far. Tries the servers from the one that answered
    /// last; a retryable failure moves on to the next.
    pub fn translate(
        &self,
        language: &Language,
        history: &History,
        text: &str,
    ) -> Result<Translation, Error> {
        self.translate_from(self.servers.order()[0], language, history, text, |_| {})
            .result
    }

    /// [`ChatClient::translate`], asking server `first` first, then the
    /// others in the list's order from there; `first_text` is called with
    /// the server when an answer's first text comes.
    pub fn translate_from(
        &self,
        first: usize,
        language: &Language,
        history: &History,
        text: &str,
        first_text: impl Fn(usize),
    ) -> Attempt {
        let body = request_body(
            &self.config.model,
            language,
            history,
            text,
            self.config.stream,
        )
        .to_string();
        let mut failures = Vec::new();
        let mut failed = Vec::new();
        for server in self.servers.order_from(first) {
            let start = Instant::now();
            match self.ask(server, &body, || first_text(server)) {
                Ok((text, first)) => {
                    self.servers.answered(server);
                    let translation = Translation {
                        text,
                        server: self.servers.base(server).to_owned(),
                        server_index: server,
                        timing: AnswerTiming {
                            first,
                            total: start.elapsed(),
                        },
                    };
                    return Attempt {
                        result: Ok(translation),
                        failed,
                    };
                }
                Err(e) if e.is_retryable() => {
                    failures.push(e);
                    failed.push(server);
                }
                Err(e) => {
                    return Attempt {
                        result: Err(e),
                        failed,
                    }
                }
            }
        }
        Attempt {
            result: Err(all_failed(failures)),
            failed,
        }
    }

    /// One request to one server: the answer's text, and how long its
    /// first text took to come.
    fn ask(
        &self,
        server: usize,
        body: &str,
        first_text: impl FnOnce(),
    ) -> Result<(String, Duration), Error> {
        let start = Instant::now();
        let base = self.servers.base(server);
        let mut request = self
            .agent
            .post(self.servers.endpoint(server))
            .set("Content-Type", "application/json");
        if self.config.stream {
            request = request.set("Accept", "text/event-stream");
        }
        if let Some(key) = self.config.key.value() {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        let response = match request.send_string(body) {
            Ok(response) => response,
            Err(ureq::Error::Status(status, response)) => {
                let answer = answer_excerpt(&response.into_string().unwrap_or_default());
                return Err(self.status_error(base, status, answer));
            }
            Err(ureq::Error::Transport(transport)) => {
                return Err(self.transport_error(base, &transport))
            }
        };
        let (text, first) = read_answer(response, start, first_text)
            .map_err(|fault| self.fault_error(base, fault))?;
        let text = text.trim();
        if text.is_empty() {
            return Err(Error::Empty {
                server: base.to_owned(),
            });
        }
        Ok((text.to_owned(), first))
    }

    /// An HTTP status other than 2xx, as the error a user can act on.
    fn status_error(&self, base: &str, status: u16, answer: String) -> Error {
        let server = base.to_owned();
        let model = &self.config.model;
        match status {
            401 | 403 => Error::Unauthorized {
                server,
                status,
                source: self.config.key.source(),
            },
            429 | 500..=599 => Error::ServerFailure {
                server,
                status,
                answer,
            },
            _ if is_about_the_model(status, &answer, model) => Error::UnknownModel {
                server,
                model: model.clone(),
                answer,
            },
            404 => Error::NoEndpoint { server, answer },
            _ => Error::Refused {
                server,
                status,
                answer,
            },
        }
    }

    fn transport_error(&self, base: &str, transport: &ureq::Transport) -> Error {
        let detail = if timed_out(transport) {
            format!(
                "no answer within {:?} (connect timeout {:?})",
                self.config.timeout, self.config.connect_timeout
            )
        } else {
            transport.to_string()
        };
        Error::Unreachable {
            server: base.to_owned(),
            detail,
        }
    }

    fn fault_error(&self, base: &str, fault: AnswerFault) -> Error {
        let server = base.to_owned();
        match fault {
            AnswerFault::Malformed(detail) => Error::Malformed { server, detail },
            AnswerFault::Cut(detail) => Error::Cut { server, detail },
            AnswerFault::TimedOut => Error::Unreachable {
                server,
                detail: format!(
                    "the answer was not complete within {:?}",
                    self.config.timeout
                ),
            },
            AnswerFault::Length => Error::TooLong { server },
            AnswerFault::ServerError(message) => Error::ServerFailure {
                server,
                status: 200,
                answer: message,
            },
        }
    }
}

/// The error when no server answered: the one failure itself when there
/// was one server.
fn all_failed(mut failures: Vec<Error>) -> Error {
    if failures.len() == 1 {
        return failures.remove(0);
    }
    Error::NoServer { failures }
}

/// The text of a 200 answer, streamed or not, and how long after `start`
/// its first text came (a plain answer's: when it was read whole).
fn read_answer(
    response: ureq::Response,
    start: Instant,
    first_text: impl FnOnce(),
) -> Result<(String, Duration), AnswerFault> {
    let streamed = response.content_type() == "text/event-stream";
    if streamed {
        let mut first = None;
        let text = read_stream_with(BufReader::new(response.into_reader()), || {
            first = Some(start.elapsed());
            first_text();
        })?;
        return Ok((text, first.unwrap_or_else(|| start.elapsed())));
    }
    let body = response.into_string().map_err(|e| match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => AnswerFault::TimedOut,
        _ => AnswerFault::Cut(format!("the answer broke: {e}")),
    })?;
    Ok((plain_answer(&body)?, start.elapsed()))
}

/// `choices[0].message.content` of a whole chat completion.
fn plain_answer(body: &str) -> Result<String, AnswerFault> {
    let completion: Value = serde_json::from_str(body).map_err(|e| {
        AnswerFault::Malformed(format!(
            "the answer is not JSON ({e}): {}",
            answer_excerpt(body)
        ))
    })?;
    if let Some(error) = completion.get("error") {
        return Err(AnswerFault::ServerError(error_text(error)));
    }
    let choice = completion
        .pointer("/choices/0")
        .ok_or_else(|| AnswerFault::Malformed(format!("no choices in {}", answer_excerpt(body))))?;
    if choice.get("finish_reason").and_then(Value::as_str) == Some("length") {
        return Err(AnswerFault::Length);
    }
    // A null content is an empty answer, found empty by the caller.
    Ok(choice
        .pointer("/message/content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned())
}

/// What an error body says, short: an OpenAI-style `error.message`, a
/// FastAPI `detail`, or the start of the text.
fn answer_excerpt(body: &str) -> String {
    const LONGEST: usize = 300;
    let said = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let field = v
            .get("error")
            .or_else(|| v.get("detail"))
            .or_else(|| v.get("message"))?;
        Some(error_text(field))
    });
    let text = said.unwrap_or_else(|| body.trim().to_owned());
    match text.char_indices().nth(LONGEST) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None if text.is_empty() => "an empty body".to_owned(),
        None => text,
    }
}

/// Whether a 4xx refuses the model: its answer names the model, or it is
/// a 404 about a model (Ollama, OpenAI: "model ... not found", "The model
/// ... does not exist") rather than a missing path.
fn is_about_the_model(status: u16, answer: &str, model: &str) -> bool {
    let about_a_model = answer.to_ascii_lowercase().contains("model");
    (400..500).contains(&status)
        && (mentions_model(answer, model) || status == 404 && about_a_model)
}

/// Whether `answer` names `model` as a word of its own (not inside a
/// longer name).
fn mentions_model(answer: &str, model: &str) -> bool {
    if model.is_empty() {
        return false;
    }
    let is_name_char = |c: char| c.is_alphanumeric() || "-_./:".contains(c);
    answer.match_indices(model).any(|(at, _)| {
        let before = answer[..at].chars().next_back();
        let after = answer[at + model.len()..].chars().next();
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}

fn timed_out(transport: &ureq::Transport) -> bool {
    use std::error::Error as _;
    let io_kind = transport
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
        .map(std::io::Error::kind);
    matches!(
        io_kind,
        Some(std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock)
    ) || transport.to_string().contains("timed out")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_answer_is_the_first_choices_message() {
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hola"},"finish_reason":"stop"}]}"#;
        assert_eq!(plain_answer(body).unwrap(), "Hola");
        let cut = r#"{"choices":[{"message":{"content":"Ho"},"finish_reason":"length"}]}"#;
        assert_eq!(plain_answer(cut), Err(AnswerFault::Length));
        let null = r#"{"choices":[{"message":{"content":null},"finish_reason":"stop"}]}"#;
        assert_eq!(plain_answer(null).unwrap(), "");
        assert!(matches!(plain_answer("{}"), Err(AnswerFault::Malformed(_))));
        assert!(matches!(
            plain_answer("<html>"),
            Err(AnswerFault::Malformed(_))
        ));
    }

    #[test]
    fn an_error_body_is_cut_to_its_message() {
        let vllm = r#"{"error":{"message":"The model `x` does not exist.","type":"NotFoundError","code":404}}"#;
        assert_eq!(answer_excerpt(vllm), "The model `x` does not exist.");
        assert_eq!(answer_excerpt(r#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(answer_excerpt(""), "an empty body");
        assert_eq!(answer_excerpt(&"a".repeat(400)).chars().count(), 301);
    }

    #[test]
    fn a_model_is_mentioned_only_as_a_whole_name() {
        assert!(mentions_model("The model `qwen3` does not exist.", "qwen3"));
        assert!(mentions_model("model 'qwen3' not found", "qwen3"));
        assert!(!mentions_model("model 'qwen3-8b' not found", "qwen3"));
        assert!(!mentions_model("anything", ""));
    }
}
