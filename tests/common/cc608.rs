// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Reading CEA-608 captions back (tests/captions.rs, tests/webrtc.rs).

use cea608_types::{Cea608, Cea608State};

/// The text characters of CEA-608 CC1 byte pairs, with the time of the
/// pair that wrote them (a character replaced by an extended one is
/// dropped).
pub fn cc1_chars(pairs: &[(u64, [u8; 2])]) -> Vec<(u64, char)> {
    let mut state = Cea608State::default();
    let mut chars: Vec<(u64, char)> = Vec::new();
    for &(t, pair) in pairs {
        match state.decode(pair) {
            Ok(Some(Cea608::Text(text))) => {
                if text.needs_backspace {
                    chars.pop();
                }
                let written = [text.char1, text.char2].into_iter().flatten();
                chars.extend(written.map(|c| (t, c)));
            }
            // A new row separates words as a space does.
            Ok(Some(Cea608::CarriageReturn(_))) => chars.push((t, ' ')),
            _ => {}
        }
    }
    chars
}
