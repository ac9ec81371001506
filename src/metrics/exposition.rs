// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The elements' figures in Prometheus' text format (0.0.4), written by
//! prometheus-client: `voxtralrt_*` families in base units (seconds),
//! `_total` counters, every series labelled `element`, plus `pad` where it
//! is per pad, `language` for translations and `server` for servers. An
//! element with request pads counts the streams of all its pads together.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{prometheus_text, DescriptorEncoder, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType::{self, Counter, Gauge, Histogram as Buckets};
use prometheus_client::registry::{Registry, Unit};

use super::health;
use super::snapshot::{ElementFigures, Histogram, StreamTotals, TranslationFigures};

/// The content type of `/metrics`.
pub(super) const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// A family of series. Its name is as prometheus-client takes it: the
/// unit, and `_total` for a counter, are added when it is written.
#[derive(Debug)]
struct Family {
    name: &'static str,
    unit: Option<Unit>,
    kind: MetricType,
    help: &'static str,
}

const fn family(
    name: &'static str,
    unit: Option<Unit>,
    kind: MetricType,
    help: &'static str,
) -> Family {
    Family {
        name,
        unit,
        kind,
        help,
    }
}

const SECONDS: Option<Unit> = Some(Unit::Seconds);

static BUILD_INFO: Family = family(
    "voxtralrt_build_info",
    None,
    Gauge,
    "The plugin's and GStreamer's versions (always 1).",
);
static READY: Family = family(
    "voxtralrt_ready",
    None,
    Gauge,
    "1 when the element is ready as /readyz tells it, else 0.",
);
static AUDIO_RECEIVED: Family = family(
    "voxtralrt_audio_received",
    SECONDS,
    Counter,
    "Audio that reached the element.",
);
static AUDIO_TRANSCRIBED: Family = family(
    "voxtralrt_audio_transcribed",
    SECONDS,
    Counter,
    "Audio the model has decoded.",
);
static AUDIO_SKIPPED: Family = family(
    "voxtralrt_audio_skipped",
    SECONDS,
    Counter,
    "Live audio skipped because the model fell behind (overload=skip).",
);
static WORDS: Family = family("voxtralrt_words", None, Counter, "Words that left the pad.");
static LAG: Family = family(
    "voxtralrt_lag",
    SECONDS,
    Gauge,
    "Audio waiting for the model now: how far the text is behind the audio.",
);
static WORD_LAG: Family = family(
    "voxtralrt_word_lag",
    SECONDS,
    Buckets,
    "Each word's lag: from when its audio reached the element to when it left.",
);
static LAST_WORD_AGE: Family = family(
    "voxtralrt_last_word_age",
    SECONDS,
    Gauge,
    "Time since the pad's last word (or since the element started).",
);
static MODEL_STEPS: Family = family(
    "voxtralrt_model_steps",
    None,
    Counter,
    "80 ms frames the model has decoded.",
);
static WATCHDOG_RESTARTS: Family = family(
    "voxtralrt_watchdog_restarts",
    None,
    Counter,
    "Model streams the stall watchdog restarted.",
);
static CAPTION_ALARM: Family = family(
    "voxtralrt_caption_alarm",
    None,
    Gauge,
    "1 while people talk and no word leaves (caption-alarm), else 0.",
);
static CAPTION_WORDS_DROPPED: Family = family(
    "voxtralrt_caption_words_dropped",
    None,
    Counter,
    "Words CEA-608 captions could not carry.",
);
static SUBTITLE_CUES: Family = family(
    "voxtralrt_subtitle_cues",
    None,
    Counter,
    "Cues of subtitle-style made.",
);
static SUBTITLE_CUES_TOO_FAST: Family = family(
    "voxtralrt_subtitle_cues_too_fast",
    None,
    Counter,
    "Cues whose speech was faster to read than the style allows.",
);
static SUBTITLE_CUES_SHORT: Family = family(
    "voxtralrt_subtitle_cues_short",
    None,
    Counter,
    "Cues the next word cut below the style's least time.",
);
static SUBTITLE_CHARS_REPLACED: Family = family(
    "voxtralrt_subtitle_chars_replaced",
    None,
    Counter,
    "Characters an SCC file could not carry, transliterated.",
);
static INVALID_UTF8_BUFFERS: Family = family(
    "voxtralrt_invalid_utf8_buffers",
    None,
    Counter,
    "Text buffers that were not UTF-8 (voxtralrtsubenc).",
);
static SERVER_CONNECTS: Family = family(
    "voxtralrt_server_connects",
    None,
    Counter,
    "engine=vllm: connections made to the server.",
);
static SERVER_ERRORS: Family = family(
    "voxtralrt_server_errors",
    None,
    Counter,
    "engine=vllm: connections to the server that failed or were lost.",
);
static SERVER_FAILOVERS: Family = family(
    "voxtralrt_server_failovers",
    None,
    Counter,
    "engine=vllm: lost connections taken on by another server.",
);
static TRANSLATION_REQUESTS: Family = family(
    "voxtralrt_translation_requests",
    None,
    Counter,
    "Translation requests sent.",
);
static TRANSLATION_FAILURES: Family = family(
    "voxtralrt_translation_failures",
    None,
    Counter,
    "Units whose translation failed.",
);
static TRANSLATION_CATCH_UPS: Family = family(
    "voxtralrt_translation_catch_ups",
    None,
    Counter,
    "Requests that merged units which had waited.",
);
static TRANSLATION_LAG: Family = family(
    "voxtralrt_translation_lag",
    SECONDS,
    Buckets,
    "Each translation's lag: from when its last source word reached the pad to when it left.",
);

/// The families, in the order they are written.
static FAMILIES: [&Family; 25] = [
    &BUILD_INFO,
    &READY,
    &AUDIO_RECEIVED,
    &AUDIO_TRANSCRIBED,
    &AUDIO_SKIPPED,
    &WORDS,
    &LAG,
    &WORD_LAG,
    &LAST_WORD_AGE,
    &MODEL_STEPS,
    &WATCHDOG_RESTARTS,
    &CAPTION_ALARM,
    &CAPTION_WORDS_DROPPED,
    &SUBTITLE_CUES,
    &SUBTITLE_CUES_TOO_FAST,
    &SUBTITLE_CUES_SHORT,
    &SUBTITLE_CHARS_REPLACED,
    &INVALID_UTF8_BUFFERS,
    &SERVER_CONNECTS,
    &SERVER_ERRORS,
    &SERVER_FAILOVERS,
    &TRANSLATION_REQUESTS,
    &TRANSLATION_FAILURES,
    &TRANSLATION_CATCH_UPS,
    &TRANSLATION_LAG,
];

/// The text of `/metrics` for these elements.
pub(super) fn render(elements: Vec<ElementFigures>) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Scrape(elements)));
    let mut text = String::new();
    prometheus_text::encode(&mut text, &registry)?;
    Ok(text)
}

/// One scrape's figures, written when the registry is encoded.
#[derive(Debug)]
struct Scrape(Vec<ElementFigures>);

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let series = series(&self.0);
        for family in FAMILIES {
            let of_family: Vec<&Series> = series
                .iter()
                .filter(|s| std::ptr::eq(s.family, family))
                .collect();
            if of_family.is_empty() {
                continue;
            }
            let mut metric = encoder.encode_descriptor(
                family.name,
                family.help,
                family.unit.as_ref(),
                family.kind,
            )?;
            for s in of_family {
                s.encode(&mut metric)?;
            }
        }
        Ok(())
    }
}

/// One series: its family, labels and value.
struct Series {
    family: &'static Family,
    labels: Labels,
    value: Value,
}

type Labels = Vec<(&'static str, String)>;

enum Value {
    Count(u64),
    Seconds(u64),
    Buckets(Histogram),
}

impl Series {
    fn encode(&self, metric: &mut MetricEncoder) -> std::fmt::Result {
        let mut series = metric.encode_family(&self.labels)?;
        match (&self.value, self.family.kind) {
            (Value::Count(n), Counter) => series.encode_counter::<NoLabelSet, _, u64>(n, None),
            (Value::Count(n), _) => series.encode_gauge(n),
            (Value::Seconds(ns), Counter) => {
                series.encode_counter::<NoLabelSet, _, f64>(&seconds(*ns), None)
            }
            (Value::Seconds(ns), _) => series.encode_gauge(&seconds(*ns)),
            (Value::Buckets(h), _) => {
                let buckets: Vec<(f64, u64)> =
                    h.buckets.iter().map(|&(b, n)| (seconds(b), n)).collect();
                series.encode_histogram::<NoLabelSet>(seconds(h.sum_ns), h.count, &buckets, None)
            }
        }
    }
}

fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The series of one scrape, as they are found.
#[derive(Default)]
struct Found(Vec<Series>);

impl Found {
    fn add(&mut self, family: &'static Family, labels: Labels, value: Value) {
        self.0.push(Series {
            family,
            labels,
            value,
        });
    }

    fn flag(&mut self, family: &'static Family, labels: Labels, on: bool) {
        self.add(family, labels, Value::Count(u64::from(on)));
    }
}

/// Every series of these elements.
fn series(elements: &[ElementFigures]) -> Vec<Series> {
    let mut found = Found::default();
    let (major, minor, micro, _) = gst::version();
    let version = concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID"));
    let build = vec![
        ("version", version.to_owned()),
        ("gstreamer", format!("{major}.{minor}.{micro}")),
    ];
    found.add(&BUILD_INFO, build, Value::Count(1));
    for element in elements {
        add_element(&mut found, element);
    }
    found.0
}

fn add_element(found: &mut Found, e: &ElementFigures) {
    let element = || vec![("element", e.name.clone())];
    found.flag(&READY, element(), health::problems(e).is_empty());
    if let Some(totals) = e.totals() {
        add_streams(found, e, totals);
    }
    if let Some(n) = e.caption_words_dropped {
        found.add(&CAPTION_WORDS_DROPPED, element(), Value::Count(n));
    }
    if let Some(s) = &e.subtitles {
        found.add(&SUBTITLE_CUES, element(), Value::Count(s.cues));
        found.add(&SUBTITLE_CUES_TOO_FAST, element(), Value::Count(s.too_fast));
        found.add(&SUBTITLE_CUES_SHORT, element(), Value::Count(s.short));
        found.add(
            &SUBTITLE_CHARS_REPLACED,
            element(),
            Value::Count(s.chars_replaced),
        );
    }
    if let Some(n) = e.invalid_utf8_buffers {
        found.add(&INVALID_UTF8_BUFFERS, element(), Value::Count(n));
    }
    for t in &e.translations {
        add_translation(found, &e.name, t);
    }
}

/// The model's series, its streams taken together.
fn add_streams(found: &mut Found, e: &ElementFigures, t: StreamTotals) {
    let element = || vec![("element", e.name.clone())];
    let pad = || vec![("element", e.name.clone()), ("pad", e.pad.clone())];
    found.add(
        &AUDIO_RECEIVED,
        element(),
        Value::Seconds(t.audio_received_ns),
    );
    found.add(
        &AUDIO_TRANSCRIBED,
        element(),
        Value::Seconds(t.audio_transcribed_ns),
    );
    found.add(
        &AUDIO_SKIPPED,
        element(),
        Value::Seconds(t.audio_skipped_ns),
    );
    found.add(&WORDS, pad(), Value::Count(t.words));
    found.add(&LAG, element(), Value::Seconds(t.lag_ns));
    found.add(&WORD_LAG, element(), Value::Buckets(t.word_lag));
    found.add(&LAST_WORD_AGE, pad(), Value::Seconds(t.last_word_age_ns));
    found.add(&MODEL_STEPS, element(), Value::Count(t.model_steps));
    found.add(&WATCHDOG_RESTARTS, element(), Value::Count(t.stalls));
    found.flag(&CAPTION_ALARM, pad(), t.caption_alarm);
    let Some(servers) = t.servers else {
        return;
    };
    for server in servers {
        let labels = || vec![("element", e.name.clone()), ("server", server.url.clone())];
        found.add(&SERVER_CONNECTS, labels(), Value::Count(server.connections));
        found.add(&SERVER_ERRORS, labels(), Value::Count(server.failures));
    }
    found.add(&SERVER_FAILOVERS, element(), Value::Count(t.failovers));
}

fn add_translation(found: &mut Found, element: &str, t: &TranslationFigures) {
    let pad = || vec![("element", element.to_owned()), ("pad", t.pad.clone())];
    let language = || {
        let mut labels = pad();
        labels.push(("language", t.language.clone()));
        labels
    };
    found.add(&WORDS, pad(), Value::Count(t.words));
    found.add(&TRANSLATION_REQUESTS, language(), Value::Count(t.requests));
    found.add(&TRANSLATION_FAILURES, language(), Value::Count(t.failures));
    found.add(
        &TRANSLATION_CATCH_UPS,
        language(),
        Value::Count(t.catch_ups),
    );
    found.add(&TRANSLATION_LAG, language(), Value::Buckets(t.lag.clone()));
    found.add(
        &LAST_WORD_AGE,
        pad(),
        Value::Seconds(t.last_translation_age_ns),
    );
    found.flag(&CAPTION_ALARM, pad(), t.caption_alarm.is_some());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::snapshot::{StreamFigures, SubtitleFigures};

    fn element(name: &str, streams: Vec<StreamFigures>) -> ElementFigures {
        ElementFigures {
            name: name.into(),
            pad: "src".into(),
            state: gst::State::Playing,
            streams,
            translations: Vec::new(),
            subtitles: None,
            caption_words_dropped: None,
            invalid_utf8_buffers: None,
        }
    }

    fn lines(text: &str, prefix: &str) -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn label_values_are_escaped() {
        let text = render(vec![element("a\"b\\c\nd", Vec::new())]).unwrap();
        assert_eq!(
            lines(&text, "voxtralrt_ready{"),
            [r#"voxtralrt_ready{element="a\"b\\c\nd"} 1"#]
        );
    }

    #[test]
    fn a_histogram_sums_its_streams_and_ends_with_inf() {
        gst::init().unwrap();
        let mut lags = crate::core::lag::LagHistogram::default();
        lags.observe(std::time::Duration::from_millis(300));
        let mut stats = crate::core::stats::Stats {
            engine: "local",
            ..Default::default()
        }
        .to_structure();
        stats.set(crate::core::stats::field::WORD_LAG, lags.to_structure());
        let one = ElementFigures::of_stats("t".into(), "src".into(), gst::State::Playing, &stats)
            .unwrap()
            .streams;
        let two = [one.clone(), one].concat();
        let text = render(vec![element("t", two)]).unwrap();
        assert_eq!(
            lines(&text, "voxtralrt_word_lag_seconds"),
            [
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="0.25"} 0"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="0.5"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="1"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="1.5"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="2"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="3"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="5"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="10"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="30"} 2"#,
                r#"voxtralrt_word_lag_seconds_bucket{element="t",le="+Inf"} 2"#,
                r#"voxtralrt_word_lag_seconds_sum{element="t"} 0.6"#,
                r#"voxtralrt_word_lag_seconds_count{element="t"} 2"#,
            ]
        );
    }

    #[test]
    fn an_element_without_a_model_has_its_cues_and_no_model_series() {
        let mut encoder = element("enc", Vec::new());
        encoder.subtitles = Some(SubtitleFigures {
            cues: 4,
            too_fast: 1,
            ..SubtitleFigures::default()
        });
        encoder.invalid_utf8_buffers = Some(2);
        let text = render(vec![encoder]).unwrap();
        assert!(
            text.contains("voxtralrt_subtitle_cues_total{element=\"enc\"} 4\n"),
            "{text}"
        );
        assert!(text.contains("voxtralrt_subtitle_cues_too_fast_total{element=\"enc\"} 1\n"));
        assert!(text.contains("voxtralrt_invalid_utf8_buffers_total{element=\"enc\"} 2\n"));
        assert!(text.contains("# TYPE voxtralrt_subtitle_cues_total counter\n"));
        assert!(!text.contains("voxtralrt_words_total"), "{text}");
        assert!(!text.contains("voxtralrt_audio_received"), "{text}");
    }
}
