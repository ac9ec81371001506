// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The delivery caption files (issue 44 §2, §3), written from cues and read
//! back by third-party tools: Scenarist SCC by ttconv, pycaption and
//! ffmpeg; IMSC 1.1 Text by ttconv, pycaption and imschrm (the IMSC
//! hypothetical render model); EBU-TT-D by xmllint with the EBU's schema
//! (and ttconv). Each reading must report no problem at all and show every
//! word, in order and in time.
//!
//! The readers (tests/common/readers.rs) take a file path, so the same
//! checks can run on files the sink writes. They need the readers' venv
//! (scripts/setup) and xmllint (Debian libxml2-utils).

mod common;

use std::path::{Path, PathBuf};

use common::readers::{self, words, Kind, Reading};
use common::subtitle_checks::{
    assert_clean, check_scc, check_timed_text, new_rows, scc_words, ttml_words, SCC_SHOW_WITHIN_S,
};
use gstvoxtralrt::caption::{Channel608, Mode};
use gstvoxtralrt::subtitles::scc::{Scc, SccOptions};
use gstvoxtralrt::subtitles::ttml::{Profile, Ttml};
use gstvoxtralrt::subtitles::{Cue, Format};

fn cue(speaker: &str, lines: &[&str], start_ms: u64, end_ms: u64) -> Cue {
    Cue {
        lines: lines.iter().map(|l| l.to_string()).collect(),
        start_ns: start_ms * 1_000_000,
        end_ns: end_ms * 1_000_000,
        speaker: (!speaker.is_empty()).then(|| speaker.to_owned()),
    }
}

/// A talk as a subtitle style cuts it: one or two lines (some longer than
/// CEA-608's 32 columns), 5/6 s to 7 s, pauses between some cues, a short
/// cue right before a long one, characters outside CEA-608 (é ß € — and
/// CJK) and two speakers, then a stretch without one.
fn talk() -> Vec<Cue> {
    vec![
        cue(
            "Anna",
            &["Good evening, and welcome", "to the late news."],
            1_200,
            3_500,
        ),
        cue(
            "Anna",
            &[
                "Tonight: a café on the Straße",
                "sells coffee for 5 € — a lot.",
            ],
            3_600,
            7_000,
        ),
        cue("Ben", &["東京 and 北京 are far apart."], 7_100, 9_000),
        cue("Ben", &["Yes."], 11_000, 11_900),
        cue(
            "Anna",
            &[
                "The committee will now consider the",
                "amendment to the budget before the vote.",
            ],
            11_950,
            16_500,
        ),
        cue("", &["Thank you, and good night."], 17_000, 19_000),
    ]
}

/// Cues past the minute and ten-minute marks where drop-frame time codes
/// skip numbers, and past an hour.
fn long_programme() -> Vec<Cue> {
    vec![
        cue("", &["Before the first minute."], 58_000, 60_500),
        cue("", &["Just after it."], 60_600, 63_000),
        cue("", &["Ten minutes in."], 600_100, 603_000),
        cue("", &["An hour and five minutes."], 3_905_000, 3_908_000),
    ]
}

fn write(path: &Path, format: &mut dyn Format, cues: &[Cue]) {
    let mut text = format.header();
    for c in cues {
        text.push_str(&format.cue(c));
    }
    text.push_str(&format.tail());
    std::fs::write(path, text).unwrap();
}

fn write_scc(dir: &Path, name: &str, options: SccOptions, cues: &[Cue]) -> PathBuf {
    let path = dir.join(name);
    write(&path, &mut Scc::new(options), cues);
    path
}

fn write_ttml(dir: &Path, name: &str, profile: Profile, cues: &[Cue]) -> PathBuf {
    let path = dir.join(name);
    write(&path, &mut Ttml::new(profile, "en"), cues);
    path
}

fn scc_readings(path: &Path) -> Vec<(&'static str, Reading)> {
    vec![
        ("ttconv", readers::ttconv(path, Kind::Scc)),
        ("pycaption", readers::pycaption(path, Kind::Scc)),
        ("ffmpeg", readers::ffmpeg_scc(path)),
    ]
}

/// Reads a pop-on SCC file of `cues` with the three readers and checks
/// everything.
fn check_pop_on_scc(path: &Path, cues: &[Cue]) {
    for (reader, reading) in scc_readings(path) {
        check_scc(&format!("{reader} on {}", path.display()), &reading, cues);
    }
}

#[test]
fn pop_on_scc_is_read_back_by_ttconv_pycaption_and_ffmpeg_with_every_word_in_time() {
    let dir = common::scratch_dir("scc-pop-on");
    let path = write_scc(&dir, "talk.scc", SccOptions::default(), &talk());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("Scenarist_SCC V1.0\n"));
    check_pop_on_scc(&path, &talk());
}

#[test]
fn non_drop_frame_scc_is_read_back_in_time() {
    let dir = common::scratch_dir("scc-ndf");
    let options = SccOptions {
        drop_frame: false,
        ..SccOptions::default()
    };
    let path = write_scc(&dir, "talk.scc", options, &talk());
    assert!(std::fs::read_to_string(&path).unwrap().contains(":00\t"));
    check_pop_on_scc(&path, &talk());
}

#[test]
fn drop_frame_time_codes_stay_on_the_clock_past_minutes_and_hours() {
    let dir = common::scratch_dir("scc-long");
    let path = write_scc(&dir, "long.scc", SccOptions::default(), &long_programme());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("01:05:0"), "{text}");
    check_pop_on_scc(&path, &long_programme());
}

#[test]
fn cc3_scc_is_the_cc1_file_with_field_2_control_codes() {
    let dir = common::scratch_dir("scc-cc3");
    let cc1 = write_scc(&dir, "cc1.scc", SccOptions::default(), &talk());
    let options = SccOptions {
        channel: Channel608::Cc3,
        ..SccOptions::default()
    };
    let cc3 = write_scc(&dir, "cc3.scc", options, &talk());
    // CC3 is data channel 1 of field 2: the same bytes but the
    // miscellaneous control codes, 0x15 instead of 0x14 (with parity:
    // 15xx for 94xx, xx from 20 to 2f).
    let as_field_2 = std::fs::read_to_string(&cc1)
        .unwrap()
        .split(['\t', ' ', '\n'])
        .map(|w| match (w.strip_prefix("94"), w.len()) {
            (Some(xx), 4)
                if (0x20..=0x2f).contains(&(u8::from_str_radix(xx, 16).unwrap() & 0x7f)) =>
            {
                format!("15{xx}")
            }
            _ => w.to_owned(),
        })
        .collect::<Vec<_>>();
    let cc3_text = std::fs::read_to_string(&cc3).unwrap();
    assert_eq!(
        cc3_text.split(['\t', ' ', '\n']).collect::<Vec<_>>(),
        as_field_2
    );
    // ffmpeg's decoder takes data channel 1 of either field: it reads the
    // CC3 file as it reads CC1. (ttconv and pycaption read field 1's CC1
    // only: ttconv skips field 2 codes with a warning, pycaption finds no
    // caption.)
    check_scc("ffmpeg on cc3.scc", &readers::ffmpeg_scc(&cc3), &talk());
}

#[test]
fn roll_up_scc_is_read_back_with_every_word_in_order() {
    let dir = common::scratch_dir("scc-roll-up");
    let options = SccOptions {
        mode: Mode::RollUp2,
        ..SccOptions::default()
    };
    let path = write_scc(&dir, "talk.scc", options, &talk());
    let expected: Vec<String> = scc_words(&talk()).concat();
    let start = talk()[0].start_ns as f64 / 1e9;
    for (reader, reading) in scc_readings(&path) {
        let what = format!("{reader} on roll-up {}", path.display());
        assert_clean(&what, &reading);
        let rows = new_rows(&reading);
        let shown: Vec<String> = rows.iter().flat_map(|(_, row)| words(row)).collect();
        assert_eq!(shown, expected, "{what}");
        let error = rows[0].0 - start;
        assert!(
            error.abs() <= SCC_SHOW_WITHIN_S,
            "{what}: first row at {:.3} s",
            rows[0].0
        );
        eprintln!("{what}: {} rows, {} words", rows.len(), shown.len());
    }
}

#[test]
fn imsc_is_read_back_by_ttconv_pycaption_and_imschrm_with_every_word_in_time() {
    let dir = common::scratch_dir("imsc");
    for cues in [talk(), long_programme()] {
        let path = write_ttml(&dir, "talk.ttml", Profile::Imsc11Text, &cues);
        let name = path.display();
        check_timed_text(
            &format!("ttconv on {name}"),
            &readers::ttconv(&path, Kind::Ttml),
            &cues,
        );
        check_timed_text(
            &format!("pycaption on {name}"),
            &readers::pycaption(&path, Kind::Ttml),
            &cues,
        );
        check_timed_text(
            &format!("imschrm on {name}"),
            &readers::imschrm(&path),
            &cues,
        );
    }
}

#[test]
fn ebu_tt_d_is_valid_against_the_ebu_schema_and_read_back_in_time() {
    let dir = common::scratch_dir("ebu-tt-d");
    for cues in [talk(), long_programme()] {
        let path = write_ttml(&dir, "talk.xml", Profile::EbuTtD, &cues);
        readers::xmllint_ebu_tt_d(&path).unwrap_or_else(|e| panic!("xmllint: {e}"));
        let what = format!("ttconv on {}", path.display());
        check_timed_text(&what, &readers::ttconv(&path, Kind::Ttml), &cues);
    }
}

#[test]
fn the_schema_check_fails_a_document_that_breaks_the_ebu_tt_d_profile() {
    // The check can fail: a paragraph without its xml:id, which EBU-TT-D
    // requires.
    let dir = common::scratch_dir("ebu-tt-d-bad");
    let path = write_ttml(&dir, "talk.xml", Profile::EbuTtD, &talk());
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(" xml:id=\"c2\"", "");
    std::fs::write(&path, text).unwrap();
    let said = readers::xmllint_ebu_tt_d(&path).expect_err("invalid");
    assert!(
        said.contains("xml:id") || said.contains("namespace}id"),
        "{said}"
    );
}

#[test]
fn a_file_cut_after_any_cue_is_read_back_whole() {
    let dir = common::scratch_dir("cut-files");
    let cues = talk();
    for n in 0..=cues.len() {
        let part = &cues[..n];
        let scc = write_scc(&dir, &format!("cut{n}.scc"), SccOptions::default(), part);
        let reading = readers::ttconv(&scc, Kind::Scc);
        assert_clean(&format!("ttconv on {}", scc.display()), &reading);
        assert_eq!(reading.words(), scc_words(part).concat());
        if let Some(last) = reading.captions.last() {
            assert!(last.end.is_some(), "the last caption is erased: {last:?}");
        }

        let imsc = write_ttml(&dir, &format!("cut{n}.ttml"), Profile::Imsc11Text, part);
        let reading = readers::ttconv(&imsc, Kind::Ttml);
        assert_clean(&format!("ttconv on {}", imsc.display()), &reading);
        assert_eq!(reading.words(), ttml_words(part).concat());

        let ebu = write_ttml(&dir, &format!("cut{n}.xml"), Profile::EbuTtD, part);
        readers::xmllint_ebu_tt_d(&ebu).unwrap_or_else(|e| panic!("{n} cues: {e}"));
    }
}
