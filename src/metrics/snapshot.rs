// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What a request reads of the elements: each one's name, state and
//! `stats`, once, into plain figures that `/metrics` and `/readyz` are both
//! written from. Fields are named by `core::stats::field`, as their writers
//! name them. A part of `stats` is read when its first field is there (a
//! model stream by `engine`, the cue counts by `subtitle-cues`, each request
//! or translate pad's structure); every other field of that part must be
//! there too: one that is not leaves the element out, with a warning that
//! names it, instead of reading as 0.

use std::fmt;

use gst::prelude::*;

use super::elements::output_pad;
use super::CAT;
use crate::core::stats::field;

/// A field a part of `stats` lacks, or has with another type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MissingField {
    pub field: &'static str,
    pub wanted: &'static str,
}

impl fmt::Display for MissingField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stats has no {} field {:?}", self.wanted, self.field)
    }
}

type Read<T> = Result<T, MissingField>;

/// One element as a request found it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ElementFigures {
    pub name: String,
    /// The pad its words leave by.
    pub pad: String,
    pub state: gst::State,
    /// Its model streams: its own, then each request pad's (none for an
    /// element without a model).
    pub streams: Vec<StreamFigures>,
    pub translations: Vec<TranslationFigures>,
    pub subtitles: Option<SubtitleFigures>,
    pub caption_words_dropped: Option<u64>,
    pub invalid_utf8_buffers: Option<u64>,
}

/// One model stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct StreamFigures {
    /// The request pad's name; none for the element's own stream.
    pub pad: Option<String>,
    pub engine: String,
    pub model_loaded: bool,
    pub server_connected: bool,
    /// How long the model call in progress has run.
    pub model_call_ns: u64,
    pub stalled: bool,
    /// The caption alarm's reason while it is on.
    pub caption_alarm: Option<String>,
    pub audio_received_ns: u64,
    pub audio_transcribed_ns: u64,
    pub audio_skipped_ns: u64,
    pub words: u64,
    pub lag_ns: u64,
    pub last_word_age_ns: u64,
    pub model_steps: u64,
    pub stalls: u64,
    pub failovers: u64,
    pub word_lag: Histogram,
    pub servers: Vec<ServerFigures>,
}

/// One server of `url`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ServerFigures {
    pub url: String,
    pub connections: u64,
    pub failures: u64,
}

/// One translate pad.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct TranslationFigures {
    pub pad: String,
    pub language: String,
    pub words: u64,
    pub requests: u64,
    pub failures: u64,
    pub catch_ups: u64,
    pub lag: Histogram,
    pub last_translation_age_ns: u64,
    pub caption_alarm: Option<String>,
}

/// The counts of the cues of `subtitle-style`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SubtitleFigures {
    pub cues: u64,
    pub too_fast: u64,
    pub short: u64,
    pub chars_replaced: u64,
}

/// A lag histogram of `stats` (every one has the same bounds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Histogram {
    /// Each bucket's upper bound (ns) and the observations in it, not in
    /// the ones before: how prometheus-client takes them (`stats` counts
    /// them cumulatively).
    pub buckets: Vec<(u64, u64)>,
    pub count: u64,
    pub sum_ns: u64,
}

/// An element's model streams taken together.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct StreamTotals {
    pub audio_received_ns: u64,
    pub audio_transcribed_ns: u64,
    pub audio_skipped_ns: u64,
    pub words: u64,
    pub model_steps: u64,
    pub stalls: u64,
    pub failovers: u64,
    /// The longest wait for the model, and the newest word.
    pub lag_ns: u64,
    pub last_word_age_ns: u64,
    pub word_lag: Histogram,
    pub caption_alarm: bool,
    /// engine=vllm: each server of `url` once, its counts over the streams.
    pub servers: Option<Vec<ServerFigures>>,
}

/// Every element of `elements`, read once; an element whose `stats` lack a
/// field is left out, and said so.
pub(super) fn read(elements: &[gst::Element]) -> Vec<ElementFigures> {
    elements
        .iter()
        .filter_map(|element| {
            ElementFigures::read(element)
                .map_err(|missing| {
                    gst::warning!(CAT, obj = element, "{missing}: left out of the metrics")
                })
                .ok()
        })
        .collect()
}

impl ElementFigures {
    fn read(element: &gst::Element) -> Read<ElementFigures> {
        let stats = element.property::<gst::Structure>("stats");
        let name = element.name().to_string();
        ElementFigures::of_stats(name, output_pad(element), element.current_state(), &stats)
    }

    pub(super) fn of_stats(
        name: String,
        pad: String,
        state: gst::State,
        stats: &gst::StructureRef,
    ) -> Read<ElementFigures> {
        let fields = Fields(stats);
        let mut streams = Vec::new();
        if fields.has(field::ENGINE) {
            streams.push(StreamFigures::read(fields, None)?);
        }
        for participant in fields.structures(field::PARTICIPANTS)? {
            let pad = participant.string(field::PAD)?;
            streams.push(StreamFigures::read(participant, Some(pad))?);
        }
        let translations = fields.structures(field::TRANSLATIONS)?;
        let subtitles = fields.has(field::SUBTITLE_CUES);
        Ok(ElementFigures {
            name,
            pad,
            state,
            streams,
            translations: translations
                .into_iter()
                .map(TranslationFigures::read)
                .collect::<Read<_>>()?,
            subtitles: subtitles
                .then(|| SubtitleFigures::read(fields))
                .transpose()?,
            caption_words_dropped: fields.optional_u64(field::CAPTION_WORDS_DROPPED)?,
            invalid_utf8_buffers: fields.optional_u64(field::INVALID_UTF8_BUFFERS)?,
        })
    }

    /// Its model streams taken together; none without a model.
    pub(super) fn totals(&self) -> Option<StreamTotals> {
        if self.streams.is_empty() {
            return None;
        }
        let mut totals = StreamTotals {
            last_word_age_ns: u64::MAX,
            ..StreamTotals::default()
        };
        for s in &self.streams {
            totals.audio_received_ns += s.audio_received_ns;
            totals.audio_transcribed_ns += s.audio_transcribed_ns;
            totals.audio_skipped_ns += s.audio_skipped_ns;
            totals.words += s.words;
            totals.model_steps += s.model_steps;
            totals.stalls += s.stalls;
            totals.failovers += s.failovers;
            totals.lag_ns = totals.lag_ns.max(s.lag_ns);
            totals.last_word_age_ns = totals.last_word_age_ns.min(s.last_word_age_ns);
            totals.word_lag.add(&s.word_lag);
            totals.caption_alarm |= s.caption_alarm.is_some();
        }
        totals.servers = self.servers();
        Some(totals)
    }

    /// Each server of `url` once, with its counts added over the streams
    /// (engine=vllm; none for the local engine).
    fn servers(&self) -> Option<Vec<ServerFigures>> {
        if !self.streams.iter().any(|s| s.engine == "vllm") {
            return None;
        }
        let mut servers: Vec<ServerFigures> = Vec::new();
        for server in self.streams.iter().flat_map(|s| &s.servers) {
            match servers.iter_mut().find(|s| s.url == server.url) {
                Some(known) => {
                    known.connections += server.connections;
                    known.failures += server.failures;
                }
                None => servers.push(server.clone()),
            }
        }
        Some(servers)
    }
}

impl StreamFigures {
    fn read(s: Fields, pad: Option<String>) -> Read<StreamFigures> {
        Ok(StreamFigures {
            pad,
            engine: s.string(field::ENGINE)?,
            model_loaded: s.bool(field::MODEL_LOADED)?,
            server_connected: s.bool(field::SERVER_CONNECTED)?,
            model_call_ns: s.u64(field::MODEL_CALL)?,
            stalled: s.bool(field::STALLED)?,
            caption_alarm: s.alarm()?,
            audio_received_ns: s.u64(field::AUDIO_RECEIVED)?,
            audio_transcribed_ns: s.u64(field::AUDIO_TRANSCRIBED)?,
            audio_skipped_ns: s.u64(field::AUDIO_SKIPPED)?,
            words: s.u64(field::WORDS)?,
            lag_ns: s.u64(field::LAG)?,
            last_word_age_ns: s.u64(field::LAST_WORD_AGE)?,
            model_steps: s.u64(field::MODEL_STEPS)?,
            stalls: s.u64(field::STALLS)?,
            failovers: s.u64(field::FAILOVERS)?,
            word_lag: Histogram::read(s.structure(field::WORD_LAG)?)?,
            servers: s
                .structures(field::SERVERS)?
                .into_iter()
                .map(ServerFigures::read)
                .collect::<Read<_>>()?,
        })
    }
}

impl ServerFigures {
    fn read(s: Fields) -> Read<ServerFigures> {
        Ok(ServerFigures {
            url: s.string(field::URL)?,
            connections: s.u64(field::CONNECTIONS)?,
            failures: s.u64(field::FAILURES)?,
        })
    }
}

impl TranslationFigures {
    fn read(t: Fields) -> Read<TranslationFigures> {
        Ok(TranslationFigures {
            pad: t.string(field::PAD)?,
            language: t.string(field::LANGUAGE_CODE)?,
            words: t.u64(field::WORDS)?,
            requests: t.u64(field::REQUESTS)?,
            failures: t.u64(field::FAILURES)?,
            catch_ups: t.u64(field::CATCH_UPS)?,
            lag: Histogram::read(t.structure(field::LAG)?)?,
            last_translation_age_ns: t.u64(field::LAST_TRANSLATION_AGE)?,
            caption_alarm: t.alarm()?,
        })
    }
}

impl SubtitleFigures {
    fn read(s: Fields) -> Read<SubtitleFigures> {
        Ok(SubtitleFigures {
            cues: s.u64(field::SUBTITLE_CUES)?,
            too_fast: s.u64(field::SUBTITLE_CUES_TOO_FAST)?,
            short: s.u64(field::SUBTITLE_CUES_SHORT)?,
            chars_replaced: s.u64(field::SUBTITLE_CHARS_REPLACED)?,
        })
    }
}

impl Histogram {
    fn read(h: Fields) -> Read<Histogram> {
        let bounds = h.u64s(field::BOUNDS)?;
        let cumulative = h.u64s(field::COUNTS)?;
        let mut before = 0;
        let buckets = bounds
            .into_iter()
            .zip(cumulative)
            .map(|(bound, up_to)| {
                let in_bucket = up_to.saturating_sub(before);
                before = up_to;
                (bound, in_bucket)
            })
            .collect();
        Ok(Histogram {
            buckets,
            count: h.u64(field::COUNT)?,
            sum_ns: h.u64(field::SUM)?,
        })
    }

    /// Adds `other`'s observations.
    pub(super) fn add(&mut self, other: &Histogram) {
        if self.buckets.is_empty() {
            self.buckets.clone_from(&other.buckets);
        } else {
            for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
                mine.1 += theirs.1;
            }
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }
}

/// The fields of one structure of `stats`, each read by its name.
#[derive(Clone, Copy)]
struct Fields<'a>(&'a gst::StructureRef);

impl<'a> Fields<'a> {
    fn has(self, name: &'static str) -> bool {
        self.0.has_field(name)
    }

    fn get<T: gst::glib::value::FromValue<'a>>(
        self,
        name: &'static str,
        wanted: &'static str,
    ) -> Read<T> {
        self.0.get::<T>(name).map_err(|_| MissingField {
            field: name,
            wanted,
        })
    }

    fn u64(self, name: &'static str) -> Read<u64> {
        self.get(name, "u64")
    }

    fn bool(self, name: &'static str) -> Read<bool> {
        self.get(name, "boolean")
    }

    fn string(self, name: &'static str) -> Read<String> {
        self.get::<&str>(name, "string").map(str::to_owned)
    }

    fn structure(self, name: &'static str) -> Read<Fields<'a>> {
        self.get::<&gst::StructureRef>(name, "structure")
            .map(Fields)
    }

    fn u64s(self, name: &'static str) -> Read<Vec<u64>> {
        let array = self.get::<gst::ArrayRef>(name, "array")?;
        let numbers: Option<Vec<u64>> = array.iter().map(|v| v.get::<u64>().ok()).collect();
        numbers.ok_or(MissingField {
            field: name,
            wanted: "array of u64",
        })
    }

    /// The structures of the array `name`; none where there is no such
    /// field (an element without such pads).
    fn structures(self, name: &'static str) -> Read<Vec<Fields<'a>>> {
        if !self.has(name) {
            return Ok(Vec::new());
        }
        let array = self.get::<gst::ArrayRef>(name, "array")?;
        let structures: Option<Vec<Fields>> = array
            .as_slice()
            .iter()
            .map(|v| v.get::<&gst::StructureRef>().ok().map(Fields))
            .collect();
        structures.ok_or(MissingField {
            field: name,
            wanted: "array of structures",
        })
    }

    fn optional_u64(self, name: &'static str) -> Read<Option<u64>> {
        self.has(name).then(|| self.u64(name)).transpose()
    }

    /// The caption alarm's reason while it is on.
    fn alarm(self) -> Read<Option<String>> {
        let on = self.bool(field::CAPTION_ALARM)?;
        let reason = self.string(field::CAPTION_ALARM_REASON)?;
        Ok(on.then_some(reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::stats::Stats;
    use crate::metrics::elements::is_ours;
    use crate::metrics::init_plugin;

    fn of_stats(stats: &gst::StructureRef) -> Read<ElementFigures> {
        ElementFigures::of_stats("e".into(), "src".into(), gst::State::Playing, stats)
    }

    /// `factory`'s element with one pad of each request template (a
    /// speaker's `sink_%u`, a `translate_src_%u`), as the tracer reads it.
    fn read_with_request_pads(factory: &str) -> ElementFigures {
        let element = gst::ElementFactory::make(factory).build().unwrap();
        for template in element.pad_template_list() {
            if template.presence() == gst::PadPresence::Request {
                element.request_pad(&template, None, None).unwrap();
            }
        }
        ElementFigures::read(&element).unwrap_or_else(|m| panic!("{factory}: {m}"))
    }

    #[test]
    fn the_tracer_reads_every_part_of_each_element_of_the_plugin() {
        init_plugin();
        let transcriber = read_with_request_pads("voxtralrttranscriber");
        assert_eq!(transcriber.streams.len(), 2, "its own and sink_0's");
        assert_eq!(transcriber.streams[1].pad.as_deref(), Some("sink_0"));
        #[cfg(feature = "translate")]
        assert_eq!(transcriber.translations[0].pad, "translate_src_0");
        assert!(transcriber.subtitles.is_some());
        assert_eq!(transcriber.caption_words_dropped, Some(0));

        let sink = read_with_request_pads("voxtralrtsink");
        assert_eq!(sink.pad, "sink");
        assert_eq!(sink.streams.len(), 2);
        assert!(sink.subtitles.is_some());

        let encoder = read_with_request_pads("voxtralrtsubenc");
        assert!(encoder.streams.is_empty());
        assert_eq!(encoder.subtitles, Some(SubtitleFigures::default()));
        assert_eq!(encoder.invalid_utf8_buffers, Some(0));

        // And any element of the plugin that the tracer serves, new ones
        // included.
        let mut served = 0;
        for feature in gst::Registry::get().features_by_plugin("voxtralrt") {
            let Ok(factory) = feature.downcast::<gst::ElementFactory>() else {
                continue;
            };
            if is_ours(&factory.create().build().unwrap()) {
                read_with_request_pads(&factory.name());
                served += 1;
            }
        }
        assert!(served >= 3, "{served}");
    }

    #[test]
    fn a_field_renamed_in_stats_is_named_not_read_as_zero() {
        gst::init().unwrap();
        let mut stats = Stats::default().to_structure();
        assert!(of_stats(&stats).is_ok());
        stats.remove_field(field::WORDS);
        stats.set("words-out", 3u64);
        assert_eq!(
            of_stats(&stats).unwrap_err(),
            MissingField {
                field: "words",
                wanted: "u64"
            }
        );
        let mut stats = Stats::default().to_structure();
        stats.set(field::MODEL_STEPS, 3u32);
        let wrong_type = of_stats(&stats).unwrap_err();
        assert_eq!(
            wrong_type.to_string(),
            "stats has no u64 field \"model-steps\""
        );
    }

    #[test]
    fn cumulative_counts_become_counts_per_bucket() {
        gst::init().unwrap();
        let mut lags = crate::core::lag::LagHistogram::default();
        for ms in [100, 300, 400, 20_000] {
            lags.observe(std::time::Duration::from_millis(ms));
        }
        let h = Histogram::read(Fields(&lags.to_structure())).unwrap();
        let ms = |ns: u64| ns / 1_000_000;
        let per_bucket: Vec<(u64, u64)> = h.buckets.iter().map(|&(b, n)| (ms(b), n)).collect();
        assert_eq!(
            per_bucket,
            [
                (250, 1),
                (500, 2),
                (1000, 0),
                (1500, 0),
                (2000, 0),
                (3000, 0),
                (5000, 0),
                (10_000, 0),
                (30_000, 1)
            ]
        );
        assert_eq!((h.count, h.sum_ns), (4, 20_800_000_000));
    }

    #[test]
    fn the_streams_add_up_and_each_server_is_counted_once() {
        let server = |url: &str, connections| ServerFigures {
            url: url.into(),
            connections,
            failures: 1,
        };
        let stream = |words, age, servers| StreamFigures {
            engine: "vllm".into(),
            words,
            lag_ns: words * 10,
            last_word_age_ns: age,
            servers,
            ..StreamFigures::default()
        };
        let element = ElementFigures {
            name: "e".into(),
            pad: "src".into(),
            state: gst::State::Playing,
            streams: vec![
                stream(3, 500, vec![server("a", 2), server("b", 1)]),
                stream(4, 200, vec![server("b", 5)]),
            ],
            translations: Vec::new(),
            subtitles: None,
            caption_words_dropped: None,
            invalid_utf8_buffers: None,
        };
        let totals = element.totals().unwrap();
        assert_eq!(totals.words, 7);
        assert_eq!(totals.lag_ns, 40, "the longest wait");
        assert_eq!(totals.last_word_age_ns, 200, "the newest word");
        assert_eq!(
            totals.servers.unwrap(),
            [
                ServerFigures {
                    url: "a".into(),
                    connections: 2,
                    failures: 1
                },
                ServerFigures {
                    url: "b".into(),
                    connections: 6,
                    failures: 2
                },
            ]
        );
    }
}
