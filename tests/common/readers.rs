// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Third-party readers of caption files, each given a file path: ttconv and
//! pycaption (SCC, TTML, SRT and WebVTT), imschrm (IMSC's hypothetical
//! render model), ffmpeg (SCC) and xmllint with the EBU-TT-D schema. What
//! each shows and every problem it reports comes back, for the tests to
//! judge.
//!
//! The Python readers live in a venv that scripts/setup makes
//! (`~/.cache/voxtralrt/readers-venv`, or `$VOXTRALRT_READERS_VENV`), from
//! tests/readers/requirements.txt; tests/readers/read_captions.py drives
//! them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A caption file's kind, as the readers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Scc,
    Ttml,
    Srt,
    Vtt,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Scc => "scc",
            Kind::Ttml => "ttml",
            Kind::Srt => "srt",
            Kind::Vtt => "vtt",
        }
    }
}

/// What a reader shows between two times (s); rows or lines joined by
/// "\n".
#[derive(Debug, Clone, PartialEq)]
pub struct Caption {
    pub begin: f64,
    pub end: Option<f64>,
    pub text: String,
}

/// A reader's view of a file.
#[derive(Debug, Clone, Default)]
pub struct Reading {
    pub captions: Vec<Caption>,
    /// Warnings and errors the reader reported (none for a good file).
    pub problems: Vec<String>,
}

impl Reading {
    /// The words shown, in order (a caption's words after the one before).
    pub fn words(&self) -> Vec<String> {
        self.captions.iter().flat_map(|c| words(&c.text)).collect()
    }
}

/// Words as compared between a file and its reading: split at white space,
/// punctuation at either end dropped.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// The venv of the Python readers.
pub fn readers_venv() -> PathBuf {
    if let Some(dir) = std::env::var_os("VOXTRALRT_READERS_VENV") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").expect("HOME is set");
    PathBuf::from(home).join(".cache/voxtralrt/readers-venv")
}

fn readers_python() -> PathBuf {
    let python = readers_venv().join("bin/python");
    assert!(
        python.exists(),
        "the caption readers (ttconv, pycaption, imschrm) are not installed: {} is missing; \
         run scripts/setup (or scripts/setup --readers-only) to make the venv",
        python.display()
    );
    python
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/readers/read_captions.py")
}

/// Reads `path` with one of the Python readers.
fn python_reader(reader: &str, kind: Kind, path: &Path) -> Reading {
    let out = Command::new(readers_python())
        .arg(script())
        .args([reader, kind.name()])
        .arg(path)
        .output()
        .expect("running the readers' python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{reader} on {}: {stderr}",
        path.display()
    );
    let json: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{reader}'s output is not JSON ({e}): {stdout}{stderr}"));
    let captions = json["captions"]
        .as_array()
        .expect("captions")
        .iter()
        .map(|c| Caption {
            begin: c["begin"].as_f64().expect("begin"),
            end: c["end"].as_f64(),
            text: c["text"].as_str().expect("text").to_owned(),
        })
        .collect();
    let mut problems: Vec<String> = json["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|p| p.as_str().unwrap_or_default().to_owned())
        .collect();
    problems.extend(
        stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned),
    );
    Reading { captions, problems }
}

/// ttconv 1.2.3's SCC, IMSC, SRT or WebVTT reader: what is on screen between each
/// of the document's significant times.
pub fn ttconv(path: &Path, kind: Kind) -> Reading {
    python_reader("ttconv", kind, path)
}

/// pycaption 2.3.14's SCCReader, DFXPReader, SRTReader or WebVTTReader.
pub fn pycaption(path: &Path, kind: Kind) -> Reading {
    python_reader("pycaption", kind, path)
}

/// imschrm 1.1.0: the IMSC hypothetical render model's errors and
/// warnings (as problems), and the captions as ttconv reads them.
pub fn imschrm(path: &Path) -> Reading {
    python_reader("imschrm", Kind::Ttml, path)
}

/// ffmpeg's SCC demuxer and CEA-608 decoder, written out as SRT.
pub fn ffmpeg_scc(path: &Path) -> Reading {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostdin", "-loglevel", "warning", "-i"])
        .arg(path)
        .args(["-f", "srt", "-"])
        .output()
        .expect("ffmpeg (Debian package ffmpeg) runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "ffmpeg on {}: {stderr}",
        path.display()
    );
    Reading {
        captions: parse_srt(&String::from_utf8_lossy(&out.stdout)),
        problems: stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect(),
    }
}

/// The cues of an SRT file (ffmpeg's, with its `{\an7}`-style tags taken
/// out).
fn parse_srt(srt: &str) -> Vec<Caption> {
    let mut captions = Vec::new();
    for block in srt.replace("\r\n", "\n").split("\n\n") {
        let mut lines = block.lines().skip_while(|l| l.trim().is_empty());
        let (Some(_index), Some(times)) = (lines.next(), lines.next()) else {
            continue;
        };
        let Some((begin, end)) = times.split_once(" --> ") else {
            continue;
        };
        let text: Vec<String> = lines
            .map(strip_tags)
            .filter(|l| !l.trim().is_empty())
            .collect();
        captions.push(Caption {
            begin: srt_seconds(begin),
            end: Some(srt_seconds(end)),
            text: text.join("\n"),
        });
    }
    captions
}

fn strip_tags(line: &str) -> String {
    let mut out = String::new();
    let mut depth = 0;
    for c in line.chars() {
        match c {
            '{' | '<' => depth += 1,
            '}' | '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

fn srt_seconds(clock: &str) -> f64 {
    let clock = clock.trim().replace(',', ".");
    let parts: Vec<f64> = clock
        .split(':')
        .map(|p| p.parse().expect("SRT time"))
        .collect();
    parts[0] * 3600.0 + parts[1] * 60.0 + parts[2]
}

/// xmllint (Debian `libxml2-utils`) validating `path` against the EBU-TT-D
/// XML Schema in tests/fixtures/ebu-tt-d-xsd, offline: Ok, or what it said.
pub fn xmllint_ebu_tt_d(path: &Path) -> Result<(), String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ebu-tt-d-xsd");
    let out = Command::new("xmllint")
        .env("XML_CATALOG_FILES", dir.join("catalog.xml"))
        .args(["--nonet", "--noout", "--schema"])
        .arg(dir.join("ebutt_d.xsd"))
        .arg(path)
        .output()
        .expect("xmllint (Debian package libxml2-utils; scripts/setup installs it) runs");
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    // xmllint says "FILE validates" on stderr even when all is well.
    let only_validates = said.trim().lines().all(|l| l.ends_with(" validates"));
    if out.status.success() && only_validates {
        Ok(())
    } else {
        Err(said)
    }
}
