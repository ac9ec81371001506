// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The elements' figures in Prometheus' text exposition format (0.0.4):
//! `voxtralrt_*` families in base units (seconds), `_total` counters, every
//! series labelled `element`, plus `pad` where it is per pad and `language`
//! for translations. An element with request pads counts the streams of all
//! its pads together.

use std::fmt::Write;

use super::health;
use super::snapshot::{bool_of, str_of, structures, u64_of, ElementView};

/// The content type of `/metrics`.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The families, in the order they are written: name, type, help.
const FAMILIES: &[(&str, &str, &str)] = &[
    (
        "voxtralrt_build_info",
        "gauge",
        "The plugin's and GStreamer's versions (always 1).",
    ),
    (
        "voxtralrt_ready",
        "gauge",
        "1 when the element is ready as /readyz tells it, else 0.",
    ),
    (
        "voxtralrt_audio_received_seconds_total",
        "counter",
        "Audio that reached the element.",
    ),
    (
        "voxtralrt_audio_transcribed_seconds_total",
        "counter",
        "Audio the model has decoded.",
    ),
    (
        "voxtralrt_audio_skipped_seconds_total",
        "counter",
        "Live audio skipped because the model fell behind (overload=skip).",
    ),
    (
        "voxtralrt_words_total",
        "counter",
        "Words that left the pad.",
    ),
    (
        "voxtralrt_lag_seconds",
        "gauge",
        "Audio waiting for the model now: how far the text is behind the audio.",
    ),
    (
        "voxtralrt_word_lag_seconds",
        "histogram",
        "Each word's lag: from when its audio reached the element to when it left.",
    ),
    (
        "voxtralrt_last_word_age_seconds",
        "gauge",
        "Time since the pad's last word (or since the element started).",
    ),
    (
        "voxtralrt_model_steps_total",
        "counter",
        "80 ms frames the model has decoded.",
    ),
    (
        "voxtralrt_watchdog_restarts_total",
        "counter",
        "Model streams the stall watchdog restarted.",
    ),
    (
        "voxtralrt_caption_alarm",
        "gauge",
        "1 while people talk and no word leaves (caption-alarm), else 0.",
    ),
    (
        "voxtralrt_caption_words_dropped_total",
        "counter",
        "Words CEA-608 captions could not carry.",
    ),
    (
        "voxtralrt_server_connects_total",
        "counter",
        "engine=vllm: connections made to the server.",
    ),
    (
        "voxtralrt_server_errors_total",
        "counter",
        "engine=vllm: connections to the server that failed or were lost.",
    ),
    (
        "voxtralrt_server_failovers_total",
        "counter",
        "engine=vllm: lost connections taken on by another server.",
    ),
    (
        "voxtralrt_translation_requests_total",
        "counter",
        "Translation requests sent.",
    ),
    (
        "voxtralrt_translation_failures_total",
        "counter",
        "Units whose translation failed.",
    ),
    (
        "voxtralrt_translation_catch_ups_total",
        "counter",
        "Requests that merged units which had waited.",
    ),
    (
        "voxtralrt_translation_lag_seconds",
        "histogram",
        "Each translation's lag: from when its last source word reached the pad to when it left.",
    ),
];

/// The samples of one scrape, by family.
struct Samples(Vec<Vec<String>>);

impl Samples {
    fn add(&mut self, family: &str, labels: &[(&str, &str)], value: f64) {
        let k = FAMILIES
            .iter()
            .position(|f| f.0 == family)
            .expect("a known family");
        self.0[k].push(format!(
            "{family}{} {}",
            label_set(labels, None),
            number(value)
        ));
    }

    /// A histogram's series from a `stats` histogram structure (or the sum
    /// of several).
    fn histogram(&mut self, family: &str, labels: &[(&str, &str)], parts: &[&gst::StructureRef]) {
        let k = FAMILIES
            .iter()
            .position(|f| f.0 == family)
            .expect("a known family");
        let Some(first) = parts.first() else {
            return;
        };
        let bounds = u64s(first, "bounds");
        let mut counts = vec![0u64; bounds.len()];
        for part in parts {
            for (total, n) in counts.iter_mut().zip(u64s(part, "counts")) {
                *total += n;
            }
        }
        let count: u64 = parts.iter().map(|p| u64_of(p, "count")).sum();
        let sum: u64 = parts.iter().map(|p| u64_of(p, "sum")).sum();
        let lines = &mut self.0[k];
        for (bound, n) in bounds.iter().zip(&counts) {
            let le = number(seconds(*bound));
            lines.push(format!(
                "{family}_bucket{} {n}",
                label_set(labels, Some(&le))
            ));
        }
        lines.push(format!(
            "{family}_bucket{} {count}",
            label_set(labels, Some("+Inf"))
        ));
        lines.push(format!(
            "{family}_sum{} {}",
            label_set(labels, None),
            number(seconds(sum))
        ));
        lines.push(format!("{family}_count{} {count}", label_set(labels, None)));
    }
}

/// The text of `/metrics` for these elements.
pub(super) fn render(elements: &[ElementView]) -> String {
    let mut samples = Samples(vec![Vec::new(); FAMILIES.len()]);
    let (major, minor, micro, _) = gst::version();
    let version = concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID"));
    let gstreamer = format!("{major}.{minor}.{micro}");
    samples.add(
        "voxtralrt_build_info",
        &[("version", version), ("gstreamer", &gstreamer)],
        1.0,
    );
    for element in elements {
        add_element(&mut samples, element);
    }
    let mut text = String::new();
    for ((name, kind, help), lines) in FAMILIES.iter().zip(&samples.0) {
        let _ = writeln!(text, "# HELP {name} {help}");
        let _ = writeln!(text, "# TYPE {name} {kind}");
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

fn add_element(samples: &mut Samples, e: &ElementView) {
    let element = [("element", e.name.as_str())];
    let pad = [("element", e.name.as_str()), ("pad", e.pad)];
    let cores = e.cores();
    let ready = health::problems(e).is_empty();
    samples.add("voxtralrt_ready", &element, f64::from(u8::from(ready)));
    for (family, field) in [
        ("voxtralrt_audio_received_seconds_total", "audio-received"),
        (
            "voxtralrt_audio_transcribed_seconds_total",
            "audio-transcribed",
        ),
        ("voxtralrt_audio_skipped_seconds_total", "audio-skipped"),
    ] {
        samples.add(family, &element, seconds(e.sum(field)));
    }
    samples.add("voxtralrt_words_total", &pad, e.sum("words") as f64);
    let lag = cores.iter().map(|c| u64_of(c, "lag")).max().unwrap_or(0);
    samples.add("voxtralrt_lag_seconds", &element, seconds(lag));
    let lags: Vec<&gst::StructureRef> = cores
        .iter()
        .filter_map(|c| c.get::<&gst::StructureRef>("word-lag").ok())
        .collect();
    samples.histogram("voxtralrt_word_lag_seconds", &element, &lags);
    let age = cores
        .iter()
        .map(|c| u64_of(c, "last-word-age"))
        .min()
        .unwrap_or(0);
    samples.add("voxtralrt_last_word_age_seconds", &pad, seconds(age));
    samples.add(
        "voxtralrt_model_steps_total",
        &element,
        e.sum("model-steps") as f64,
    );
    samples.add(
        "voxtralrt_watchdog_restarts_total",
        &element,
        e.sum("stalls") as f64,
    );
    let alarm = cores.iter().any(|c| bool_of(c, "caption-alarm"));
    samples.add("voxtralrt_caption_alarm", &pad, f64::from(u8::from(alarm)));
    if e.stats.has_field("caption-words-dropped") {
        let dropped = u64_of(&e.stats, "caption-words-dropped");
        samples.add(
            "voxtralrt_caption_words_dropped_total",
            &element,
            dropped as f64,
        );
    }
    add_servers(samples, e, &cores);
    for t in e.translations() {
        add_translation(samples, &e.name, t);
    }
}

/// Each server of `url` (a bounded list), its counts over the streams.
fn add_servers(samples: &mut Samples, e: &ElementView, cores: &[&gst::StructureRef]) {
    if !cores.iter().any(|c| str_of(c, "engine") == "vllm") {
        return;
    }
    let mut servers: Vec<(String, u64, u64)> = Vec::new();
    for server in cores.iter().flat_map(|c| structures(c, "servers")) {
        let url = str_of(server, "url");
        let k = match servers.iter().position(|s| s.0 == url) {
            Some(k) => k,
            None => {
                servers.push((url.to_owned(), 0, 0));
                servers.len() - 1
            }
        };
        servers[k].1 += u64_of(server, "connections");
        servers[k].2 += u64_of(server, "failures");
    }
    for (url, connects, errors) in &servers {
        let labels = [("element", e.name.as_str()), ("server", url.as_str())];
        samples.add("voxtralrt_server_connects_total", &labels, *connects as f64);
        samples.add("voxtralrt_server_errors_total", &labels, *errors as f64);
    }
    let element = [("element", e.name.as_str())];
    samples.add(
        "voxtralrt_server_failovers_total",
        &element,
        e.sum("failovers") as f64,
    );
}

fn add_translation(samples: &mut Samples, element: &str, t: &gst::StructureRef) {
    let (pad, language) = (str_of(t, "pad"), str_of(t, "language-code"));
    let labels = [("element", element), ("pad", pad), ("language", language)];
    let per_pad = [("element", element), ("pad", pad)];
    samples.add("voxtralrt_words_total", &per_pad, u64_of(t, "words") as f64);
    for (family, field) in [
        ("voxtralrt_translation_requests_total", "requests"),
        ("voxtralrt_translation_failures_total", "failures"),
        ("voxtralrt_translation_catch_ups_total", "catch-ups"),
    ] {
        samples.add(family, &labels, u64_of(t, field) as f64);
    }
    if let Ok(lag) = t.get::<&gst::StructureRef>("lag") {
        samples.histogram("voxtralrt_translation_lag_seconds", &labels, &[lag]);
    }
    let age = seconds(u64_of(t, "last-translation-age"));
    samples.add("voxtralrt_last_word_age_seconds", &per_pad, age);
    let alarm = f64::from(u8::from(bool_of(t, "caption-alarm")));
    samples.add("voxtralrt_caption_alarm", &per_pad, alarm);
}

fn u64s(s: &gst::StructureRef, field: &str) -> Vec<u64> {
    s.get::<gst::ArrayRef>(field)
        .map(|a| a.iter().filter_map(|v| v.get::<u64>().ok()).collect())
        .unwrap_or_default()
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// A sample value as Prometheus reads it.
fn number(value: f64) -> String {
    if value.is_finite() {
        format!("{value}")
    } else {
        "NaN".into()
    }
}

/// `{name="value",...}`, with `le` last when given.
fn label_set(labels: &[(&str, &str)], le: Option<&str>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(name, value)| format!("{name}=\"{}\"", escape(value)))
        .collect();
    if let Some(le) = le {
        parts.push(format!("le=\"{le}\""));
    }
    format!("{{{}}}", parts.join(","))
}

/// A label value escaped as the text format requires.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(
            label_set(&[("element", "a\"b\\c\nd")], Some("0.5")),
            r#"{element="a\"b\\c\nd",le="0.5"}"#
        );
    }

    #[test]
    fn a_histogram_sums_its_parts_and_ends_with_inf() {
        gst::init().unwrap();
        let mut h = crate::core::lag::LagHistogram::default();
        h.observe(std::time::Duration::from_millis(300));
        let s = h.to_structure();
        let mut samples = Samples(vec![Vec::new(); FAMILIES.len()]);
        samples.histogram("voxtralrt_word_lag_seconds", &[("element", "t")], &[&s, &s]);
        let k = FAMILIES
            .iter()
            .position(|f| f.0 == "voxtralrt_word_lag_seconds")
            .unwrap();
        let lines = &samples.0[k];
        assert!(lines
            .contains(&r#"voxtralrt_word_lag_seconds_bucket{element="t",le="0.25"} 0"#.to_owned()));
        assert!(lines
            .contains(&r#"voxtralrt_word_lag_seconds_bucket{element="t",le="0.5"} 2"#.to_owned()));
        assert!(lines
            .contains(&r#"voxtralrt_word_lag_seconds_bucket{element="t",le="+Inf"} 2"#.to_owned()));
        assert!(lines.contains(&r#"voxtralrt_word_lag_seconds_sum{element="t"} 0.6"#.to_owned()));
        assert!(lines.contains(&r#"voxtralrt_word_lag_seconds_count{element="t"} 2"#.to_owned()));
    }
}
