// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The subtitle properties' values as GLib enums, so that gst-inspect-1.0
//! lists them, bindings get an enum and a typo fails where it is set:
//! `subtitle-style` (all three elements), the sink's `format` and the
//! encoder's `format`. Their nicks are the names the properties took as
//! strings. The pure rooms keep their own types (`StyleName`,
//! `FileChoice`); these convert to and from them.

use gst::glib;
use gst::prelude::*;

use crate::subtitles::file::FileChoice;
use crate::subtitles::StyleName;

/// `subtitle-style`: how timed words become cues.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtSubtitleStyle")]
pub enum SubtitleStyle {
    #[enum_value(
        name = "Rows of max-line-chars as spoken, a cue per row (live captions)",
        nick = "broadcast"
    )]
    Broadcast = 0,
    #[enum_value(
        name = "Netflix: 2 lines of 42, 5/6 s to 7 s, 20 chars/s (17 in other languages)",
        nick = "netflix"
    )]
    Netflix = 1,
    #[enum_value(name = "BBC: 2 lines of 37, 180 words a minute", nick = "bbc")]
    Bbc = 2,
    #[enum_value(
        name = "DCMP: 2 lines of 32, 2 s to 7 s, 225 words a minute",
        nick = "dcmp"
    )]
    Dcmp = 3,
}

/// `voxtralrtsink`'s `format`: what its transcript file holds.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtFileFormat")]
pub enum FileFormat {
    #[enum_value(
        name = "By the location's extension (.srt .vtt .scc .ttml .jsonl; .ebu.ttml: ebu-tt-d; else txt)",
        nick = "auto"
    )]
    Auto = 0,
    #[enum_value(name = "Plain text, a line per word or line", nick = "txt")]
    Txt = 1,
    #[enum_value(name = "SubRip cues of subtitle-style", nick = "srt")]
    Srt = 2,
    #[enum_value(name = "WebVTT cues of subtitle-style", nick = "vtt")]
    Vtt = 3,
    #[enum_value(name = "A JSON record per word or line", nick = "jsonl")]
    Jsonl = 4,
    #[enum_value(
        name = "Scenarist SCC (CEA-608) captions of subtitle-style",
        nick = "scc"
    )]
    Scc = 5,
    #[enum_value(name = "IMSC 1.1 Text (TTML) cues of subtitle-style", nick = "ttml")]
    Ttml = 6,
    #[enum_value(name = "EBU-TT-D (TTML) cues of subtitle-style", nick = "ebu-tt-d")]
    EbuTtD = 7,
}

/// `voxtralrtsubenc`'s `format`: the subtitle file it encodes, and its src
/// caps.
#[derive(Debug, Eq, PartialEq, Hash, Clone, Copy, glib::Enum)]
#[repr(u32)]
#[enum_type(name = "GstVoxtralRtSubtitleFormat")]
pub enum SubtitleFormat {
    #[enum_value(
        name = "The first of these that downstream's caps take (srt where it takes any)",
        nick = "auto"
    )]
    Auto = 0,
    #[enum_value(name = "SubRip (application/x-subtitle)", nick = "srt")]
    Srt = 1,
    #[enum_value(name = "WebVTT (application/x-subtitle-vtt)", nick = "vtt")]
    Vtt = 2,
    #[enum_value(name = "Scenarist SCC, CEA-608 (application/x-scc)", nick = "scc")]
    Scc = 3,
    #[enum_value(
        name = "IMSC 1.1 Text (application/ttml+xml, profile=imsc1.1-text)",
        nick = "ttml"
    )]
    Ttml = 4,
    #[enum_value(
        name = "EBU-TT-D (application/ttml+xml, profile=ebu-tt-d)",
        nick = "ebu-tt-d"
    )]
    EbuTtD = 5,
}

/// `From` both ways between a property's enum and the pure room's type,
/// variant for variant by name; `else` maps the pure type's variants that
/// the enum lacks. A variant added to either side and not here fails to
/// compile.
macro_rules! convert_by_name {
    ($glib:ident <=> $pure:ident: $($variant:ident),+ $(; else $($other:ident)|+ => $fallback:ident)?) => {
        impl From<$glib> for $pure {
            fn from(value: $glib) -> Self {
                match value {
                    $($glib::$variant => $pure::$variant,)+
                }
            }
        }

        impl From<$pure> for $glib {
            fn from(value: $pure) -> Self {
                match value {
                    $($pure::$variant => $glib::$variant,)+
                    $($($pure::$other)|+ => $glib::$fallback,)?
                }
            }
        }
    };
}

convert_by_name!(SubtitleStyle <=> StyleName: Broadcast, Netflix, Bbc, Dcmp);
convert_by_name!(FileFormat <=> FileChoice: Auto, Txt, Srt, Vtt, Jsonl, Scc, Ttml, EbuTtD);
// The encoder is never set to records (txt, jsonl): they read as auto.
convert_by_name!(
    SubtitleFormat <=> FileChoice: Auto, Srt, Vtt, Scc, Ttml, EbuTtD;
    else Txt | Jsonl => Auto
);

/// Marks these enums as plugin API, for the documentation tools.
pub fn mark_formats_as_plugin_api() {
    for t in [
        SubtitleStyle::static_type(),
        FileFormat::static_type(),
        SubtitleFormat::static_type(),
    ] {
        t.mark_as_plugin_api(gst::PluginAPIFlags::empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_converts_to_its_namesake_and_back() {
        for style in [
            StyleName::Broadcast,
            StyleName::Netflix,
            StyleName::Bbc,
            StyleName::Dcmp,
        ] {
            assert_eq!(StyleName::from(SubtitleStyle::from(style)), style);
        }
        assert_eq!(SubtitleStyle::from(StyleName::Bbc), SubtitleStyle::Bbc);
        assert_eq!(FileChoice::from(FileFormat::Jsonl), FileChoice::Jsonl);
        assert_eq!(FileFormat::from(FileChoice::EbuTtD), FileFormat::EbuTtD);
        assert_eq!(FileChoice::from(SubtitleFormat::Scc), FileChoice::Scc);
        // Records are no subtitle format: the encoder reads them as auto.
        assert_eq!(SubtitleFormat::from(FileChoice::Txt), SubtitleFormat::Auto);
        assert_eq!(
            SubtitleFormat::from(FileChoice::Jsonl),
            SubtitleFormat::Auto
        );
        assert_eq!(SubtitleFormat::from(FileChoice::Ttml), SubtitleFormat::Ttml);
    }
}
