// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Speech at a natural pace for the subtitle tests, and the style rules
//! checked on every cue.
//!
//! The speech: espeak-ng says a news bulletin word by word (`-s 175`: a
//! word said alone is slower than in a sentence), the words one after the
//! other, 240 ms more after a comma and 560 ms after a sentence: 2.1 words
//! a second, pauses included. Each word is marked at its start by an 80 ms
//! 1 kHz pip, which the tone fixture writes as a word ("x"); a house
//! dictionary ([`dictionary`]) words each "x" as "words", six characters
//! with its space, about an English word's length. So the transcript has
//! the bulletin's pace and pauses, and the reading speed of English at
//! that pace.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub const BULLETIN: &[&str] = &[
    "Good evening and welcome to the late news.",
    "Tonight we look at the weather, the roads and the markets.",
    "First, the weather.",
    "It stays fine and warm through the weekend.",
    "There is a chance of rain on Monday in the north.",
    "Farmers say the fields need it.",
    "On the roads, traffic is light.",
    "The bridge in the city centre opens again tomorrow morning.",
    "Drivers should allow more time near the harbour.",
    "Now the markets.",
    "Shares rose a little in early trading, then fell back by the close.",
    "The pound was steady against the euro.",
    "In sport, the home team won their match by two goals.",
    "Their captain scored the second in the last minute.",
    "The coach said he was proud of every player.",
    "Next week the team travels to the coast.",
    "And finally, a story from the zoo.",
    "A baby elephant was born this morning.",
    "Keepers say mother and calf are doing well.",
    "Visitors can see them from the end of the month.",
    "That is all from us tonight.",
    "Thank you for watching.",
    "Stay with us for the film after the break.",
    "Good night.",
];

/// The bulletin as audio, and how many words it says.
pub struct Speech {
    pub audio: Vec<f32>,
    pub words: usize,
}

/// espeak-ng saying `word` alone, its silence trimmed, at a quarter of its
/// level (so that its own 1 kHz never reaches the fixture's threshold).
fn espeak_word(word: &str, dir: &Path) -> Vec<f32> {
    let wav = dir.join(format!("{word}.wav"));
    let spoke = std::process::Command::new("espeak-ng")
        .args(["-s", "175", "-w"])
        .arg(&wav)
        .arg(word)
        .status()
        .expect("espeak-ng (Debian package espeak-ng)");
    assert!(spoke.success());
    super::raw_of(
        std::process::Command::new("sox").arg(&wav),
        &dir.join(format!("{word}.f32")),
        &[
            "silence", "1", "0.01", "-40d", "reverse", "silence", "1", "0.01", "-40d", "reverse",
            "vol", "0.25",
        ],
    )
}

pub fn speech() -> &'static Speech {
    static SPEECH: OnceLock<Speech> = OnceLock::new();
    SPEECH.get_or_init(|| {
        let dir = super::scratch_dir("subtitles-speech");
        let frame = super::FRAME;
        // Three seconds of silence first (the fixture writes nothing for
        // its first frames, and a pop-on SCC caption loads before it
        // shows).
        let mut audio = vec![0.0f32; 38 * frame];
        let mut words = 0;
        for sentence in BULLETIN {
            for word in sentence.split(' ') {
                let bare: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
                let said = espeak_word(&bare.to_lowercase(), &dir);
                let at = audio.len() / frame;
                audio.extend(&said);
                let frames = audio.len().div_ceil(frame).max(at + 1);
                audio.resize(frames * frame, 0.0);
                super::add_tone(&mut audio, at..at + 1, 1000.0);
                let pause = if word.ends_with('.') {
                    7
                } else if word.ends_with(',') {
                    3
                } else {
                    0
                };
                audio.resize(audio.len() + pause * frame, 0.0);
                words += 1;
            }
        }
        audio.resize(audio.len() + 25 * frame, 0.0);
        Speech { audio, words }
    })
}

/// The house dictionary that words each "x".
pub fn dictionary() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let path = super::scratch_dir("subtitles-dictionary").join("words.txt");
        std::fs::write(&path, "x => words\n").unwrap();
        path
    })
    .clone()
}

/// A cue as a file or a buffer gives it: start and end (ms) and lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cue {
    pub start: u64,
    pub end: u64,
    pub lines: Vec<String>,
}

/// The cues of an SRT file (whole cues only: a cut one fails).
pub fn srt_cues(text: &str) -> Vec<Cue> {
    let ms = |t: &str| {
        let (hms, millis) = t.split_once(',').unwrap();
        let parts: Vec<u64> = hms.split(':').map(|p| p.parse().unwrap()).collect();
        ((parts[0] * 60 + parts[1]) * 60 + parts[2]) * 1000 + millis.parse::<u64>().unwrap()
    };
    text.split_inclusive("\n\n")
        .enumerate()
        .map(|(i, block)| {
            assert!(block.ends_with("\n\n"), "a cut cue: {block:?}");
            let lines: Vec<&str> = block.trim_end().lines().collect();
            assert_eq!(lines[0], (i + 1).to_string(), "{block:?}");
            let (start, end) = lines[1].split_once(" --> ").unwrap();
            Cue {
                start: ms(start),
                end: ms(end),
                lines: lines[2..].iter().map(|l| l.to_string()).collect(),
            }
        })
        .collect()
}

/// A style's rules, as the guides give them (ms, characters).
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub lines: usize,
    pub chars: usize,
    pub min_ms: u64,
    pub max_ms: u64,
    pub gap_ms: u64,
    /// Characters a second, or words a minute.
    pub speed: Speed,
}

#[derive(Debug, Clone, Copy)]
pub enum Speed {
    Cps(f64),
    Wpm(f64),
}

pub const NETFLIX: Rules = Rules {
    lines: 2,
    chars: 42,
    min_ms: 833,
    max_ms: 7000,
    gap_ms: 83,
    speed: Speed::Cps(20.0),
};

pub const BBC: Rules = Rules {
    lines: 2,
    chars: 37,
    min_ms: 1000,
    max_ms: 7000,
    gap_ms: 80,
    speed: Speed::Wpm(180.0),
};

/// Netflix in other languages than English: 17 characters a second.
pub const NETFLIX_OTHER: Rules = Rules {
    speed: Speed::Cps(17.0),
    ..NETFLIX
};

pub const DCMP: Rules = Rules {
    lines: 2,
    chars: 32,
    min_ms: 2000,
    max_ms: 7000,
    gap_ms: 66,
    speed: Speed::Wpm(225.0),
};

/// Every rule on every cue, and every word said (start ms, text) exactly
/// once, in order, in a cue that starts with its first word. Times are the
/// file's milliseconds (a millisecond's rounding allowed). Returns the
/// fastest reading speed of a cue.
pub fn assert_rules(rules: &Rules, words: &[(u64, String)], cues: &[Cue]) -> f64 {
    let said: Vec<&str> = words.iter().map(|w| w.1.as_str()).collect();
    let shown: Vec<&str> = cues
        .iter()
        .flat_map(|c| c.lines.iter().flat_map(|l| l.split(' ')))
        .collect();
    assert_eq!(shown, said, "every word once, in order");
    assert!(cues.len() >= 20, "{} cues", cues.len());
    let mut fastest = 0.0f64;
    let mut first_word = 0;
    for (i, cue) in cues.iter().enumerate() {
        let n = cue
            .lines
            .iter()
            .map(|l| l.split(' ').count())
            .sum::<usize>();
        assert!(
            cue.start.abs_diff(words[first_word].0) <= 1,
            "{cue:?} starts away from its first word at {} ms",
            words[first_word].0
        );
        first_word += n;
        assert!(cue.lines.len() <= rules.lines, "{cue:?}");
        for line in &cue.lines {
            assert!(line.chars().count() <= rules.chars, "{cue:?}");
        }
        let duration = cue.end - cue.start;
        assert!(duration <= rules.max_ms, "{cue:?}");
        let next = cues.get(i + 1);
        if let Some(next) = next {
            assert!(
                next.start + 1 >= cue.end + rules.gap_ms,
                "{cue:?} then {next:?}"
            );
        }
        // The minimum and the reading speed where the speech allows them:
        // else the next cue starts right after the gap.
        let cut = next.is_some_and(|next| next.start <= cue.end + rules.gap_ms + 1);
        let chars = cue.lines.join(" ").chars().count() as f64;
        let speed = match rules.speed {
            Speed::Cps(limit) => (chars * 1000.0 / duration as f64, limit),
            Speed::Wpm(limit) => (n as f64 * 60_000.0 / duration as f64, limit),
        };
        fastest = fastest.max(speed.0);
        assert!(duration + 1 >= rules.min_ms || cut, "{cue:?} then {next:?}");
        assert!(speed.0 <= speed.1 * 1.01 || cut, "{cue:?}: {:.1}", speed.0);
    }
    fastest
}
