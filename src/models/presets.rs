// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The `model` property's presets: the quantisations of Voxtral Mini 4B
//! Realtime 2602 published as GGUF files that transcribe.cpp loads.
//!
//! Source: the model card of the transcribe.cpp GGUF conversions of
//! mistralai/Voxtral-Mini-4B-Realtime-2602,
//! <https://huggingface.co/memoravox/Voxtral-Mini-4B-Realtime-2602-gguf>
//! (files `Voxtral-Mini-4B-Realtime-2602-<QUANT>.gguf`; sizes and
//! LibriSpeech test-clean WER as stated there). The repository could not be
//! checked from the machines this was written on (they do not reach the
//! Hub), so a preset names a quantisation tag, not a file: the file is
//! found in the repository's listing, and a renamed file still resolves.

use super::{FileChoice, HubFile};

/// The repository every preset comes from.
pub const PRESET_REPO: &str = "memoravox/Voxtral-Mini-4B-Realtime-2602-gguf";

/// One preset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// What the `model` property takes.
    pub name: &'static str,
    /// The quantisation tag in the file name.
    pub tag: &'static str,
    /// Size of the file, GB (10^9 bytes).
    pub size_gb: f32,
    /// LibriSpeech test-clean WER, %.
    pub wer: f32,
}

/// Smallest first; `q4_k_m` is the one to start with.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "q4_k_m",
        tag: "Q4_K_M",
        size_gb: 2.83,
        wer: 2.08,
    },
    Preset {
        name: "q5_k_m",
        tag: "Q5_K_M",
        size_gb: 3.28,
        wer: 2.08,
    },
    Preset {
        name: "q6_k",
        tag: "Q6_K",
        size_gb: 3.66,
        wer: 2.08,
    },
    Preset {
        name: "q8_0",
        tag: "Q8_0",
        size_gb: 4.73,
        wer: 2.07,
    },
    Preset {
        name: "f16",
        tag: "F16",
        size_gb: 8.88,
        wer: 2.09,
    },
    Preset {
        name: "bf16",
        tag: "BF16",
        size_gb: 8.87,
        wer: 2.08,
    },
];

/// The preset called `name` (any case).
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
}

/// The preset names, for messages and blurbs.
pub fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Preset {
    pub fn hub_file(&self) -> HubFile {
        HubFile {
            repo: PRESET_REPO.to_owned(),
            revision: None,
            file: FileChoice::Quant(self.tag.to_owned()),
        }
    }
}
