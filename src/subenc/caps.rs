// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The encoder's src caps: those of GStreamer's own parsers and encoders
//! (subparse, sccparse, ttmlparse), TTML's profile in a field, and the
//! format chosen from what downstream takes.

use crate::subtitles::file::{FileChoice, FileKind};
use crate::subtitles::ttml::Profile;

/// The formats the encoder writes, in the order `format=auto` prefers them.
const KINDS: [FileKind; 5] = [
    FileKind::Srt,
    FileKind::Vtt,
    FileKind::Scc,
    FileKind::Ttml(Profile::Imsc11Text),
    FileKind::Ttml(Profile::EbuTtD),
];

const TTML: &str = "application/ttml+xml";

fn profile_name(profile: Profile) -> &'static str {
    match profile {
        Profile::Imsc11Text => "imsc1.1-text",
        Profile::EbuTtD => "ebu-tt-d",
    }
}

/// The caps of the file format `kind`.
pub(super) fn caps_of(kind: FileKind) -> gst::Caps {
    match kind {
        FileKind::Srt => gst::Caps::new_empty_simple("application/x-subtitle"),
        FileKind::Vtt => gst::Caps::new_empty_simple("application/x-subtitle-vtt"),
        FileKind::Scc => gst::Caps::new_empty_simple("application/x-scc"),
        FileKind::Ttml(profile) => gst::Caps::builder(TTML)
            .field("profile", profile_name(profile))
            .build(),
        FileKind::Records(_) => unreachable!("the encoder takes subtitle formats only"),
    }
}

/// Every format's caps, in the order of preference: the src template.
pub(super) fn template_caps() -> gst::Caps {
    let mut caps = gst::Caps::new_empty();
    for kind in KINDS {
        caps.merge(caps_of(kind));
    }
    caps
}

/// What the encoder offers with `format` set to `choice`: that format's
/// caps, or (auto) every format's.
pub(super) fn offered(choice: FileChoice) -> gst::Caps {
    match choice {
        FileChoice::Auto => template_caps(),
        chosen => caps_of(FileKind::of(chosen, std::path::Path::new(""))),
    }
}

/// The first format among `allowed` (what downstream takes of the offer,
/// in the offer's order), if any.
pub(super) fn choose(allowed: &gst::Caps) -> Option<FileKind> {
    allowed.iter().find_map(kind_of)
}

fn kind_of(s: &gst::StructureRef) -> Option<FileKind> {
    match s.name().as_str() {
        "application/x-subtitle" => Some(FileKind::Srt),
        "application/x-subtitle-vtt" => Some(FileKind::Vtt),
        "application/x-scc" => Some(FileKind::Scc),
        TTML => {
            // A profile left open (a list, or none) is the first offered.
            let profile = s.get::<&str>("profile").ok();
            Some(FileKind::Ttml(match profile {
                Some(p) if p == profile_name(Profile::EbuTtD) => Profile::EbuTtD,
                _ => Profile::Imsc11Text,
            }))
        }
        _ => None,
    }
}

/// Why downstream, which takes `takes`, refuses the encoder's output, and
/// what to do: the ERROR's text.
pub(super) fn refusal(format: FileChoice, takes: &gst::Caps) -> String {
    match format {
        FileChoice::Auto => format!(
            "voxtralrtsubenc writes none of the formats downstream takes ({takes}): \
             it writes srt, vtt, scc, ttml and ebu-tt-d"
        ),
        chosen => format!(
            "voxtralrtsubenc format={chosen} is not what downstream takes ({takes}): \
             set format to one it takes, or leave format=auto"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(s: &str) -> gst::Caps {
        s.parse().unwrap()
    }

    #[test]
    fn auto_takes_the_first_format_downstream_takes_in_the_encoders_order() {
        gst::init().unwrap();
        let offer = offered(FileChoice::Auto);
        // As a peer's CAPS query with the offer as its filter answers.
        let pick = |downstream: &str| {
            choose(&offer.intersect_with_mode(&caps(downstream), gst::CapsIntersectMode::First))
        };
        assert_eq!(pick("ANY"), Some(FileKind::Srt));
        assert_eq!(pick("application/x-subtitle-vtt"), Some(FileKind::Vtt));
        assert_eq!(pick("application/x-scc"), Some(FileKind::Scc));
        assert_eq!(
            pick("application/ttml+xml"),
            Some(FileKind::Ttml(Profile::Imsc11Text))
        );
        assert_eq!(
            pick("application/ttml+xml, profile=ebu-tt-d"),
            Some(FileKind::Ttml(Profile::EbuTtD))
        );
        assert_eq!(pick("text/x-raw"), None);
    }

    #[test]
    fn a_format_set_offers_its_caps_alone() {
        gst::init().unwrap();
        assert_eq!(offered(FileChoice::Vtt), caps("application/x-subtitle-vtt"));
        let offer = offered(FileChoice::Scc);
        assert!(offer
            .intersect(&caps("application/x-subtitle-vtt"))
            .is_empty());
    }
}
