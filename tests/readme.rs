// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Runs every gst-launch-1.0 line of the README and of the guides under
//! docs/, so that they cannot drift from the code. The Rust snippet of
//! docs/from-code.md is a doctest (src/lib.rs).

mod common;

use common::DocLine;

#[test]
fn the_readme_shows_the_main_use_cases() {
    let lines = common::doc_launch_lines("");
    let (readme, guides): (Vec<&DocLine>, Vec<&DocLine>) =
        lines.iter().partition(|l| l.file == "README.md");
    // A file to SRT, with the transcriber and with the sink; live captions
    // over video; a vLLM server.
    for part in ["srtenc", "voxtralrtsink", "textoverlay", "engine=vllm"] {
        assert!(
            readme.iter().any(|l| l.contains(part)),
            "the README has no line with {part}"
        );
    }
    for part in [
        "matroskamux",
        "mp4mux",
        "cccombiner",
        "srtsink",
        "rtmp2sink",
        "hlssink2",
        "speech-only=true",
        "replacements=",
        "sample-rack.srt",
        "voxtralrtsubenc",
    ] {
        assert!(
            guides.iter().any(|l| l.contains(part)),
            "no guide has a line with {part}"
        );
    }
}

/// The files of docs/ with a gst-launch-1.0 line are those of
/// `common::DOCS`, whose lines the tests run: a new guide is not left out.
#[test]
fn every_guide_with_a_gst_launch_line_is_in_the_list() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut with_lines = Vec::new();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&path).unwrap();
            if common::launch_lines(&text).next().is_some() {
                with_lines.push(format!(
                    "docs/{}",
                    path.file_name().unwrap().to_str().unwrap()
                ));
            }
        }
    }
    with_lines.sort();
    let mut listed: Vec<String> = common::DOCS
        .iter()
        .map(|(file, _)| file.to_string())
        .filter(|file| file != "README.md")
        .collect();
    listed.sort();
    assert_eq!(
        with_lines, listed,
        "the guides of docs/ with gst-launch-1.0 lines, and those in common::DOCS (tests/common/mod.rs)"
    );
}

#[cfg(feature = "local")]
#[test]
fn every_gst_launch_line_of_the_readme_runs() {
    let dir = common::readme_dir("readme");
    // The SRT line needs a receiver (tests/srt.rs runs it against one), the
    // vLLM lines a server (tests/remote.rs and tests/rack.rs run them against
    // doubles), the RTMP lines an RTMP server (tests/rtmp.rs runs them
    // against nginx-rtmp), the translation line a chat server
    // (tests/translation.rs runs it against the double). The HLS line writes files and runs here too
    // (tests/hls.rs plays what it writes).
    let lines: Vec<DocLine> = common::doc_launch_lines("")
        .into_iter()
        .filter(|l| {
            !l.contains("srtsink")
                && !l.contains("engine=vllm")
                && !l.contains("rtmp2sink")
                && !l.contains("translate-url")
        })
        .collect();
    let mut failed = Vec::new();
    for line in &lines {
        // No window on a test machine.
        let run = line.replace("autovideosink", "fakesink");
        let out = common::readme_line_output(&run, &dir, common::tiny_model());
        let log = common::output_text(&out);
        if !out.status.success() || log.contains("ERROR") {
            failed.push(format!("{line}\n{log}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} lines failed:\n\n{}",
        failed.len(),
        lines.len(),
        failed.join("\n\n")
    );
    let srt = std::fs::read_to_string(dir.join("sample.srt")).unwrap();
    assert!(srt.contains(" --> ") && srt.contains("hello"));
    // The netflix style, from the transcriber and by default from the sink:
    // up to 2 lines of 42 characters a cue.
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert!(read("sample.scc").starts_with("Scenarist_SCC V1.0\n\n"));
    assert!(read("sample.ttml")
        .contains("ttp:contentProfiles=\"http://www.w3.org/ns/ttml/profile/imsc1.1/text\""));
    assert!(read("sample-ebu.xml").contains("urn:ebu:tt:distribution:2018-04"));
    assert!(read("sample.ttml").trim_end().ends_with("</tt>"));
    let styled = read("sample-styled.srt");
    for text in [&srt, &styled] {
        for cue in text.split("\n\n").filter(|c| !c.trim().is_empty()) {
            let lines: Vec<&str> = cue.lines().skip(2).collect();
            assert!((1..=2).contains(&lines.len()), "{cue:?}");
            assert!(lines.iter().all(|l| l.chars().count() <= 42), "{cue:?}");
        }
    }
    let words = std::fs::read_to_string(dir.join("sample-words.srt")).unwrap();
    assert!(words.starts_with("1\n00:00:00,000 --> "), "{words}");
    assert!(std::fs::metadata(dir.join("sample.mkv")).unwrap().len() > 10_000);
    assert!(std::fs::metadata(dir.join("sample.mp4")).unwrap().len() > 10_000);
    assert!(std::fs::metadata(dir.join("captions.ts")).unwrap().len() > 10_000);
    let house = std::fs::read_to_string(dir.join("house.srt")).unwrap();
    assert!(house.contains(" --> "), "{house}");
    let playlist = std::fs::read_to_string(dir.join("playlist.m3u8")).unwrap();
    assert!(
        playlist.contains("#EXT-X-ENDLIST") && playlist.contains("segment00000.ts"),
        "{playlist}"
    );
}
