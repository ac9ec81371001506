// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The src pad's caps: text, or closed captions at the broadcast frame
//! rates, and the choice among what downstream takes.

use crate::caption::{self, CcFormat, Framerate};

/// What the src pad can output: text first (the default), then closed
/// captions, 708 before 608 (708 formats carry CC1 too), at the broadcast
/// frame rates.
pub(super) fn src_caps() -> gst::Caps {
    let mut caps = gst::Caps::builder("text/x-raw")
        .field("format", "utf8")
        .build();
    let framerates = gst::List::new(
        caption::format::BROADCAST_FRAMERATES
            .iter()
            .map(|f| gst::Fraction::new(f.numer as i32, f.denom as i32)),
    );
    let caps_mut = caps.get_mut().expect("new caps");
    for format in [
        CcFormat::Cea708CcData,
        CcFormat::Cea708Cdp,
        CcFormat::Cea608Raw,
        CcFormat::Cea608S334_1a,
    ] {
        let (name, format) = format.caps_name_and_format();
        caps_mut.append_structure(
            gst::Structure::builder(name)
                .field("format", format)
                .field("framerate", &framerates)
                .build(),
        );
    }
    caps
}

/// What the src pad offers with captions on `channel`: the template,
/// without the caption formats that cannot carry it.
pub(super) fn offered_caps(template: &gst::Caps, channel: caption::Channel608) -> gst::Caps {
    let mut offered = gst::Caps::new_empty();
    let offered_mut = offered.get_mut().expect("new caps");
    for s in template.iter() {
        let format = s
            .get::<&str>("format")
            .ok()
            .and_then(|f| CcFormat::from_caps_name_and_format(s.name(), f));
        if format.is_none_or(|f| f.carries(channel)) {
            offered_mut.append_structure(s.to_owned());
        }
    }
    offered
}

/// Text, one buffer per word, line or unit.
pub(super) fn text_caps() -> gst::Caps {
    gst::Caps::builder("text/x-raw")
        .field("format", "utf8")
        .build()
}

/// The output caps from what downstream takes: its first choice, with the
/// frame rate nearest 29.97 fps where it leaves that open.
pub(super) fn choose_caps(allowed: &gst::Caps) -> Option<gst::Caps> {
    if allowed.is_empty() {
        return None;
    }
    if allowed.is_any() {
        return Some(text_caps());
    }
    let mut caps = allowed.clone();
    caps.truncate();
    {
        let caps = caps.make_mut();
        let s = caps.structure_mut(0).expect("not empty");
        if s.has_field("framerate") {
            let ntsc = Framerate::NTSC;
            s.fixate_field_nearest_fraction(
                "framerate",
                gst::Fraction::new(ntsc.numer as i32, ntsc.denom as i32),
            );
        }
    }
    caps.fixate();
    Some(caps)
}

/// The caption format and frame rate of fixed caps, if they are captions.
pub(super) fn caption_format(caps: &gst::Caps) -> Option<(CcFormat, Framerate)> {
    let s = caps.structure(0)?;
    let format = CcFormat::from_caps_name_and_format(s.name(), s.get::<&str>("format").ok()?)?;
    let fps = s.get::<gst::Fraction>("framerate").ok()?;
    Some((
        format,
        Framerate::new(fps.numer() as u32, fps.denom() as u32),
    ))
}
