// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Profanity rules: which words are profane (rustrict's list, English, plus
//! the user's own) and what becomes of them.

use std::collections::HashSet;

use rustrict::{Censor, Type};

use super::dictionary::key;

/// What becomes of a profane word.
#[derive(Debug, Eq, PartialEq, Clone, Copy, Default)]
pub enum ProfanityMode {
    /// Every word stays as the model wrote it.
    #[default]
    Off,
    /// The first letter stays and the rest are stars (f***).
    Mask,
    /// The word is left out.
    Remove,
    /// [`TAG`] stands in its place.
    Tag,
}

/// What stands in for a profane word with `tag`.
pub const TAG: &str = "[bleep]";

/// Profane, offensive (slurs) and sexual words at moderate or severe:
/// what broadcast filters mask. Mild words ("crap") and insults ("idiot")
/// pass.
fn is_listed(word: &str) -> bool {
    let found = Censor::from_str(word).analyze();
    found.is((Type::PROFANE | Type::OFFENSIVE | Type::SEXUAL) & Type::MODERATE_OR_HIGHER)
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profanity {
    pub mode: ProfanityMode,
    /// The user's words ([`key`]s), profane in every mode but `off`.
    pub extra: HashSet<String>,
}

impl Profanity {
    /// The words of a `profanity-list` value: separated by commas or
    /// white space.
    pub fn parse_list(list: &str) -> HashSet<String> {
        list.split(|c: char| c == ',' || c.is_whitespace())
            .map(key)
            .filter(|k| !k.is_empty())
            .collect()
    }

    pub fn is_profane(&self, word: &str) -> bool {
        let k = key(word);
        !k.is_empty() && (self.extra.contains(&k) || is_listed(&k))
    }

    /// `word` as the rules leave it; `None` when it is to be left out.
    pub fn apply(&self, word: &str) -> Option<String> {
        if self.mode == ProfanityMode::Off || !self.is_profane(word) {
            return Some(word.to_owned());
        }
        let core_start = word.find(char::is_alphanumeric).unwrap_or(0);
        let core_end = word.rfind(char::is_alphanumeric).map_or(word.len(), |i| {
            i + word[i..].chars().next().map_or(1, char::len_utf8)
        });
        let (lead, core, trail) = (
            &word[..core_start],
            &word[core_start..core_end],
            &word[core_end..],
        );
        match self.mode {
            ProfanityMode::Off => unreachable!(),
            ProfanityMode::Remove => None,
            ProfanityMode::Tag => Some(format!("{lead}{TAG}{trail}")),
            ProfanityMode::Mask => {
                let mut chars = core.chars();
                let first = chars.next().map(String::from).unwrap_or_default();
                let stars: String = chars.map(|_| '*').collect();
                Some(format!("{lead}{first}{stars}{trail}"))
            }
        }
    }
}
