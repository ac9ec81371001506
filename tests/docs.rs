// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The README and the guides agree with the code: every relative link and
//! anchor resolves, every repository path they quote exists, and every
//! property and `stats` field they name is one the elements have. The
//! reading rules are in tests/docs/check.rs, each unit-tested there on a
//! small text that breaks it.

#[path = "docs/check.rs"]
// The client build runs the link and path checks only.
#[cfg_attr(
    not(all(feature = "local", feature = "vllm", feature = "translate")),
    allow(dead_code)
)]
mod check;
mod common;

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README and docs/*.md, from the crate's root.
fn guides() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| p.strip_prefix(root()).unwrap().to_path_buf())
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// `target` relative to the directory of `file`, from the crate's root;
/// None if it leaves the repository.
fn resolve(file: &Path, target: &str) -> Option<PathBuf> {
    let mut path = file.parent().unwrap_or(Path::new("")).to_path_buf();
    for part in Path::new(target).components() {
        match part {
            Component::ParentDir => {
                if !path.pop() {
                    return None;
                }
            }
            Component::Normal(p) => path.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(path)
}

/// What is wrong with the links of `file`, and the Markdown files of the
/// repository it links to.
fn broken_links(file: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let text = read(file);
    let mut broken = Vec::new();
    let mut linked = Vec::new();
    for (line, target) in check::links(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let at = format!("{}:{line}: ({target})", file.display());
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked_file = if path.is_empty() {
            file.to_path_buf()
        } else {
            match resolve(file, path) {
                Some(p) if root().join(&p).exists() => p,
                _ => {
                    broken.push(format!("{at}: no such file"));
                    continue;
                }
            }
        };
        let markdown = linked_file.extension().is_some_and(|e| e == "md");
        if markdown {
            linked.push(linked_file.clone());
        }
        if let Some(anchor) = anchor.filter(|_| markdown) {
            if !check::anchors(&read(&linked_file)).contains(anchor) {
                broken.push(format!(
                    "{at}: {} has no heading with the anchor #{anchor}",
                    linked_file.display()
                ));
            }
        }
    }
    (broken, linked)
}

#[test]
fn every_relative_link_and_anchor_of_the_guides_resolves() {
    let mut todo = guides();
    let mut seen = BTreeSet::new();
    let mut broken = Vec::new();
    while let Some(file) = todo.pop() {
        if !seen.insert(file.clone()) {
            continue;
        }
        let (wrong, linked) = broken_links(&file);
        broken.extend(wrong);
        todo.extend(linked);
    }
    assert!(seen.len() > 20, "read only {seen:?}");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_repository_path_the_guides_quote_exists() {
    let mut missing = Vec::new();
    for file in guides() {
        for (line, path) in check::quoted_paths(&read(&file)) {
            // An example by its name: `examples/transcribe_file`.
            let found = root().join(&path).exists() || root().join(format!("{path}.rs")).exists();
            if !found {
                missing.push(format!("{}:{line}: {path}", file.display()));
            }
        }
    }
    assert!(missing.is_empty(), "no such file:\n{}", missing.join("\n"));
}

#[cfg(all(feature = "local", feature = "vllm", feature = "translate"))]
mod with_the_elements {
    use super::*;
    use gst::prelude::*;
    use std::collections::BTreeMap;

    const OURS: [&str; 3] = ["voxtralrttranscriber", "voxtralrtsink", "voxtralrtsubenc"];

    /// Properties of other elements (and caps fields) that the guides write
    /// as `name=value` outside a launch line, with whose they are: a name
    /// of ours misspelt is not among them.
    const OTHERS: &[(&str, &str)] = &[
        ("address", "the voxtralrtmetrics tracer"),
        ("alignment", "mpegtsmux"),
        ("async-handling", "hlssink2"),
        ("block", "appsrc"),
        ("do-timestamp", "appsrc"),
        ("id", "podman build --secret"),
        ("key-int-max", "x264enc"),
        ("max-size-time", "queue"),
        ("mode", "srtsink, tttocea608"),
        ("mux-method", "transcriberbin"),
        ("num-buffers", "audiotestsrc"),
        ("option-string", "x264enc"),
        ("playlist-length", "hlssink2"),
        ("max-files", "hlssink2"),
    ];

    /// Our elements' properties, and each pad template's (`sink_%u`,
    /// `translate_src_%u`, `sink`, ...) by element.
    struct Properties {
        elements: BTreeMap<&'static str, BTreeSet<String>>,
        pads: BTreeMap<&'static str, Vec<(String, BTreeSet<String>)>>,
        /// Each property's defaults as gst-inspect shows them, over every
        /// element and pad that has it.
        defaults: BTreeMap<String, BTreeSet<String>>,
    }

    fn names(object: &impl IsA<gst::glib::Object>) -> BTreeSet<String> {
        object
            .list_properties()
            .iter()
            .map(|p| p.name().to_string())
            .collect()
    }

    /// A default value as a guide writes it: a string as it is (none: an
    /// empty cell), an enum by its nick, a number or a boolean as text.
    fn default_text(pspec: &gst::glib::ParamSpec) -> String {
        let value = pspec.default_value();
        // Boxed and object values (stats, samples) have no default a guide
        // writes, and serializing their NULL is a GStreamer CRITICAL.
        let kind = value.type_();
        if kind.is_a(gst::glib::Type::BOXED) || kind.is_a(gst::glib::Type::OBJECT) {
            return String::new();
        }
        if let Ok(s) = value.get::<Option<String>>() {
            return s.unwrap_or_default();
        }
        value
            .serialize()
            .map(|s| s.to_string())
            .unwrap_or_else(|_| format!("{value:?}"))
    }

    fn add_defaults(
        object: &impl IsA<gst::glib::Object>,
        into: &mut BTreeMap<String, BTreeSet<String>>,
    ) {
        for pspec in object.list_properties() {
            into.entry(pspec.name().to_string())
                .or_default()
                .insert(default_text(&pspec));
        }
    }

    impl Properties {
        fn read() -> Properties {
            common::init_plugin();
            let mut elements = BTreeMap::new();
            let mut pads = BTreeMap::new();
            let mut defaults = BTreeMap::new();
            for factory in OURS {
                let element = gst::ElementFactory::make(factory).build().unwrap();
                elements.insert(factory, names(&element));
                add_defaults(&element, &mut defaults);
                let mut of_element = Vec::new();
                for template in element.pad_template_list() {
                    let pad = match template.presence() {
                        gst::PadPresence::Request => element.request_pad(&template, None, None),
                        _ => element.static_pad(template.name_template()),
                    };
                    if let Some(pad) = pad {
                        add_defaults(&pad, &mut defaults);
                        of_element.push((template.name_template().to_string(), names(&pad)));
                    }
                }
                pads.insert(factory, of_element);
            }
            Properties {
                elements,
                pads,
                defaults,
            }
        }

        /// Whether `factory` has `property`, or `PAD::property` for a pad.
        fn has(&self, factory: &str, property: &str) -> bool {
            match property.split_once("::") {
                Some((pad, name)) => self.pads[factory]
                    .iter()
                    .any(|(template, props)| pad_matches(template, pad) && props.contains(name)),
                None => self.elements[factory].contains(property),
            }
        }

        fn any_has(&self, property: &str) -> bool {
            OURS.iter().any(|f| {
                self.has(f, property)
                    || self.pads[f]
                        .iter()
                        .any(|(_, props)| props.contains(property))
            })
        }
    }

    /// `sink_%u` matches `sink_0`; a static template only its own name.
    fn pad_matches(template: &str, pad: &str) -> bool {
        match template.strip_suffix("%u") {
            Some(prefix) => pad
                .strip_prefix(prefix)
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())),
            None => template == pad,
        }
    }

    /// Launch descriptions of a guide: its `gst-launch-1.0` lines, and the
    /// code spans of its prose that set properties.
    fn descriptions(text: &str) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("gst-launch-1.0 "))
            .map(|(k, l)| (k + 1, l.to_owned()))
            .collect();
        for block in check::blocks(text) {
            for (_, span) in check::code_spans(&block.text) {
                if span.contains('=') && !span.contains("gst-launch-1.0 ") {
                    out.push((block.line, span.to_owned()));
                }
            }
        }
        out
    }

    #[test]
    fn every_property_the_guides_name_exists() {
        let props = Properties::read();
        let others: BTreeSet<&str> = OTHERS.iter().map(|(name, _)| *name).collect();
        let mut unknown = Vec::new();
        let mut checked = 0;
        for file in guides() {
            let text = read(&file);
            for (line, description) in descriptions(&text) {
                for named in check::assignments(&description, &OURS) {
                    checked += 1;
                    let known = match &named.element {
                        Some(factory) => props.has(factory, &named.property),
                        None => {
                            props.any_has(&named.property)
                                || others.contains(named.property.as_str())
                        }
                    };
                    if !known {
                        unknown.push(format!(
                            "{}:{line}: {} on {}",
                            file.display(),
                            named.property,
                            named.element.as_deref().unwrap_or("no element of ours")
                        ));
                    }
                }
            }
            for (line, name) in check::first_column(&text, "property") {
                checked += 1;
                if !props.any_has(&name) {
                    unknown.push(format!(
                        "{}:{line}: {name} (a property table)",
                        file.display()
                    ));
                }
            }
        }
        assert!(checked > 200, "only {checked} properties read");
        assert!(
            unknown.is_empty(),
            "properties no element of ours has (a property of another element written \
             as name=value belongs in OTHERS):\n{}",
            unknown.join("\n")
        );
    }

    #[test]
    fn the_property_tables_give_the_defaults_of_gst_inspect() {
        let props = Properties::read();
        let mut wrong = Vec::new();
        let mut checked = 0;
        for file in guides() {
            for (line, name, value) in check::table_defaults(&read(&file)) {
                checked += 1;
                let real = props.defaults.get(&name);
                if !real.is_some_and(|r| r.contains(&value)) {
                    wrong.push(format!(
                        "{}:{line}: {name} defaults to {value:?} in the guide, {real:?} in the elements",
                        file.display()
                    ));
                }
            }
        }
        assert!(checked > 5, "only {checked} defaults read");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Every field name of a `stats` structure, those of the structures in
    /// its arrays too.
    fn field_names(stats: &gst::StructureRef, into: &mut BTreeSet<String>) {
        for (name, value) in stats.iter() {
            into.insert(name.to_string());
            if let Ok(array) = value.get::<gst::Array>() {
                for item in array.iter() {
                    if let Ok(inner) = item.get::<gst::Structure>() {
                        field_names(&inner, into);
                    }
                }
            }
        }
    }

    /// The fields of every element's `stats` after a run of the tiny model:
    /// a transcriber with a request pad and a translate pad into a subtitle
    /// encoder, a sink with a request pad, and a transcriber on a vLLM
    /// double (its `servers`).
    fn real_stats_fields() -> BTreeSet<String> {
        common::init_plugin();
        let model = common::tiny_model();
        let model = model.display();
        let pipeline = gst::parse::launch(&format!(
            "audiotestsrc num-buffers=10 samplesperbuffer=1600 ! audioconvert ! audioresample ! \
             audio/x-raw,rate=16000,channels=1 ! tee name=a \
             a. ! queue ! t.sink_0 voxtralrttranscriber name=t model-path={model} \
               ! voxtralrtsubenc name=e ! fakesink t.translate_src_0 ! fakesink \
             a. ! queue ! s.sink_0 voxtralrtsink name=s model-path={model}"
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        pipeline.set_state(gst::State::Playing).unwrap();
        common::expect_eos(&pipeline);
        let mut fields = BTreeSet::new();
        for name in ["t", "e", "s"] {
            let stats = pipeline
                .by_name(name)
                .unwrap()
                .property::<gst::Structure>("stats");
            field_names(&stats, &mut fields);
        }
        pipeline.set_state(gst::State::Null).unwrap();

        let double = common::vllm_double::Double::start(
            common::fixture("voxtral-rt-tone.gguf"),
            Default::default(),
        );
        let run = common::remote::transcribe(
            &double.url(),
            common::vllm_double::SERVED_MODEL,
            &common::sine(1.0),
            "",
        );
        assert!(run.errors.is_empty(), "{:?}", run.errors);
        field_names(run.stats.as_ref().unwrap(), &mut fields);
        fields
    }

    #[test]
    fn the_stats_fields_are_those_the_guides_name() {
        let real = real_stats_fields();
        for nested in [
            "participants",
            "translations",
            "servers",
            "connections",
            "units",
        ] {
            assert!(real.contains(nested), "no {nested} in {real:?}");
        }
        // The reference lists every field, and only fields.
        let reference = PathBuf::from("docs/elements.md");
        let listed: BTreeSet<String> = check::first_column(&read(&reference), "field")
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        let unlisted: Vec<&String> = real.difference(&listed).collect();
        let unreal: Vec<&String> = listed.difference(&real).collect();
        assert!(
            unlisted.is_empty() && unreal.is_empty(),
            "docs/elements.md's stats table lacks {unlisted:?} and lists {unreal:?}, which no \
             element has"
        );
        // Each guide's "`stats` (`field`, ...)".
        let mut unknown = Vec::new();
        let mut named = 0;
        for file in guides() {
            for (line, field) in check::stats_fields_named(&read(&file)) {
                named += 1;
                if !real.contains(&field) {
                    unknown.push(format!("{}:{line}: {field}", file.display()));
                }
            }
        }
        assert!(named > 20, "only {named} stats fields named");
        assert!(
            unknown.is_empty(),
            "stats fields no element has:\n{}",
            unknown.join("\n")
        );
    }
}
