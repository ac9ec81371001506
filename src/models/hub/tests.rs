// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

use super::http::{resolve_location, same_host};
use super::*;

#[test]
fn a_quantisation_tag_picks_the_one_gguf_that_carries_it() {
    let names = [
        "README.md",
        "Voxtral-Mini-4B-Realtime-2602-Q4_K_M.gguf",
        "Voxtral-Mini-4B-Realtime-2602-Q4_K_S.gguf",
        "Voxtral-Mini-4B-Realtime-2602-Q8_0.gguf",
        "Voxtral-Mini-4B-Realtime-2602-F16.gguf",
        "Voxtral-Mini-4B-Realtime-2602-BF16.gguf",
    ];
    let pick = |tag| pick_by_tag(names.iter().copied(), tag);
    assert_eq!(
        pick("Q4_K_M"),
        Ok("Voxtral-Mini-4B-Realtime-2602-Q4_K_M.gguf")
    );
    assert_eq!(pick("q8_0"), Ok("Voxtral-Mini-4B-Realtime-2602-Q8_0.gguf"));
    assert_eq!(pick("F16"), Ok("Voxtral-Mini-4B-Realtime-2602-F16.gguf"));
    assert_eq!(pick("Q4_K").unwrap_err(), Vec::<String>::new());
    assert_eq!(pick("Q5_K_M").unwrap_err(), Vec::<String>::new());
}

#[test]
fn a_redirect_location_is_taken_relative_to_the_server() {
    assert_eq!(
        resolve_location("http://h:1/a/b?x", "/c/d"),
        "http://h:1/c/d"
    );
    assert_eq!(
        resolve_location("http://h:1/a", "https://cdn/x"),
        "https://cdn/x"
    );
}

#[test]
fn the_token_goes_only_to_the_endpoint_host() {
    assert!(same_host(
        "https://huggingface.co/a/b",
        "https://huggingface.co"
    ));
    assert!(!same_host(
        "https://cdn.example/a",
        "https://huggingface.co"
    ));
}
