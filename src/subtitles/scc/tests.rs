// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::*;

fn cue(lines: &[&str], start_ms: u64, end_ms: u64) -> Cue {
    Cue {
        lines: lines.iter().map(|l| l.to_string()).collect(),
        start_ns: start_ms * 1_000_000,
        end_ns: end_ms * 1_000_000,
        speaker: None,
    }
}

fn file(scc: &mut Scc, cues: &[Cue]) -> String {
    let mut out = scc.header();
    for c in cues {
        out.push_str(&scc.cue(c));
    }
    out + &scc.tail()
}

/// (time code, words) of each line after the header.
fn lines(file: &str) -> Vec<(String, Vec<String>)> {
    file.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (tc, words) = l.split_once('\t').expect("a tab after the time code");
            (tc.to_owned(), words.split(' ').map(str::to_owned).collect())
        })
        .collect()
}

fn odd_parity(byte: u8) -> bool {
    byte.count_ones() % 2 == 1
}

#[test]
fn the_file_starts_with_the_scenarist_line_and_has_timed_hex_words() {
    let mut scc = Scc::default();
    let text = file(
        &mut scc,
        &[cue(&["Hello there,", "how are you?"], 2000, 4000)],
    );
    assert!(text.starts_with("Scenarist_SCC V1.0\n\n"));
    for (tc, words) in lines(&text) {
        assert_eq!(tc.len(), 11);
        assert_eq!(&tc[8..9], ";", "drop-frame by default: {tc}");
        for word in words {
            assert_eq!(word.len(), 4, "{word}");
            let value = u16::from_str_radix(&word, 16).unwrap();
            let [a, b] = value.to_be_bytes();
            assert!(odd_parity(a) && odd_parity(b), "{word} has odd parity");
        }
    }
}

#[test]
fn non_drop_frame_time_codes_on_request() {
    let mut scc = Scc::new(SccOptions {
        drop_frame: false,
        ..SccOptions::default()
    });
    let text = file(&mut scc, &[cue(&["Hello"], 70_000, 72_000)]);
    let (tc, _) = &lines(&text)[0];
    assert_eq!(&tc[8..9], ":");
}

#[test]
fn the_caption_shows_on_its_start_frame_and_is_erased_at_its_end() {
    let mut scc = Scc::default();
    let text = file(&mut scc, &[cue(&["Hello"], 2000, 4000)]);
    let lines = lines(&text);
    let eoc = lines.iter().find(|(_, w)| w[0] == "942f").unwrap();
    // 2 s is frame 60 (59.94 rounded): drop-frame 00:00:02;00.
    assert_eq!(eoc.0, "00:00:02;00");
    let edm = lines.last().unwrap();
    assert_eq!(edm.1, ["942c", "942c"]);
    assert_eq!(edm.0, "00:00:04;00");
}

#[test]
fn a_file_cut_after_any_cue_ends_with_the_erase() {
    let mut scc = Scc::default();
    let mut text = scc.header();
    for c in [cue(&["One"], 1000, 2500), cue(&["Two"], 3000, 4500)] {
        text.push_str(&scc.cue(&c));
        let tail = scc.tail();
        assert!(tail.contains("942c 942c"), "{tail}");
        assert!((text.clone() + &tail).ends_with("942c 942c\n\n"));
    }
}

#[test]
fn a_speaker_change_starts_with_chevrons() {
    let mut scc = Scc::default();
    let mut first = cue(&["Hi"], 1000, 2000);
    first.speaker = Some("Anna".into());
    let mut second = cue(&["Hello"], 2000, 3000);
    second.speaker = Some("Anna".into());
    let mut third = cue(&["Bye"], 3000, 4000);
    third.speaker = Some("Ben".into());
    let chevrons = "3e3e"; // ">>"
    assert!(scc.cue(&first).contains(chevrons));
    assert!(!scc.cue(&second).contains(chevrons));
    assert!(scc.cue(&third).contains(chevrons));
}

#[test]
fn characters_outside_608_are_counted() {
    let mut scc = Scc::default();
    // € and the two CJK characters; — is in CEA-608's extended set.
    scc.cue(&cue(&["5 € — 東京"], 1000, 3000));
    assert_eq!(scc.stats().replaced, 3);
    assert_eq!(scc.stats().captions, 1);
}

#[test]
fn a_cue_of_more_than_four_rows_is_shown_as_captions_in_turn() {
    let mut scc = Scc::default();
    let long = "word ".repeat(40);
    // 7 rows: 4, then 3 loaded while the first 4 are on screen.
    let text = scc.cue(&cue(&[long.trim()], 10_000, 18_000));
    assert_eq!(text.matches("942f 942f").count(), 2);
    assert_eq!(scc.stats().captions, 2);
    assert_eq!(scc.stats().max_late_frames, 0);
}

#[test]
fn a_long_cue_right_after_a_short_one_shows_its_first_rows_on_time() {
    let mut scc = Scc::default();
    scc.cue(&cue(&["Yes."], 10_000, 10_900));
    let long = [
        "The committee will now consider the",
        "amendment to the budget before the vote.",
    ];
    let text = scc.cue(&cue(&long, 10_950, 15_000));
    // Four rows cannot load in the 28 frames "Yes." is on screen: the
    // first rows show on time, the rest as a caption after them.
    assert_eq!(text.matches("942f 942f").count(), 2, "{text}");
    assert_eq!(scc.stats().captions, 3);
    assert!(scc.stats().max_late_frames <= 2, "{:?}", scc.stats());
}

#[test]
fn a_caption_that_cannot_load_in_time_is_counted_late() {
    let mut scc = Scc::default();
    // At the very start there is no time to load two full rows.
    let rows = [
        "a caption that fills its row ok",
        "and then another row as well ok",
    ];
    scc.cue(&cue(&rows, 300, 1100));
    assert_eq!(scc.stats().captions, 1);
    assert!(scc.stats().max_late_frames > 20, "{:?}", scc.stats());
}

#[test]
fn roll_up_on_request_sends_the_words_as_aired() {
    let mut scc = Scc::new(SccOptions {
        mode: Mode::RollUp2,
        ..SccOptions::default()
    });
    let text = file(&mut scc, &[cue(&["Hello there"], 1000, 2000)]);
    assert!(text.contains("9425 9425"), "{text}");
    assert!(!text.contains("942f"), "no EOC in roll-up: {text}");
    assert!(text.ends_with("\t942c 942c\n\n"), "{text}");
}

#[test]
fn cc3_uses_the_field_2_control_codes() {
    let mut scc = Scc::new(SccOptions {
        channel: Channel608::Cc3,
        ..SccOptions::default()
    });
    let text = file(&mut scc, &[cue(&["Hola"], 1000, 3000)]);
    assert!(text.contains("152f 152f"), "{text}");
    assert!(!text.contains("942f"), "{text}");
}
