// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A house dictionary: words or phrases the model writes, and how the house
//! writes them. One rule a line, `from => to`; `#` at the start of a line or
//! after a space starts a comment.

use std::collections::HashMap;
use std::path::Path;

/// The most words a rule may match: also the most words held back while a
/// rule may still match.
pub const MAX_RULE_WORDS: usize = 6;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The words matched, as [`key`]s.
    pub from: Vec<String>,
    pub to: String,
}

/// A line of the file that is not a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    /// From 1.
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for BadLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dictionary {
    rules: Vec<Rule>,
}

/// A word as rules match it: lower case, without the punctuation around it.
pub fn key(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase()
}

fn strip_comment(line: &str) -> &str {
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        if c == '#' && previous.is_whitespace() {
            return &line[..i];
        }
        previous = c;
    }
    line
}

fn parse_rule(line: &str) -> Result<Option<Rule>, String> {
    let line = strip_comment(line).trim();
    if line.is_empty() {
        return Ok(None);
    }
    let (from, to) = line
        .split_once("=>")
        .ok_or_else(|| format!("\"{line}\" is not a rule: write `from => to`"))?;
    let from: Vec<String> = from.split_whitespace().map(key).collect();
    let to = to.split_whitespace().collect::<Vec<_>>().join(" ");
    if from.is_empty() {
        return Err("nothing before `=>`".into());
    }
    if from.iter().any(String::is_empty) {
        return Err("a word before `=>` has no letter or digit".into());
    }
    if from.len() > MAX_RULE_WORDS {
        return Err(format!(
            "{} words before `=>`; a rule matches at most {MAX_RULE_WORDS}",
            from.len()
        ));
    }
    if to.is_empty() {
        return Err("nothing after `=>`".into());
    }
    Ok(Some(Rule { from, to }))
}

impl Dictionary {
    /// The rules of `text`, and the lines that are not rules. A rule for
    /// words an earlier line has a rule for replaces it.
    pub fn parse(text: &str) -> (Dictionary, Vec<BadLine>) {
        let mut rules: Vec<Rule> = Vec::new();
        let mut lines_of: HashMap<Vec<String>, (usize, usize)> = HashMap::new();
        let mut bad = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let number = i + 1;
            match parse_rule(line) {
                Ok(None) => {}
                Ok(Some(rule)) => match lines_of.get(&rule.from) {
                    Some(&(index, earlier)) => {
                        bad.push(BadLine {
                            line: number,
                            reason: format!("replaces the rule of line {earlier}"),
                        });
                        lines_of.insert(rule.from.clone(), (index, number));
                        rules[index] = rule;
                    }
                    None => {
                        lines_of.insert(rule.from.clone(), (rules.len(), number));
                        rules.push(rule);
                    }
                },
                Err(reason) => bad.push(BadLine {
                    line: number,
                    reason,
                }),
            }
        }
        (Dictionary { rules }, bad)
    }

    /// Reads and parses a UTF-8 file.
    pub fn load(path: &Path) -> Result<(Dictionary, Vec<BadLine>), String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read the dictionary {}: {e}", path.display()))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "the dictionary {} is not UTF-8 (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            )
        })?;
        Ok(Dictionary::parse(&text))
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// How many words the longest rule matches (0: no rules).
    pub fn max_words(&self) -> usize {
        self.rules.iter().map(|r| r.from.len()).max().unwrap_or(0)
    }

    /// Whether a rule longer than `keys` starts with them, so more words
    /// could still make it match; `next`, the start of the next word as far
    /// as it is written, must then start that rule's next word.
    pub fn could_grow(&self, keys: &[String], next: Option<&str>) -> bool {
        self.rules.iter().any(|r| {
            r.from.len() > keys.len()
                && r.from.starts_with(keys)
                && next.is_none_or(|n| r.from[keys.len()].starts_with(n))
        })
    }

    /// The longest rule matching the first words of `keys`, with how many
    /// words it matches.
    pub fn longest_match(&self, keys: &[String]) -> Option<(usize, &Rule)> {
        self.rules
            .iter()
            .filter(|r| keys.starts_with(&r.from))
            .max_by_key(|r| r.from.len())
            .map(|r| (r.from.len(), r))
    }
}

/// `to` written as `original` (the words it replaces, as the model wrote
/// them) was: the punctuation around them is kept, a capital first letter
/// is kept (a lower-case one leaves the house spelling as it is), and
/// words all in capitals make it all capitals.
pub fn written_like(to: &str, original: &[&str]) -> String {
    let first = original.first().copied().unwrap_or_default();
    let last = original.last().copied().unwrap_or_default();
    let lead: String = first.chars().take_while(|c| !c.is_alphanumeric()).collect();
    let trail_len = last
        .chars()
        .rev()
        .take_while(|c| !c.is_alphanumeric())
        .count();
    let trail: String = last
        .chars()
        .skip(last.chars().count() - trail_len)
        .collect();
    let letters: Vec<char> = original
        .iter()
        .flat_map(|w| w.chars())
        .filter(|c| c.is_alphabetic())
        .collect();
    let shouting = letters.len() > 1 && letters.iter().all(|c| c.is_uppercase());
    let body = if shouting {
        to.to_uppercase()
    } else if letters.first().is_some_and(|c| c.is_uppercase()) {
        capitalized(to)
    } else {
        to.to_owned()
    };
    format!("{lead}{body}{trail}")
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
