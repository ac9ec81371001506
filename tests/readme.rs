// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Runs every gst-launch-1.0 line of the README, so that it cannot drift from
//! the code. The Rust snippet is a doctest (the README is the crate's docs).

mod common;

#[test]
fn the_readme_shows_the_main_use_cases() {
    let lines = common::doc_launch_lines("");
    assert!(lines.iter().any(|l| l.contains("srtenc")));
    assert!(lines.iter().any(|l| l.contains("voxtralrtsink")));
    assert!(lines.iter().any(|l| l.contains("textoverlay")));
    assert!(lines.iter().any(|l| l.contains("matroskamux")));
    assert!(lines.iter().any(|l| l.contains("mp4mux")));
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
    // against nginx-rtmp).
    for line in common::doc_launch_lines("").into_iter().filter(|l| {
        !l.contains("srtsink") && !l.contains("engine=vllm") && !l.contains("rtmp2sink")
    }) {
        // No window on a test machine.
        common::run_readme_line(&line.replace("autovideosink", "fakesink"), &dir);
    }
    let srt = std::fs::read_to_string(dir.join("sample.srt")).unwrap();
    assert!(srt.contains(" --> ") && srt.contains("hello"));
    let words = std::fs::read_to_string(dir.join("sample-words.srt")).unwrap();
    assert!(words.starts_with("1\n00:00:00,000 --> "), "{words}");
    assert!(std::fs::metadata(dir.join("sample.mkv")).unwrap().len() > 10_000);
    assert!(std::fs::metadata(dir.join("sample.mp4")).unwrap().len() > 10_000);
}
