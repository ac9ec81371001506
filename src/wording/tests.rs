// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

const MS: u64 = 1_000_000;

fn rules(dictionary: &str, profanity: ProfanityMode, extra: &str) -> SharedRules {
    let shared = SharedRules::default();
    let (dictionary, bad) = Dictionary::parse(dictionary);
    assert!(bad.is_empty(), "{bad:?}");
    shared.update(|r| {
        r.dictionary = dictionary;
        r.profanity = Profanity {
            mode: profanity,
            extra: Profanity::parse_list(extra),
        };
    });
    shared
}

/// Words 400 ms apart, each 300 ms long.
fn spoken(text: &str) -> Vec<Timed> {
    text.split_whitespace()
        .enumerate()
        .map(|(i, w)| Timed {
            text: w.to_owned(),
            start: i as u64 * 400 * MS,
            end: i as u64 * 400 * MS + 300 * MS,
        })
        .collect()
}

fn rewrite(shared: &SharedRules, text: &str) -> Vec<Timed> {
    let mut r = Rewriter::new(shared.clone());
    let mut out = Vec::new();
    for w in spoken(text) {
        out.extend(r.push(w));
    }
    out.extend(r.flush());
    out
}

fn texts(words: &[Timed]) -> String {
    words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_rule_matches_whole_words_in_any_case_and_keeps_punctuation() {
    let shared = rules(
        "voxtral => Voxtral\ng streamer => GStreamer",
        ProfanityMode::Off,
        "",
    );
    assert_eq!(
        texts(&rewrite(&shared, "VOXTRAL, voxtrals g Streamer. g")),
        "VOXTRAL, voxtrals GStreamer. g"
    );
}

#[test]
fn a_capital_first_letter_is_kept_and_a_lower_case_one_leaves_the_house_spelling() {
    let shared = rules(
        "gonna => going to\nmistral => Mistral AI",
        ProfanityMode::Off,
        "",
    );
    assert_eq!(
        texts(&rewrite(&shared, "Gonna ask mistral. gonna")),
        "Going to ask Mistral AI. going to"
    );
}

#[test]
fn a_phrase_takes_the_start_of_its_first_word_and_the_end_of_its_last() {
    let shared = rules("new york city => NYC", ProfanityMode::Off, "");
    let out = rewrite(&shared, "in new york city today");
    assert_eq!(texts(&out), "in NYC today");
    assert_eq!((out[1].start, out[1].end), (400 * MS, 1500 * MS));
    // A phrase for a phrase: a word each, sharing the span by letters.
    let shared = rules("the white house => the White House", ProfanityMode::Off, "");
    let out = rewrite(&shared, "at the white house");
    let spans: Vec<_> = out
        .iter()
        .map(|w| (w.text.as_str(), w.start / MS, w.end / MS))
        .collect();
    assert_eq!(
        spans,
        [
            ("at", 0, 300),
            ("the", 400, 653),
            ("White", 653, 1076),
            ("House", 1076, 1500)
        ]
    );
}

#[test]
fn a_word_replaced_by_several_ends_where_it_ended_before_the_next_word() {
    let shared = rules("asap => as soon as possible", ProfanityMode::Off, "");
    let out = rewrite(&shared, "call asap please");
    assert_eq!(texts(&out), "call as soon as possible please");
    assert!(out.windows(2).all(|w| w[0].end <= w[1].start), "{out:?}");
    assert_eq!((out[1].start, out[4].end), (400 * MS, 700 * MS));
}

#[test]
fn the_longest_rule_wins_and_a_failed_phrase_falls_back_to_a_shorter_one() {
    let shared = rules(
        "new => NEW-1\nnew york => NY\nnew york city => NYC",
        ProfanityMode::Off,
        "",
    );
    assert_eq!(texts(&rewrite(&shared, "new york city")), "NYC");
    assert_eq!(texts(&rewrite(&shared, "new york state")), "NY state");
    assert_eq!(texts(&rewrite(&shared, "new jersey")), "NEW-1 jersey");
}

#[test]
fn a_word_that_could_start_a_rule_is_held_and_others_are_not() {
    let shared = rules("new york city => NYC", ProfanityMode::Off, "");
    let mut r = Rewriter::new(shared);
    let mut words = spoken("in new york town").into_iter();
    assert_eq!(texts(&r.push(words.next().unwrap())), "in");
    assert!(r.push(words.next().unwrap()).is_empty());
    assert!(r.push(words.next().unwrap()).is_empty());
    assert_eq!(r.held().len(), 2);
    assert_eq!(texts(&r.push(words.next().unwrap())), "new york town");
}

#[test]
fn the_hold_is_given_up_after_a_second_of_audio() {
    let shared = rules("new york city => NYC", ProfanityMode::Off, "");
    let mut r = Rewriter::new(shared);
    let new = spoken("new").remove(0);
    let end = new.end;
    assert!(r.push(new).is_empty());
    assert!(r.release_stale(end + MAX_HOLD_NS - 1).is_empty());
    assert_eq!(texts(&r.release_stale(end + MAX_HOLD_NS)), "new");
}

#[test]
fn bad_lines_are_named_and_the_other_rules_still_apply() {
    let text = "# house words\n\
                voxtral => Voxtral   # the model\n\
                no arrow here\n\
                => nothing before\n\
                after =>\n\
                a b c d e f g => too long\n\
                at&t => AT&T#1 # a '#' inside a word is not a comment\n\
                voxtral => VoxtralRT\n";
    let (dictionary, bad) = Dictionary::parse(text);
    let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
    assert_eq!(lines, [3, 4, 5, 6, 8], "{bad:?}");
    assert!(bad[0].to_string().starts_with("line 3: "), "{}", bad[0]);
    assert_eq!(dictionary.len(), 2);
    let shared = SharedRules::default();
    shared.update(|r| r.dictionary = dictionary);
    assert_eq!(
        texts(&rewrite(&shared, "voxtral at at&t.")),
        "VoxtralRT at AT&T#1."
    );
}

#[test]
fn a_dictionary_that_is_not_utf8_or_missing_is_an_error_naming_the_file() {
    let dir = std::env::temp_dir().join(format!("voxtralrt-dict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let latin1 = dir.join("latin1.txt");
    std::fs::write(&latin1, b"caf\xe9 => cafe\n").unwrap();
    let err = Dictionary::load(&latin1).unwrap_err();
    assert!(err.contains("latin1.txt") && err.contains("UTF-8"), "{err}");
    let err = Dictionary::load(&dir.join("missing.txt")).unwrap_err();
    assert!(err.contains("missing.txt"), "{err}");
}

#[test]
fn profanity_is_masked_removed_or_tagged_and_clean_words_pass() {
    let text = "what the fuck, Scunthorpe class shitty assassin crap";
    let expect = [
        (ProfanityMode::Off, text.to_owned()),
        (
            ProfanityMode::Mask,
            "what the f***, Scunthorpe class s***** assassin crap".to_owned(),
        ),
        (
            ProfanityMode::Remove,
            "what the Scunthorpe class assassin crap".to_owned(),
        ),
        (
            ProfanityMode::Tag,
            "what the [bleep], Scunthorpe class [bleep] assassin crap".to_owned(),
        ),
    ];
    for (mode, expected) in expect {
        let shared = rules("", mode, "");
        assert_eq!(texts(&rewrite(&shared, text)), expected, "{mode:?}");
    }
}

#[test]
fn the_users_list_adds_words_in_any_case() {
    let shared = rules("", ProfanityMode::Mask, "Frak, gorram");
    assert_eq!(
        texts(&rewrite(&shared, "FRAK this gorram ship")),
        "F*** this g***** ship"
    );
}

#[test]
fn a_replacement_is_checked_for_profanity_too() {
    let shared = rules("darn => damn fuck", ProfanityMode::Tag, "");
    assert_eq!(texts(&rewrite(&shared, "oh darn")), "oh damn [bleep]");
}

#[test]
fn a_change_of_rules_applies_from_the_next_word() {
    let shared = rules("", ProfanityMode::Off, "");
    let mut r = Rewriter::new(shared.clone());
    let mut words = spoken("voxtral voxtral").into_iter();
    assert_eq!(texts(&r.push(words.next().unwrap())), "voxtral");
    let (dictionary, _) = Dictionary::parse("voxtral => Voxtral");
    shared.update(|rules| rules.dictionary = dictionary);
    assert_eq!(texts(&r.push(words.next().unwrap())), "Voxtral");
}

#[test]
fn a_held_word_goes_as_soon_as_the_next_word_cannot_continue_the_rule() {
    let shared = rules("new york city => NYC", ProfanityMode::Off, "");
    let mut r = Rewriter::new(shared);
    assert!(r.push(spoken("new").remove(0)).is_empty());
    assert!(r.next_word_begins("Yo").is_empty());
    assert_eq!(texts(&r.next_word_begins("Yon")), "new");
}
