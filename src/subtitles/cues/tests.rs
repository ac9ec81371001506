// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;
use crate::subtitles::style::{Style, StyleName};

const MS: u64 = 1_000_000;

fn netflix() -> Style {
    Style::new(StyleName::Netflix, None, 32)
}

/// Words of `text` spoken from `at` (ms), each `each` ms long with `gap` ms
/// between them.
fn spoken(text: &str, at: u64, each: u64, gap: u64) -> Vec<Word> {
    text.split(' ')
        .enumerate()
        .map(|(i, w)| {
            let start = (at + i as u64 * (each + gap)) * MS;
            Word::new(w, start, start + each * MS)
        })
        .collect()
}

/// The cues of `words`, silence told after each word up to the next one's
/// start (as a live element sees it), then the end.
fn cues_live(style: Style, words: &[Word]) -> Vec<Cue> {
    let mut b = CueBuilder::new(style);
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        out.extend(b.push(w.clone()));
        let next = words
            .get(i + 1)
            .map_or(w.end_ns + 10_000 * MS, |n| n.start_ns);
        let mut t = w.end_ns;
        while t < next {
            out.extend(b.silence_until(t));
            t += 40 * MS;
        }
    }
    out.extend(b.finish(None));
    out
}

/// The cues of `words` with no silence told: a file read at once.
fn cues_at_once(style: Style, words: &[Word]) -> (Vec<Cue>, Counts) {
    let mut b = CueBuilder::new(style);
    let mut out = Vec::new();
    for w in words {
        out.extend(b.push(w.clone()));
    }
    out.extend(b.finish(None));
    (out, b.counts())
}

fn text(cue: &Cue) -> String {
    cue.lines.join(" ")
}

/// Every rule a style sets that the speech allows, on every cue.
fn assert_rules(style: &Style, words: &[Word], cues: &[Cue]) {
    let said: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let shown: Vec<String> = cues.iter().flat_map(|c| c.lines.clone()).collect();
    let shown: Vec<&str> = shown.iter().flat_map(|l| l.split(' ')).collect();
    assert_eq!(shown, said, "every word once, in order");
    for (i, cue) in cues.iter().enumerate() {
        assert!(cue.lines.len() <= style.max_lines, "{cue:?}");
        for line in &cue.lines {
            assert!(line.chars().count() <= style.max_chars, "{cue:?}");
        }
        assert!(cue.end_ns > cue.start_ns, "{cue:?}");
        assert!(
            cue.end_ns - cue.start_ns <= style.max_duration_ns,
            "{cue:?}"
        );
        if let Some(next) = cues.get(i + 1) {
            assert!(
                next.start_ns >= cue.end_ns + style.min_gap_ns,
                "{cue:?} then {next:?}"
            );
        }
    }
}

#[test]
fn a_sentence_stays_on_screen_into_the_silence_up_to_its_reading_time() {
    // 8 words of 200 ms with 50 ms between: 1.95 s of speech, 45
    // characters: 2.25 s to read at 20 a second.
    let words = spoken("The weather stays fine and warm this weekend.", 0, 200, 50);
    let cues = cues_live(netflix(), &words);
    assert_eq!(cues.len(), 1, "{cues:?}");
    assert_eq!(cues[0].start_ns, 0);
    assert_eq!(cues[0].end_ns, 2_250 * MS);
    assert_eq!(
        cues[0].lines,
        ["The weather stays fine", "and warm this weekend."]
    );
}

#[test]
fn a_short_cue_stays_its_minimum_where_the_silence_allows() {
    let words = spoken("Goodbye.", 0, 300, 0);
    let cues = cues_live(netflix(), &words);
    assert_eq!(cues[0].end_ns, 833_333_333);
}

#[test]
fn a_cue_ends_the_gap_before_the_next_one() {
    // The first sentence would stay 1.35 s to be read, but the next starts
    // at 1.4 s.
    let mut words = spoken("It was late in the evening.", 0, 150, 50);
    words.extend(spoken("Everyone went home.", 1_400, 200, 50));
    let cues = cues_live(netflix(), &words);
    assert_eq!(cues.len(), 2, "{cues:?}");
    assert_eq!(cues[0].end_ns, 1_400 * MS - netflix().min_gap_ns);
    assert_rules(&netflix(), &words, &cues);
}

#[test]
fn a_short_sentence_followed_at_once_shares_the_cue_of_the_next() {
    // "Yes." cannot stay 5/6 s before the next word: one cue.
    let mut words = spoken("Yes.", 0, 250, 0);
    words.extend(spoken("We will be there by nine tonight.", 350, 200, 50));
    let cues = cues_live(netflix(), &words);
    assert_eq!(cues.len(), 1, "{cues:?}");
    assert_eq!(cues[0].lines, ["Yes. We will be there by nine tonight."]);
}

#[test]
fn a_pause_ends_a_cue_that_can_stay_its_minimum() {
    let mut words = spoken("and then we waited", 0, 250, 50);
    words.extend(spoken("for the bus to come", 2_000, 250, 50));
    let cues = cues_live(netflix(), &words);
    assert_eq!(
        cues.iter().map(text).collect::<Vec<_>>(),
        ["and then we waited", "for the bus to come"]
    );
}

#[test]
fn a_new_speaker_starts_a_new_cue() {
    let mut words: Vec<Word> = spoken("Good evening", 0, 300, 50)
        .into_iter()
        .map(|w| w.by("Host"))
        .collect();
    words.extend(
        spoken("thank you", 700, 300, 50)
            .into_iter()
            .map(|w| w.by("Guest")),
    );
    let (cues, counts) = cues_at_once(netflix(), &words);
    assert_eq!(cues.len(), 2);
    assert_eq!(cues[0].speaker.as_deref(), Some("Host"));
    assert_eq!(cues[1].speaker.as_deref(), Some("Guest"));
    // The first cannot stay 5/6 s: it is counted short.
    assert_eq!(counts.short, 1);
    assert_rules(&netflix(), &words, &cues);
}

#[test]
fn a_long_run_of_speech_is_cut_where_a_person_would_break_it() {
    let words = spoken(
        "Tonight we look at the weather, the roads and the markets, and we ask what the week \
         ahead will bring for families across the whole of the country",
        0,
        300,
        60,
    );
    let (cues, counts) = cues_at_once(netflix(), &words);
    assert_rules(&netflix(), &words, &cues);
    assert_eq!(counts.too_fast, 0, "{cues:?}");
    // Each cue but the last ends at a clause or before a conjunction or a
    // preposition, never after an article.
    for cue in &cues[..cues.len() - 1] {
        let last = cue.lines.last().unwrap().rsplit(' ').next().unwrap();
        assert!(!["the", "a", "an"].contains(&last), "{cues:?}");
    }
    assert!(text(&cues[0]).ends_with("markets,"), "{cues:?}");
}

#[test]
fn speech_faster_than_the_reading_speed_is_counted_and_ends_where_the_next_cue_starts() {
    // 12 words a second: no cue can be read at 20 characters a second.
    let words = spoken(
        "hello from the tiny voxtral test model hello from the tiny voxtral test model hello \
         from the tiny voxtral test model hello from the tiny voxtral test model",
        0,
        70,
        10,
    );
    let (cues, counts) = cues_at_once(netflix(), &words);
    assert_rules(&netflix(), &words, &cues);
    assert!(counts.too_fast >= 1, "{counts:?}");
    for pair in cues.windows(2) {
        assert_eq!(pair[0].end_ns + netflix().min_gap_ns, pair[1].start_ns);
    }
}

#[test]
fn live_and_at_once_give_the_same_cues() {
    let mut words = spoken("Good evening and welcome to the late news.", 0, 220, 60);
    words.extend(spoken(
        "Tonight, the weather and the roads.",
        3_000,
        250,
        40,
    ));
    words.extend(spoken("First the weather", 6_100, 260, 30));
    for style in StyleName::ALL {
        let style = Style::new(style, None, 32);
        let live = cues_live(style.clone(), &words);
        let (at_once, _) = cues_at_once(style.clone(), &words);
        assert_eq!(live, at_once, "{style:?}");
        assert_rules(&style, &words, &live);
    }
}

#[test]
fn a_held_cue_is_the_horizon_until_its_end_is_decided() {
    let mut b = CueBuilder::new(netflix());
    assert_eq!(b.horizon(), None);
    for w in spoken("Goodbye.", 1_000, 300, 0) {
        assert!(b.push(w).is_empty());
    }
    assert_eq!(b.horizon(), Some(1_000 * MS));
    // The cue wants to end at 1.833 s: silence to there and the gap
    // decides it.
    assert!(b.silence_until(1_900 * MS).is_empty());
    let cues = b.silence_until(1_917 * MS);
    assert_eq!(cues.len(), 1);
    assert_eq!(b.horizon(), None);
}

#[test]
fn broadcast_gives_rows_of_max_line_chars_at_sentence_ends_and_pauses() {
    let style = Style::new(StyleName::Broadcast, None, 20);
    let mut words = spoken("one two three four five six seven.", 0, 100, 20);
    words.extend(spoken("eight nine", 2_000, 100, 20));
    let (cues, _) = cues_at_once(style.clone(), &words);
    assert_rules(&style, &words, &cues);
    assert!(cues.iter().all(|c| c.lines.len() == 1));
    assert_eq!(text(&cues[cues.len() - 2]).chars().last(), Some('.'));
    // No extension past the last word.
    assert_eq!(
        cues[0].end_ns,
        words[cues[0].lines[0].split(' ').count() - 1].end_ns
    );
}

#[test]
fn a_finish_caps_the_last_cue_at_the_end_of_the_audio() {
    let mut b = CueBuilder::new(netflix());
    for w in spoken("Goodbye.", 0, 300, 0) {
        b.push(w);
    }
    let cues = b.finish(Some(500 * MS));
    assert_eq!(cues[0].end_ns, 500 * MS);
}

#[test]
fn a_translation_is_split_into_cues_that_share_its_time() {
    let text = "Esta noche miramos el tiempo, las carreteras y los mercados, y preguntamos \
                qué traerá la semana para las familias de todo el país";
    let style = Style::new(StyleName::Netflix, Some("es"), 32);
    let cues = split_text(&style, text, 10_000 * MS, 18_000 * MS, None);
    assert_eq!(cues.len(), 2, "{cues:?}");
    assert_eq!(cues[0].start_ns, 10_000 * MS);
    assert_eq!(cues.last().unwrap().end_ns, 18_000 * MS);
    let shown: Vec<String> = cues.iter().map(text_of).collect();
    assert_eq!(
        shown.join(" "),
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    for pair in cues.windows(2) {
        assert_eq!(pair[0].end_ns + style.min_gap_ns, pair[1].start_ns);
    }
    let broadcast = Style::new(StyleName::Broadcast, None, 32);
    assert_eq!(split_text(&broadcast, text, 0, 1, None).len(), 1);
}

fn text_of(cue: &Cue) -> String {
    text(cue)
}

/// A small pseudo-random generator, so the stream below is the same on
/// every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

#[test]
fn every_rule_holds_on_every_cue_of_a_long_varied_stream() {
    const VOCABULARY: &[&str] = &[
        "the",
        "a",
        "weather",
        "and",
        "roads,",
        "in",
        "country.",
        "markets",
        "we",
        "ask",
        "what",
        "families",
        "tonight",
        "of",
        "because",
        "extraordinarily",
        "it",
        "is.",
        "to",
        "be",
    ];
    for style in StyleName::ALL {
        let style = Style::new(style, None, 32);
        let mut rng = Lcg(7);
        let mut words = Vec::new();
        let mut t = 0;
        for i in 0..2_000 {
            let w = VOCABULARY[rng.next(VOCABULARY.len() as u64) as usize];
            let len = 120 + rng.next(300);
            let speaker = if (i / 150) % 2 == 0 { "A" } else { "B" };
            words.push(Word::new(w, t * MS, (t + len) * MS).by(speaker));
            t += len + [10, 40, 80, 200, 700, 2_500][rng.next(6) as usize];
        }
        let live = cues_live(style.clone(), &words);
        let (at_once, counts) = cues_at_once(style.clone(), &words);
        assert_eq!(live, at_once, "{style:?}");
        assert_rules(&style, &words, &live);
        assert_eq!(counts.cues, live.len() as u64);
    }
}
