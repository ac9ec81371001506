// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The API key sent to the chat server, and where it came from, so that a
//! refusal can say what to change. The key itself is never printed.
//!
//! By default it is read from the environment: `VOXTRALRT_TRANSLATE_API_KEY`
//! first, and only when that is unset `OPENAI_API_KEY`, the variable
//! OpenAI's clients read (so a machine set up for them works as is). Set
//! `VOXTRALRT_TRANSLATE_API_KEY` to an empty value to send no key even where
//! `OPENAI_API_KEY` is set, e.g. to a local server on plain http.

use std::fmt;

/// Our own variable, read first.
pub const KEY_VAR: &str = "VOXTRALRT_TRANSLATE_API_KEY";
/// OpenAI's, read when [`KEY_VAR`] is unset.
pub const OPENAI_KEY_VAR: &str = "OPENAI_API_KEY";

/// Where the key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// No key is sent.
    None,
    /// Given by the caller (a property).
    Given,
    /// The environment variable of that name.
    Env(&'static str),
}

/// A key to send as `Authorization: Bearer KEY`, or none.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    value: Option<String>,
    source: KeySource,
}

impl ApiKey {
    pub fn none() -> ApiKey {
        ApiKey {
            value: None,
            source: KeySource::None,
        }
    }

    /// `key`; an empty one is no key.
    pub fn given(key: &str) -> ApiKey {
        if key.is_empty() {
            return ApiKey::none();
        }
        ApiKey {
            value: Some(key.to_owned()),
            source: KeySource::Given,
        }
    }

    /// The key of the environment (see the module's documentation).
    pub fn from_env() -> ApiKey {
        ApiKey::from_vars(|name| std::env::var(name).ok())
    }

    /// The same, with `lookup` for the environment.
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> ApiKey {
        let (value, var) = match lookup(KEY_VAR) {
            Some(own) => (own, KEY_VAR),
            None => match lookup(OPENAI_KEY_VAR) {
                Some(openai) => (openai, OPENAI_KEY_VAR),
                None => return ApiKey::none(),
            },
        };
        if value.is_empty() {
            return ApiKey::none();
        }
        ApiKey {
            value: Some(value),
            source: KeySource::Env(var),
        }
    }

    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    pub fn source(&self) -> KeySource {
        self.source
    }
}

impl Default for ApiKey {
    fn default() -> Self {
        ApiKey::from_env()
    }
}

/// The key stays out of logs and error texts.
impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = self.value.as_ref().map(|_| "<hidden>");
        f.debug_struct("ApiKey")
            .field("value", &shown)
            .field("source", &self.source)
            .finish()
    }
}

/// What to do about a key a server refused, or did not get.
pub fn key_advice(source: KeySource) -> String {
    let set = format!(
        "set the environment variable {KEY_VAR} (or {OPENAI_KEY_VAR}, read when it is unset) \
         to the key the server expects"
    );
    match source {
        KeySource::None => format!("no API key was sent: {set}"),
        KeySource::Given => "the API key it was given is wrong: give the key the server \
                             expects"
            .to_owned(),
        KeySource::Env(var) if var == OPENAI_KEY_VAR => format!(
            "the key came from {OPENAI_KEY_VAR}, as {KEY_VAR} is unset: set {KEY_VAR} to the \
             key the server expects"
        ),
        KeySource::Env(var) => format!("the key came from {var}: {set}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> ApiKey {
        ApiKey::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn our_variable_comes_before_openais() {
        let both = env(&[(KEY_VAR, "ours"), (OPENAI_KEY_VAR, "theirs")]);
        assert_eq!(both.value(), Some("ours"));
        assert_eq!(both.source(), KeySource::Env(KEY_VAR));
        let openai = env(&[(OPENAI_KEY_VAR, "theirs")]);
        assert_eq!(openai.value(), Some("theirs"));
        assert_eq!(openai.source(), KeySource::Env(OPENAI_KEY_VAR));
        assert_eq!(env(&[]), ApiKey::none());
    }

    #[test]
    fn our_variable_set_empty_sends_no_key() {
        let key = env(&[(KEY_VAR, ""), (OPENAI_KEY_VAR, "theirs")]);
        assert_eq!(key.value(), None);
        assert_eq!(key.source(), KeySource::None);
        assert_eq!(ApiKey::given("").source(), KeySource::None);
    }

    #[test]
    fn the_key_is_never_printed() {
        let printed = format!("{:?}", ApiKey::given("sk-secret"));
        assert!(!printed.contains("sk-secret"), "{printed}");
    }

    #[test]
    fn advice_names_the_variable_to_set() {
        assert!(key_advice(KeySource::None).contains(KEY_VAR));
        assert!(key_advice(KeySource::Env(OPENAI_KEY_VAR)).contains("came from OPENAI_API_KEY"));
        assert!(key_advice(KeySource::Env(KEY_VAR)).contains("came from VOXTRALRT"));
    }
}
