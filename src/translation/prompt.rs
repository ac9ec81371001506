// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What the chat model is asked: the instructions in the system message,
//! earlier units with their translations as the conversation so far (so
//! pronouns, terms and names stay consistent across units), and the unit's
//! text, alone, as the user's message. Temperature 0: the same unit
//! translates the same way, and a caption is no place for creativity.
//!
//! Live, a unit is sent before the units just before it are answered: their
//! source text is context all the same, named in the system message (chat
//! templates want user and assistant turns to alternate, so it cannot be a
//! user turn without its answer).

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::language::Language;

/// A unit (or a catch-up of several) and the translation it got, if it
/// came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    id: u64,
    pub source: String,
    pub translation: Option<String>,
}

/// The latest exchanges of one language, at most a given number, in the
/// order they were sent.
#[derive(Debug, Clone, Default)]
pub struct History {
    max: usize,
    exchanges: VecDeque<Exchange>,
}

impl History {
    /// Keeps the latest `max` exchanges (0: none, each unit alone).
    pub fn new(max: usize) -> History {
        History {
            max,
            exchanges: VecDeque::with_capacity(max),
        }
    }

    /// Request `id` went out with `source`: later requests have it as
    /// context from now on, translated or not.
    pub fn sent(&mut self, id: u64, source: &str) {
        if self.max == 0 {
            return;
        }
        if self.exchanges.len() == self.max {
            self.exchanges.pop_front();
        }
        self.exchanges.push_back(Exchange {
            id,
            source: source.to_owned(),
            translation: None,
        });
    }

    /// Request `id`'s translation came (if it is still among the latest).
    pub fn answered(&mut self, id: u64, translation: &str) {
        if let Some(e) = self.exchanges.iter_mut().find(|e| e.id == id) {
            e.translation = Some(translation.to_owned());
        }
    }

    /// A source and its translation, one after the other.
    pub fn push(&mut self, source: &str, translation: &str) {
        let id = self.exchanges.back().map_or(0, |e| e.id + 1);
        self.sent(id, source);
        self.answered(id, translation);
    }

    /// Forgets them all: after a flush, or where the talk starts afresh.
    pub fn clear(&mut self) {
        self.exchanges.clear();
    }

    /// Oldest first.
    pub fn exchanges(&self) -> impl Iterator<Item = &Exchange> {
        self.exchanges.iter()
    }
}

/// The instructions: the target language, named in English with its tag,
/// once, the only thing in parentheses.
pub fn system_message(language: &Language) -> String {
    format!(
        "You translate live captions into {language}. Each user message is a piece of \
         transcribed speech, possibly an unfinished sentence: translate it faithfully, \
         adding and leaving out nothing. Keep names, numbers and units \
         as they are. Answer with the translation only: no quotes, notes, explanations or the \
         original text."
    )
}

/// The body of a `/v1/chat/completions` request for `text`.
pub fn request_body(
    model: &str,
    language: &Language,
    history: &History,
    text: &str,
    stream: bool,
) -> Value {
    let mut system = system_message(language);
    let pending: Vec<&str> = history
        .exchanges()
        .filter(|e| e.translation.is_none())
        .map(|e| e.source.as_str())
        .collect();
    if !pending.is_empty() {
        system.push_str(&format!(
            " For context only, not to translate now, the speech just before: \"{}\"",
            pending.join(" ")
        ));
    }
    let mut messages = vec![message("system", &system)];
    for exchange in history.exchanges() {
        if let Some(translation) = &exchange.translation {
            messages.push(message("user", &exchange.source));
            messages.push(message("assistant", translation));
        }
    }
    messages.push(message("user", text));
    json!({
        "model": model,
        "messages": messages,
        "stream": stream,
        "temperature": 0,
    })
}

fn message(role: &str, content: &str) -> Value {
    json!({ "role": role, "content": content })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spanish() -> Language {
        Language::parse("es").unwrap()
    }

    #[test]
    fn the_user_message_is_the_unit_text_alone() {
        let body = request_body("m", &spanish(), &History::new(4), "Good evening.", true);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0]["role"], "system");
        assert!(messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("into Spanish (es)."));
        assert_eq!(
            messages[1],
            json!({"role": "user", "content": "Good evening."})
        );
        assert_eq!(body["model"], "m");
        assert_eq!(body["stream"], true);
        assert_eq!(body["temperature"], 0);
    }

    #[test]
    fn earlier_exchanges_come_as_context_the_latest_n() {
        let mut history = History::new(2);
        for k in 1..=3 {
            history.push(&format!("s{k}"), &format!("t{k}"));
        }
        let body = request_body("m", &spanish(), &history, "now", false);
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
                ("user", "s2"),
                ("assistant", "t2"),
                ("user", "s3"),
                ("assistant", "t3"),
                ("user", "now")
            ]
        );
        history.clear();
        assert_eq!(history.exchanges().count(), 0);
    }

    #[test]
    fn earlier_units_still_in_flight_are_context_in_the_system_message() {
        let mut history = History::new(3);
        history.sent(7, "first part");
        history.sent(8, "second part");
        history.answered(7, "primera parte");
        let body = request_body("m", &spanish(), &history, "third", true);
        let messages = body["messages"].as_array().unwrap();
        let system = messages[0]["content"].as_str().unwrap();
        assert!(
            system.ends_with("the speech just before: \"second part\""),
            "{system}"
        );
        assert!(!system.contains("first part"));
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(messages[2]["content"], "primera parte");
        assert_eq!(messages[3]["content"], "third");
    }

    #[test]
    fn no_history_keeps_nothing() {
        let mut history = History::new(0);
        history.push("a", "b");
        assert_eq!(history.exchanges().count(), 0);
    }

    #[test]
    fn only_the_language_is_in_parentheses() {
        let text = system_message(&Language::parse("pt-BR").unwrap());
        assert_eq!(text.matches('(').count(), 1);
        assert!(text.contains("(pt-BR)"));
    }
}
