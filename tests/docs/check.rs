// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What tests/docs.rs reads in the README and the guides: links and
//! GitHub's heading anchors, the properties and `stats` fields they name,
//! and the repository paths they quote. Pure text in, findings out, so each
//! rule is unit-tested on a small text below.

use std::collections::BTreeSet;

/// A block of prose: the lines between blank lines, outside fenced code,
/// joined with spaces (a code span may break across lines), with the number
/// of its first line.
#[derive(Debug, PartialEq)]
pub struct Block {
    pub line: usize,
    pub text: String,
}

/// The prose blocks of a Markdown text. Each table row and each heading is
/// a block of its own; fenced code is left out.
pub fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    let mut fence: Option<&str> = None;
    for (k, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(marker) = fence {
            if line.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        let opens = ["```", "~~~"].into_iter().find(|m| line.starts_with(m));
        let alone = line.is_empty() || line.starts_with('|') || line.starts_with('#');
        if opens.is_some() || alone {
            out.extend(current.take());
        }
        if let Some(marker) = opens {
            fence = Some(marker);
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if alone {
            out.push(Block {
                line: k + 1,
                text: line.to_owned(),
            });
            continue;
        }
        match &mut current {
            Some(block) => {
                block.text.push(' ');
                block.text.push_str(line);
            }
            None => {
                current = Some(Block {
                    line: k + 1,
                    text: line.to_owned(),
                })
            }
        }
    }
    out.extend(current);
    out
}

/// The code spans of a block, in order, with their byte offsets.
pub fn code_spans(text: &str) -> Vec<(usize, &str)> {
    let mut spans = Vec::new();
    let mut rest = 0;
    while let Some(open) = text[rest..].find('`').map(|k| rest + k) {
        let ticks = text[open..].chars().take_while(|&c| c == '`').count();
        let fence = &text[open..open + ticks];
        let body = open + ticks;
        match text[body..].find(fence).map(|k| body + k) {
            Some(close) => {
                spans.push((open, text[body..close].trim()));
                rest = close + ticks;
            }
            None => break,
        }
    }
    spans
}

/// The block with its code spans blanked out (same length), for what must
/// not be read inside code.
fn without_code(text: &str) -> String {
    let mut out = text.to_owned();
    let mut rest = 0;
    while let Some(open) = out[rest..].find('`').map(|k| rest + k) {
        match out[open + 1..].find('`').map(|k| open + 1 + k) {
            Some(close) => {
                out.replace_range(open..=close, &" ".repeat(close + 1 - open));
                rest = close + 1;
            }
            None => break,
        }
    }
    out
}

/// The targets of the inline links and images of a text (`[text](target)`,
/// `![alt](target)`), outside code, with their lines.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for block in blocks(text) {
        let prose = without_code(&block.text);
        let mut rest = 0;
        while let Some(k) = prose[rest..].find("](").map(|k| rest + k) {
            let start = k + 2;
            let mut depth = 0usize;
            let mut end = None;
            for (i, c) in prose[start..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth == 0 => {
                        end = Some(start + i);
                        break;
                    }
                    ')' => depth -= 1,
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            let target = prose[start..end].trim();
            // A title after the address: `(path "title")`.
            let target = target.split_whitespace().next().unwrap_or_default();
            out.push((block.line, target.to_owned()));
            rest = end;
        }
    }
    out
}

/// GitHub's anchor for a heading: the text as shown, lower-cased, without
/// punctuation (letters, digits, `-`, `_` and spaces stay), spaces as `-`.
pub fn slug(heading: &str) -> String {
    // A link in a heading shows its text only.
    let mut shown = String::new();
    let mut rest = heading;
    while let Some(open) = rest.find('[') {
        let Some(mid) = rest[open..].find("](").map(|k| open + k) else {
            break;
        };
        let Some(close) = rest[mid..].find(')').map(|k| mid + k) else {
            break;
        };
        shown.push_str(&rest[..open]);
        shown.push_str(&rest[open + 1..mid]);
        rest = &rest[close + 1..];
    }
    shown.push_str(rest);
    shown
        .trim()
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings; a repeated heading's anchor
/// gets `-1`, `-2`, ... as on GitHub.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for block in blocks(text) {
        let Some(heading) = heading_text(&block.text) else {
            continue;
        };
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The text of an ATX heading line (`## Text ##`), or None.
fn heading_text(line: &str) -> Option<&str> {
    let level = line.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) || !line[level..].starts_with(' ') {
        return None;
    }
    Some(line[level..].trim().trim_end_matches('#').trim())
}

/// A property named on a line: the element's factory (one of ours), and
/// the property, `PAD::property` for a pad's.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone)]
pub struct Named {
    pub element: Option<String>,
    pub property: String,
}

/// Splits a shell line into words, keeping quoted parts together (quotes
/// removed).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut any = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            (None, c) => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    words
}

/// `name=value` with a lower-case property name (or `PAD::name`): the name.
fn assignment(word: &str) -> Option<&str> {
    let (name, _) = word.split_once('=')?;
    let plain = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    };
    let ok = match name.split_once("::") {
        Some((pad, property)) => plain(pad) && plain(property),
        None => plain(name) && !name.contains('_'),
    };
    ok.then_some(name)
}

/// The `name=value` words of a launch description (a `gst-launch-1.0`
/// line, or a fragment of one in a code span), each with the element it
/// sets: one of `ours` by factory name, None when the words come before
/// any element. Words that set another element's properties, and caps, are
/// left out.
pub fn assignments(description: &str, ours: &[&str]) -> Vec<Named> {
    let words = shell_words(description);
    let start = words
        .iter()
        .position(|w| w == "gst-launch-1.0")
        .map_or(0, |k| k + 1);
    let mut out = Vec::new();
    // None: before any element; Some(None): another element's words.
    let mut element: Option<Option<&str>> = None;
    for word in &words[start..] {
        if word.starts_with('-') && element.is_none() {
            continue;
        }
        if let Some(name) = assignment(word) {
            match element {
                Some(Some(factory)) => out.push(Named {
                    element: Some(factory.to_owned()),
                    property: name.to_owned(),
                }),
                None => out.push(Named {
                    element: None,
                    property: name.to_owned(),
                }),
                Some(None) => {}
            }
            continue;
        }
        element = Some(ours.iter().find(|f| **f == word).copied());
    }
    out
}

/// The rows of the tables whose header's first cell is `header`, each
/// with its line and its cells, trimmed.
pub fn table_rows(text: &str, header: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut inside = false;
    for block in blocks(text) {
        let Some(row) = block.text.strip_prefix('|') else {
            inside = false;
            continue;
        };
        let cells: Vec<String> = row
            .strip_suffix('|')
            .unwrap_or(row)
            .split('|')
            .map(|c| c.trim().to_owned())
            .collect();
        if !inside {
            inside = cells[0].eq_ignore_ascii_case(header);
            continue;
        }
        if !cells[0].starts_with("---") {
            out.push((block.line, cells));
        }
    }
    out
}

/// The names in the first column of the tables whose header's first cell
/// is `header`, with their lines: every code span of that column.
pub fn first_column(text: &str, header: &str) -> Vec<(usize, String)> {
    table_rows(text, header)
        .into_iter()
        .flat_map(|(line, cells)| {
            code_spans(&cells[0])
                .into_iter()
                .map(move |(_, span)| (line, span.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The defaults a property table gives (`| property | default | ... |`):
/// each property of a row with the default in the same place of the
/// default cell (`| `latency`, `lateness` | 1500, 0 |`). A row whose
/// default cell does not list one plain value per property (words such as
/// "transcriber `broadcast`, sink `netflix`") is left out.
pub fn table_defaults(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (line, cells) in table_rows(text, "property") {
        let Some(cell) = cells.get(1) else { continue };
        let names: Vec<&str> = code_spans(&cells[0]).into_iter().map(|(_, s)| s).collect();
        let values: Vec<&str> = cell.split(',').map(str::trim).collect();
        let plain = values
            .iter()
            .all(|v| !v.contains(char::is_whitespace) && !v.contains('`'));
        if plain && values.len() == names.len() {
            for (name, value) in names.into_iter().zip(values) {
                out.push((line, name.to_owned(), value.to_owned()));
            }
        }
    }
    out
}

/// A name as the elements spell properties and fields: lower-case words
/// joined by `-`.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        && s.starts_with(|c: char| c.is_ascii_lowercase())
}

/// The `stats` fields a text names: the names in code spans inside the
/// first parentheses after a `` `stats` `` span in the same clause (before
/// a `.` or `;`), as in "counted in `stats` (`audio-skipped`, `stalls`)"
/// or "`stats` counts them (`catch-ups`)".
pub fn stats_fields_named(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for block in blocks(text) {
        let t = &block.text;
        let mut rest = 0;
        while let Some(k) = t[rest..].find("`stats`").map(|k| rest + k) {
            rest = k + "`stats`".len();
            let clause_end = t[rest..].find(['.', ';']).map_or(t.len(), |k| rest + k);
            let Some(open) = t[rest..clause_end].find('(').map(|k| rest + k) else {
                continue;
            };
            let mut depth = 0;
            let mut close = t.len();
            for (i, c) in t[open..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            close = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            for (_, span) in code_spans(&t[open..close]) {
                if is_name(span) && span != "stats" {
                    out.push((block.line, span.to_owned()));
                }
            }
            rest = close;
        }
    }
    out
}

/// The repository paths a text quotes in code spans (`src/...`,
/// `tests/...`, `scripts/...`, ...), without trailing punctuation. A
/// placeholder in capitals (`fuzz/artifacts/TARGET/`) is left out.
pub fn quoted_paths(text: &str) -> Vec<(usize, String)> {
    const ROOTS: [&str; 8] = [
        "src/",
        "tests/",
        "scripts/",
        "examples/",
        "docs/",
        "benches/",
        "fuzz/",
        "meson/",
    ];
    let mut out = Vec::new();
    for block in blocks(text) {
        for (_, span) in code_spans(&block.text) {
            if !ROOTS.iter().any(|r| span.starts_with(r)) || span.contains(char::is_whitespace) {
                continue;
            }
            let path = span.trim_end_matches([',', '.', ':', ';', ')']);
            let placeholder = path.split('/').any(|part| {
                part.len() > 1 && part.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            });
            if !placeholder && !path.contains(['*', '%', '<', '{', '$']) {
                out.push((block.line, path.to_owned()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUIDE: &str = "\
# A guide

## Set up, run, test

See [the setup](#set-up-run-test), [a typo](#set-up-and-run) and
[the other guide](other.md#with-transcriberbin-015-gstreamer-124-and-newer).

```sh
# not a heading
gst-launch-1.0 voxtralrtsink model-path=$MODEL lcoation=x.srt
```

| property | default |
|---|---|
| `latency`, `overload` | 1500 |
| `stall-timout` | 15000 |
| `engine`, `url` | local, |
| `subtitle-style` | transcriber `broadcast` |

Counted in `stats` (`audio-skipped`, `audio-skiped` in ns; `translations`:
per pad `units`), and `latency` in `stats` is not counted. `stats` counts
them (`stalls`); `stats` too. (`latency`)
";

    #[test]
    fn headings_give_githubs_anchors() {
        assert_eq!(
            slug("With transcriberbin 0.15 (GStreamer 1.24 and newer)"),
            "with-transcriberbin-015-gstreamer-124-and-newer"
        );
        assert_eq!(
            slug("A client build (engine=vllm only)"),
            "a-client-build-enginevllm-only"
        );
        assert_eq!(
            slug("Speech-only decoding (issue 26)"),
            "speech-only-decoding-issue-26"
        );
        assert_eq!(slug("`translate_src_%u` pads"), "translate_src_u-pads");
        assert_eq!(slug("Over [SRT](srt.md)"), "over-srt");
        let anchors = anchors("# A\n\n## Files\n\n```\n# Files\n```\n\n## Files\n");
        assert_eq!(anchors, ["a", "files", "files-1"].map(String::from).into());
    }

    #[test]
    fn links_are_found_outside_code() {
        let found: Vec<String> = links(GUIDE).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            found,
            [
                "#set-up-run-test",
                "#set-up-and-run",
                "other.md#with-transcriberbin-015-gstreamer-124-and-newer"
            ]
        );
        assert!(links("`[a](b)` and\n\n```\n[c](d)\n```\n").is_empty());
        assert_eq!(links("![x](a.png \"title\")")[0].1, "a.png");
    }

    #[test]
    fn a_launch_line_names_our_elements_properties() {
        let ours = ["voxtralrttranscriber", "voxtralrtsink"];
        let line = "GST_PLUGIN_PATH=$X gst-launch-1.0 -m filesrc location=a.wav ! \
                    voxtralrttranscriber name=t model-path=$MODEL sink_0::speaker=Host \
                    url=\"ws://a, ws://b\" ! queue max-size-time=1 ! t.translate_src_0 \
                    audio/x-raw,rate=16000 ! voxtralrtsink lcoation=x";
        let named = assignments(line, &ours);
        let ours_named: Vec<(&str, &str)> = named
            .iter()
            .map(|n| (n.element.as_deref().unwrap(), n.property.as_str()))
            .collect();
        assert_eq!(
            ours_named,
            [
                ("voxtralrttranscriber", "name"),
                ("voxtralrttranscriber", "model-path"),
                ("voxtralrttranscriber", "sink_0::speaker"),
                ("voxtralrttranscriber", "url"),
                ("voxtralrtsink", "lcoation"),
            ]
        );
        // A fragment in prose: its first words set no known element.
        let loose = assignments("subtitle-style=netflix", &ours);
        assert_eq!(loose[0].element, None);
        assert_eq!(loose[0].property, "subtitle-style");
        assert!(assignments("HF_HUB_OFFLINE=1", &ours).is_empty());
    }

    #[test]
    fn property_tables_and_stats_fields_are_read() {
        let names: Vec<String> = first_column(GUIDE, "property")
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        assert_eq!(
            names,
            [
                "latency",
                "overload",
                "stall-timout",
                "engine",
                "url",
                "subtitle-style"
            ]
        );
        let defaults: Vec<(String, String)> = table_defaults(GUIDE)
            .into_iter()
            .map(|(_, name, value)| (name, value))
            .collect();
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(
            defaults,
            [
                pair("stall-timout", "15000"),
                pair("engine", "local"),
                pair("url", "")
            ]
        );
        let fields: Vec<String> = stats_fields_named(GUIDE)
            .into_iter()
            .map(|(_, n)| n)
            .collect();
        assert_eq!(
            fields,
            [
                "audio-skipped",
                "audio-skiped",
                "translations",
                "units",
                "stalls"
            ]
        );
    }

    #[test]
    fn quoted_paths_leave_placeholders_out() {
        let text = "See `src/engine/progress.rs`, `fuzz/artifacts/TARGET/` and\n\
                    `tests/fixtures/README.md`; `scripts/setup --client` runs.";
        let paths: Vec<String> = quoted_paths(text).into_iter().map(|(_, p)| p).collect();
        assert_eq!(
            paths,
            ["src/engine/progress.rs", "tests/fixtures/README.md"]
        );
    }
}
