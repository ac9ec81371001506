// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

const MS: u64 = 1_000_000;

fn words_config() -> TranscriptConfig {
    TranscriptConfig {
        release_after_ns: 480 * MS,
        min_duration_ns: 80 * MS,
        segmentation: Segmentation::Words,
    }
}

fn cues(out: &[Output]) -> Vec<Cue> {
    out.iter()
        .filter_map(|o| match o {
            Output::Cue(c) => Some(c.clone()),
            Output::Gap { .. } => None,
        })
        .collect()
}

fn texts(out: &[Output]) -> Vec<String> {
    cues(out).into_iter().map(|c| c.text).collect()
}

/// Checks the invariants every output sequence must keep: time order, no
/// overlap, no gap over a cue, no empty gap. A cue is empty only when there
/// was no audio to place it on.
fn assert_well_formed(out: &[Output]) {
    let mut pos = 0;
    for o in out {
        let (start, end) = match o {
            Output::Cue(c) => (c.start, c.end),
            Output::Gap { start, end } => {
                assert!(end > start, "{o:?} is empty");
                (*start, *end)
            }
        };
        assert!(start >= pos, "{o:?} starts before {pos}");
        assert!(end >= start, "{o:?} ends before it starts");
        pos = end;
    }
}

#[test]
fn text_is_placed_over_the_audio_it_is_about() {
    let mut t = Transcript::new(words_config());
    let mut out = t.push("", 0);
    out.extend(t.push("hello", 320 * MS));
    out.extend(t.push(" world", 640 * MS));
    assert_eq!(
        cues(&out),
        vec![Cue {
            text: "hello".into(),
            start: 0,
            end: 320 * MS
        }]
    );
    // "world" may still grow, so it is held; nothing after its start is
    // promised as silence. The space takes no time: it starts at 320 ms.
    assert_eq!(t.held_text(), "world");
    assert_eq!(t.handed_on(), 320 * MS);
    assert_well_formed(&out);
}

#[test]
fn letters_share_the_stretch_and_spaces_take_no_time() {
    let mut t = Transcript::new(words_config());
    let mut out = t.push(" ab cd", 400 * MS);
    out.extend(t.finish("", 400 * MS));
    let c = cues(&out);
    assert_eq!((c[0].start, c[0].end), (0, 200 * MS));
    assert_eq!((c[1].start, c[1].end), (200 * MS, 400 * MS));
}

#[test]
fn a_word_split_across_decodes_is_one_word() {
    let mut t = Transcript::new(words_config());
    let mut out = t.push("vox", 160 * MS);
    out.extend(t.push("tral is", 240 * MS));
    out.extend(t.finish("", 1000 * MS));
    assert_eq!(texts(&out), vec!["voxtral", "is"]);
    let first = &cues(&out)[0];
    assert_eq!(first.start, 0);
    assert_well_formed(&out);
}

#[test]
fn finishing_hands_on_the_held_word_and_covers_the_audio() {
    let mut t = Transcript::new(words_config());
    let mut out = t.push("last", 520 * MS);
    assert!(texts(&out).is_empty());
    out.extend(t.finish(" words", 1500 * MS));
    assert_eq!(texts(&out), vec!["last", "words"]);
    assert_eq!(t.handed_on(), 1500 * MS);
    assert_eq!(cues(&out)[1].end, 1500 * MS);
    assert_well_formed(&out);
}

#[test]
fn silence_is_handed_on_as_gaps() {
    let mut t = Transcript::new(words_config());
    let out: Vec<Output> = (0..=4).flat_map(|k| t.push("", k * 480 * MS)).collect();
    assert_eq!(
        out.last(),
        Some(&Output::Gap {
            start: 1440 * MS,
            end: 1920 * MS
        })
    );
    assert_eq!(t.handed_on(), 1920 * MS);
    assert_well_formed(&out);
}

#[test]
fn a_word_followed_by_a_pause_is_let_go() {
    let mut t = Transcript::new(words_config());
    let mut out = t.push("hello", 80 * MS);
    assert!(texts(&out).is_empty());
    for k in 1..=10 {
        out.extend(t.push("", (80 + k * 80) * MS));
    }
    assert_eq!(texts(&out), vec!["hello"]);
    // Text after the pause is a new word even without a leading space.
    out.extend(t.push("again", 1520 * MS));
    out.extend(t.finish("", 2400 * MS));
    assert_eq!(texts(&out), vec!["hello", "again"]);
    assert_well_formed(&out);
}

#[test]
fn held_text_can_be_let_go_when_the_input_stalls() {
    let mut t = Transcript::new(TranscriptConfig {
        segmentation: Segmentation::Lines { max_chars: 40 },
        ..words_config()
    });
    let mut out = t.push("one two", 800 * MS);
    assert!(texts(&out).is_empty());
    out.extend(t.release_held());
    assert_eq!(texts(&out), vec!["one two"]);
    assert_eq!(t.handed_on(), 800 * MS);
    // What comes next starts a new line.
    out.extend(t.finish("three", 1600 * MS));
    assert_eq!(texts(&out), vec!["one two", "three"]);
    assert_well_formed(&out);
}

#[test]
fn each_cue_lasts_at_least_the_minimum_when_there_is_room() {
    let mut t = Transcript::new(words_config());
    // Two words in one decode of a very short stretch.
    let mut out = t.push("a b", 40 * MS);
    out.extend(t.finish("", 2000 * MS));
    let c = cues(&out);
    assert_eq!(texts(&out), vec!["a", "b"]);
    assert!(c[1].duration() >= 80 * MS, "{c:?}");
    assert_well_formed(&out);
}

#[test]
fn lines_are_cut_at_the_character_limit() {
    let mut t = Transcript::new(TranscriptConfig {
        segmentation: Segmentation::Lines { max_chars: 12 },
        ..words_config()
    });
    let mut out = t.push("one two three four five", 1520 * MS);
    out.extend(t.finish("", 2500 * MS));
    assert_eq!(texts(&out), vec!["one two", "three four", "five"]);
    for cue in cues(&out) {
        assert!(cue.text.chars().count() <= 12);
    }
    assert_well_formed(&out);
}

#[test]
fn a_line_never_holds_two_speakers() {
    let mut t = Transcript::new(TranscriptConfig {
        segmentation: Segmentation::Lines { max_chars: 40 },
        ..words_config()
    });
    // "one two three four five" spread over 1520 ms: the third word starts
    // at about 600 ms.
    let words = {
        let mut w = Transcript::new(words_config());
        let mut out = w.push("one two three four five", 1520 * MS);
        out.extend(w.finish("", 2500 * MS));
        cues(&out)
    };
    let third = words[2].start;
    t.turn_at(third);
    let mut out = t.push("one two three four five", 1520 * MS);
    out.extend(t.finish("", 2500 * MS));
    assert_eq!(texts(&out), vec!["one two", "three four five"]);
    assert_eq!(cues(&out)[1].start, third);
    assert_well_formed(&out);
}

#[test]
fn a_sentence_end_closes_a_line() {
    let mut t = Transcript::new(TranscriptConfig {
        segmentation: Segmentation::Lines { max_chars: 40 },
        ..words_config()
    });
    let mut out = t.push("Hi there. How", 1520 * MS);
    assert_eq!(texts(&out), vec!["Hi there."]);
    out.extend(t.finish(" are you?", 3000 * MS));
    assert_eq!(texts(&out), vec!["Hi there.", "How are you?"]);
    assert_well_formed(&out);
}

#[test]
fn a_word_longer_than_a_line_is_a_line_of_its_own() {
    let mut t = Transcript::new(TranscriptConfig {
        segmentation: Segmentation::Lines { max_chars: 5 },
        ..words_config()
    });
    let mut out = t.push("a extraordinary b", 1520 * MS);
    out.extend(t.finish("", 2500 * MS));
    assert_eq!(texts(&out), vec!["a", "extraordinary", "b"]);
}

/// A small deterministic generator, so the property test needs no crate.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[test]
fn any_sequence_of_pieces_keeps_every_word_in_order_and_time() {
    let alphabet: Vec<char> = "ab cé  .?x\u{4e2d}".chars().collect();
    for seed in 0..300 {
        let mut rng = Lcg(seed);
        let segmentation = if seed % 2 == 0 {
            Segmentation::Words
        } else {
            Segmentation::Lines {
                max_chars: 1 + rng.next(20) as usize,
            }
        };
        let mut t = Transcript::new(TranscriptConfig {
            segmentation,
            ..words_config()
        });
        let mut all_text = String::new();
        let mut out = Vec::new();
        let mut pos = 0;
        for _ in 0..rng.next(30) {
            let piece: String = (0..rng.next(6))
                .map(|_| alphabet[rng.next(alphabet.len() as u64) as usize])
                .collect();
            pos += rng.next(400) * MS;
            all_text.push_str(&piece);
            out.extend(t.push(&piece, pos));
        }
        out.extend(t.finish("", pos + rng.next(1000) * MS));
        let got: Vec<String> = texts(&out)
            .iter()
            .flat_map(|c| c.split(' ').map(str::to_owned).collect::<Vec<_>>())
            .collect();
        let want: Vec<String> = all_text.split_whitespace().map(str::to_owned).collect();
        // Words released during a pause may split one whitespace-free run,
        // so compare the characters in order.
        assert_eq!(got.concat(), want.concat(), "seed {seed}");
        assert!(got.len() >= want.len(), "seed {seed}");
        assert_well_formed(&out);
    }
}

/// Where each cue left, by start: (start, heard_until when handed on).
fn emission_positions(rules: crate::wording::SharedRules, text: &str) -> Vec<(u64, u64, String)> {
    // 14 characters a second (about 150 words a minute), decoded every
    // 160 ms, as the default settings do.
    const CHAR_NS: u64 = 70 * MS;
    const INTERVAL: u64 = 160 * MS;
    let chars: Vec<char> = text.chars().collect();
    let mut t = Transcript::with_rules(words_config(), rules);
    let mut left = Vec::new();
    let mut sent = 0;
    let mut until = 0;
    while sent < chars.len() {
        until += INTERVAL;
        let due = ((until / CHAR_NS) as usize).min(chars.len());
        let piece: String = chars[sent..due].iter().collect();
        sent = due;
        for c in cues(&t.push(&piece, until)) {
            left.push((c.start, until, c.text));
        }
    }
    for c in cues(&t.finish("", until + INTERVAL)) {
        left.push((c.start, until + INTERVAL, c.text));
    }
    left
}

fn percentile(mut values: Vec<u64>, p: usize) -> u64 {
    values.sort_unstable();
    values[(values.len() * p / 100).min(values.len() - 1)]
}

/// The figures in docs/wording.md ("What it costs"): what holding words
/// that may start a phrase adds to their latency, on news-like speech with
/// rules whose first words are common ("the", "new", "prime").
#[test]
fn a_house_dictionary_adds_a_bounded_hold_to_the_words_that_may_start_a_phrase() {
    let text = "the prime minister met the mayor of new york city on monday \
        and the white house said the talks in new york were good for the \
        prime minister who flew back to the capital on tuesday while the \
        mayor of new jersey spoke to the press about the new budget and \
        the white house press office said the prime numbers were fine and \
        that new york city would get the new money from the state soon";
    let (dictionary, bad) = crate::wording::Dictionary::parse(
        "new york city => New York City\nthe white house => the White House\n\
         prime minister => Prime Minister\nnew jersey => New Jersey",
    );
    assert!(bad.is_empty());
    let rules = crate::wording::SharedRules::default();
    rules.update(|r| r.dictionary = dictionary);
    let plain = emission_positions(Default::default(), text);
    let worded = emission_positions(rules, text);
    let words = text.split_whitespace().count();
    assert_eq!(plain.len(), words);
    assert!(worded.iter().any(|(_, _, t)| t == "White"));
    assert!(worded.iter().any(|(_, _, t)| t == "City"));
    let mut added = Vec::new();
    let mut held = Vec::new();
    // A replacement's later words start inside its first original word's
    // span; each is compared with the original word it starts in.
    for (start, at, _) in &worded {
        let (_, before, _) = plain.iter().rev().find(|(s, ..)| s <= start).unwrap();
        let extra = at - before;
        added.push(extra);
        if extra > 0 {
            held.push(extra);
        }
    }
    let bound = crate::wording::MAX_HOLD_NS + 160 * MS;
    assert!(added.iter().all(|&a| a <= bound), "{added:?}");
    println!(
        "dictionary hold: {} of {} words held; added latency p50 {} ms, p95 {} ms, max {} ms \
         over all words; p95 {} ms over the held ones",
        held.len(),
        worded.len(),
        percentile(added.clone(), 50) / MS,
        percentile(added.clone(), 95) / MS,
        added.iter().max().unwrap() / MS,
        percentile(held, 95) / MS,
    );
}
