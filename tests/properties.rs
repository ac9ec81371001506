// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The elements' properties as GStreamer users expect them (issue 50 §2):
//! choices are enums that gst-inspect-1.0 lists and a typo fails where it
//! is set, the values of the launch lines keep working, every writable
//! property says when it may change, and strings not set read as NULL.

mod common;

use gst::glib;
use gst::prelude::*;

const ELEMENTS: [&str; 3] = ["voxtralrttranscriber", "voxtralrtsink", "voxtralrtsubenc"];

fn element(factory: &str) -> gst::Element {
    common::init_plugin();
    gst::ElementFactory::make(factory).build().unwrap()
}

/// The nicks of enum property `name` of `element`, in order, and its
/// default's.
fn enum_nicks(element: &gst::Element, name: &str) -> (Vec<String>, String) {
    let pspec = element.find_property(name).unwrap();
    let pspec = pspec
        .downcast_ref::<glib::ParamSpecEnum>()
        .unwrap_or_else(|| panic!("{name} is {:?}, not an enum", pspec.value_type()));
    let class = pspec.enum_class();
    let nicks = class.values().iter().map(|v| v.nick().to_owned()).collect();
    let default = class
        .value(pspec.default_value_as_i32())
        .unwrap()
        .nick()
        .to_owned();
    (nicks, default)
}

/// The nick property `name` of `element` reads as.
fn nick_of(element: &gst::Element, name: &str) -> String {
    let value = element.property_value(name);
    let (_, v) = glib::EnumValue::from_value(&value).unwrap();
    v.nick().to_owned()
}

#[test]
fn subtitle_style_is_an_enum_of_the_four_styles_on_every_element() {
    for (factory, default) in [
        ("voxtralrttranscriber", "broadcast"),
        ("voxtralrtsink", "netflix"),
        ("voxtralrtsubenc", "netflix"),
    ] {
        let (nicks, d) = enum_nicks(&element(factory), "subtitle-style");
        assert_eq!(nicks, ["broadcast", "netflix", "bbc", "dcmp"], "{factory}");
        assert_eq!(d, default, "{factory}");
    }
}

#[test]
fn format_is_an_enum_of_what_each_element_writes() {
    let (sink, default) = enum_nicks(&element("voxtralrtsink"), "format");
    assert_eq!(
        sink,
        ["auto", "txt", "srt", "vtt", "jsonl", "scc", "ttml", "ebu-tt-d"]
    );
    assert_eq!(default, "auto", "by the location's extension");
    let (subenc, default) = enum_nicks(&element("voxtralrtsubenc"), "format");
    assert_eq!(subenc, ["auto", "srt", "vtt", "scc", "ttml", "ebu-tt-d"]);
    assert_eq!(default, "auto", "by downstream's caps");
}

#[test]
fn gst_inspect_lists_the_styles_and_formats() {
    for factory in ["voxtralrtsink", "voxtralrtsubenc"] {
        let out = std::process::Command::new("gst-inspect-1.0")
            .arg(factory)
            .env("GST_PLUGIN_PATH", common::plugin_dir())
            .output()
            .unwrap();
        let text = common::output_text(&out);
        assert!(out.status.success(), "{text}");
        for listed in [
            "Enum \"GstVoxtralRtSubtitleStyle\"",
            "(1): netflix",
            "(3): dcmp",
            "(0): auto",
            "ebu-tt-d",
        ] {
            assert!(text.contains(listed), "{factory}: no {listed:?} in\n{text}");
        }
    }
}

#[test]
fn the_values_of_launch_lines_set_the_enums_as_the_strings_did() {
    for factory in ELEMENTS {
        let e = element(factory);
        for style in ["broadcast", "netflix", "bbc", "dcmp"] {
            e.set_property_from_str("subtitle-style", style);
            assert_eq!(nick_of(&e, "subtitle-style"), style, "{factory}");
        }
    }
    let sink = element("voxtralrtsink");
    for format in [
        "txt", "jsonl", "srt", "vtt", "scc", "ttml", "ebu-tt-d", "auto",
    ] {
        sink.set_property_from_str("format", format);
        assert_eq!(nick_of(&sink, "format"), format);
    }
    let subenc = element("voxtralrtsubenc");
    for format in ["srt", "vtt", "scc", "ttml", "ebu-tt-d", "auto"] {
        subenc.set_property_from_str("format", format);
        assert_eq!(nick_of(&subenc, "format"), format);
    }
}

#[test]
fn a_typo_in_a_style_or_format_fails_the_launch_line_naming_it() {
    for (factory, setting) in [
        ("voxtralrtsink", "subtitle-style=hollywood"),
        ("voxtralrtsink", "format=docx"),
        ("voxtralrttranscriber", "subtitle-style=Hollywood"),
        // A sink's format the encoder does not write.
        ("voxtralrtsubenc", "format=jsonl"),
    ] {
        let mut line = vec!["fakesrc", "num-buffers=0", "!", factory, setting];
        if factory != "voxtralrtsink" {
            line.extend(["!", "fakesink"]);
        }
        let (ok, log) = common::gst_launch(&line);
        let (name, value) = setting.split_once('=').unwrap();
        assert!(!ok, "{factory} {setting}: {log}");
        assert!(
            log.contains(&format!("could not set property \"{name}\"")) && log.contains(value),
            "{factory} {setting}: {log}"
        );
    }
}

/// Every property of the elements and of their pads (`sink`, a requested
/// `sink_%u` and, with translations, `translate_src_%u`), with where it
/// belongs.
fn all_properties() -> Vec<(String, gst::glib::Object, glib::ParamSpec)> {
    let mut all = Vec::new();
    for factory in ELEMENTS {
        let e = element(factory);
        let mut objects: Vec<(String, glib::Object)> =
            vec![(factory.to_owned(), e.clone().upcast())];
        if factory != "voxtralrtsubenc" {
            e.request_pad_simple("sink_%u").unwrap();
        }
        #[cfg(feature = "translate")]
        if factory == "voxtralrttranscriber" {
            e.request_pad_simple("translate_src_%u").unwrap();
        }
        for pad in e.pads() {
            objects.push((format!("{factory}.{}", pad.name()), pad.upcast()));
        }
        for (owner, object) in objects {
            for pspec in object.list_properties() {
                if !pspec.owner_type().name().starts_with("GstVoxtralRt") {
                    // GStreamer's own (name, parent, direction, sync, ...).
                    continue;
                }
                all.push((owner.clone(), object.clone(), pspec));
            }
        }
    }
    all
}

#[test]
fn every_writable_property_says_in_which_states_it_may_change() {
    let mutable = glib::ParamFlags::from_bits_truncate(
        gst::PARAM_FLAG_MUTABLE_READY.bits()
            | gst::PARAM_FLAG_MUTABLE_PAUSED.bits()
            | gst::PARAM_FLAG_MUTABLE_PLAYING.bits(),
    );
    let unflagged: Vec<String> = all_properties()
        .iter()
        .filter(|(_, _, p)| p.flags().contains(glib::ParamFlags::WRITABLE))
        .filter(|(_, _, p)| !p.flags().intersects(mutable))
        .map(|(owner, _, p)| format!("{owner}.{}", p.name()))
        .collect();
    assert_eq!(unflagged, Vec::<String>::new());
}

/// A string with nothing set is NULL, never "" (`speaker-prefix` has a
/// value of its own, ">> ").
#[test]
fn every_string_property_without_a_default_is_null_and_reads_its_default_until_set() {
    let mut wrong = Vec::new();
    for (owner, object, pspec) in all_properties() {
        let Some(spec) = pspec.downcast_ref::<glib::ParamSpecString>() else {
            continue;
        };
        let default = spec.default_value().map(str::to_owned);
        if default.as_deref() == Some("") {
            wrong.push(format!("{owner}.{}: default \"\"", pspec.name()));
        }
        if pspec.flags().contains(glib::ParamFlags::READABLE) && !owner.contains('.') {
            let value: Option<String> = object.property(pspec.name());
            if value != default {
                wrong.push(format!(
                    "{owner}.{} reads {value:?}, not {default:?}",
                    pspec.name()
                ));
            }
        }
    }
    assert_eq!(wrong, Vec::<String>::new());
}

/// The WARNING texts on `pipeline`'s bus so far.
fn warnings(pipeline: &gst::Pipeline) -> Vec<String> {
    let bus = pipeline.bus().unwrap();
    let mut said = Vec::new();
    while let Some(msg) = bus.pop_filtered(&[gst::MessageType::Warning]) {
        if let gst::MessageView::Warning(w) = msg.view() {
            said.push(w.error().to_string());
        }
    }
    said
}

#[test]
fn delay_shows_the_values_taken_and_a_refused_one_is_warned_naming_the_nearest() {
    for factory in ["voxtralrttranscriber", "voxtralrtsink"] {
        let e = element(factory);
        let blurb = e
            .find_property("delay")
            .unwrap()
            .blurb()
            .unwrap()
            .to_owned();
        assert!(
            blurb.contains("80, 160, 240 ... 1200 (the multiples of 80) or 2400"),
            "{blurb}"
        );
        let pipeline = gst::Pipeline::new();
        pipeline.add(&e).unwrap();
        e.set_property("delay", 960u32);
        for (refused, nearest) in [(1000u32, "960 or 1040"), (500, "480"), (2000, "2400")] {
            e.set_property("delay", refused);
            assert_eq!(
                e.property::<u32>("delay"),
                960,
                "{factory}: {refused} refused"
            );
            assert_eq!(
                warnings(&pipeline),
                [format!(
                    "delay {refused} ms is not supported: use a multiple of 80 from 80 to 1200, \
                     or 2400 (the nearest: {nearest}); 960 ms stays"
                )],
                "{factory}"
            );
        }
    }
}

/// transcriberbin 0.15 hands its latency to a transcriber as its
/// `configure_transcriber` does (video/closedcaption/src/transcriberbin/
/// imp.rs): `transcribe-latency` if the transcriber has a u32 property of
/// that name, else `latency` if it has a u32 one; then `translate-latency`
/// and `lateness`, each if it is a u32 property. The transcriber has no
/// `transcribe-latency` (as whispertranscriber and speechmatics), so
/// `latency` takes it, and the LATENCY answer is upstream's plus it.
#[cfg(feature = "local")]
#[test]
fn transcriberbin_0_15_sets_latency_and_the_latency_answer_is_that() {
    common::init_plugin();
    let pipeline = gst::parse::launch(&format!(
        "appsrc is-live=true format=time caps={} ! \
         voxtralrttranscriber name=t model-path={} threads=1 ! fakesink",
        common::remote::F32_CAPS,
        common::tiny_model().display()
    ))
    .unwrap();
    let t = pipeline
        .downcast_ref::<gst::Bin>()
        .unwrap()
        .by_name("t")
        .unwrap();
    let u32_type = u32::static_type();
    // transcriberbin's code, with its latency 2 s, translate-latency 700 ms
    // and lateness 100 ms.
    if t.has_property_with_type("transcribe-latency", u32_type) {
        t.set_property("transcribe-latency", 2000u32);
    } else if t.has_property_with_type("latency", u32_type) {
        t.set_property("latency", 2000u32);
    }
    let translate = t.has_property_with_type("translate-latency", u32_type);
    if translate {
        t.set_property("translate-latency", 700u32);
    }
    assert!(t.has_property_with_type("lateness", u32_type));
    t.set_property("lateness", 100u32);

    assert!(!t.has_property("transcribe-latency"));
    assert_eq!(t.property::<u32>("latency"), 2000);
    assert_eq!(t.property::<u32>("lateness"), 100);
    if cfg!(feature = "translate") {
        assert!(translate);
        assert_eq!(t.property::<u32>("translate-latency"), 700);
    }
    let (live, min) = common::latency_of_pad(&pipeline, "src");
    assert!(live);
    assert_eq!(min, gst::ClockTime::from_mseconds(2000));
}
