// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Just enough of the GGUF header to tell the user what a file is before the
//! library is asked to load it (transcribe.cpp answers "unsupported
//! architecture" without naming the one it found), and the few numbers that
//! fix how long the model's audio frames are, which the library does not
//! expose.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

const MAGIC: &[u8; 4] = b"GGUF";
const MAX_STRING: u64 = 1 << 20;

/// What the header said about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Header {
    /// The file does not start with the GGUF magic.
    NotGguf,
    /// The header ends early or holds values no writer produces.
    Damaged(String),
    /// A GGUF file; the architecture if the header names one.
    Gguf {
        architecture: Option<String>,
        frames: FrameGeometry,
    },
}

/// The header values that make a model's audio token 80 ms long and say when
/// its tokens can be decoded (`None` where the header lacks the key).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FrameGeometry {
    pub sample_rate: Option<u32>,
    pub hop_length: Option<u32>,
    pub win_length: Option<u32>,
    pub audio_length_per_tok: Option<u32>,
    pub downsample_factor: Option<u32>,
}

impl FrameGeometry {
    /// Voxtral Mini 4B Realtime's: 16 kHz, 10 ms mel hop, 25 ms window,
    /// 8 mel frames per token (80 ms), encoder frames downsampled by 4.
    pub(crate) const VOXTRAL_REALTIME: FrameGeometry = FrameGeometry {
        sample_rate: Some(16_000),
        hop_length: Some(160),
        win_length: Some(400),
        audio_length_per_tok: Some(8),
        downsample_factor: Some(4),
    };

    /// Whether every value the header has is Voxtral Realtime's.
    pub(crate) fn is_voxtral_realtime(&self) -> bool {
        let expected = Self::VOXTRAL_REALTIME;
        [
            (self.sample_rate, expected.sample_rate),
            (self.hop_length, expected.hop_length),
            (self.win_length, expected.win_length),
            (self.audio_length_per_tok, expected.audio_length_per_tok),
            (self.downsample_factor, expected.downsample_factor),
        ]
        .iter()
        .all(|(found, expected)| found.is_none() || found == expected)
    }

    fn slot(&mut self, key: &str) -> Option<&mut Option<u32>> {
        match key {
            "stt.frontend.sample_rate" => Some(&mut self.sample_rate),
            "stt.frontend.hop_length" => Some(&mut self.hop_length),
            "stt.frontend.win_length" => Some(&mut self.win_length),
            "stt.voxtral_realtime.projector.audio_length_per_tok" => {
                Some(&mut self.audio_length_per_tok)
            }
            "stt.voxtral_realtime.projector.downsample_factor" => Some(&mut self.downsample_factor),
            _ => None,
        }
    }
}

/// Reads the header of `path`. I/O errors are returned as they are, so the
/// caller can tell a missing file from an unreadable one.
pub(crate) fn read_header(path: &Path) -> io::Result<Header> {
    let mut reader = BufReader::new(File::open(path)?);
    let mut magic = [0u8; 4];
    match reader.read_exact(&mut magic) {
        Ok(()) if &magic == MAGIC => {}
        Ok(()) => return Ok(Header::NotGguf),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Header::NotGguf),
        Err(e) => return Err(e),
    }
    match read_keys(&mut reader) {
        Ok((architecture, frames)) => Ok(Header::Gguf {
            architecture,
            frames,
        }),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            Ok(Header::Damaged("the header ends early".into()))
        }
        Err(e) if e.kind() == io::ErrorKind::InvalidData => Ok(Header::Damaged(e.to_string())),
        Err(e) => Err(e),
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn read_string(r: &mut impl Read) -> io::Result<String> {
    let len = read_u64(r)?;
    if len > MAX_STRING {
        return Err(invalid("a header string is implausibly long"));
    }
    let mut bytes = vec![0u8; len as usize];
    r.read_exact(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn skip(r: &mut impl Read, n: u64) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n), &mut io::sink())?;
    if copied == n {
        Ok(())
    } else {
        Err(io::ErrorKind::UnexpectedEof.into())
    }
}

/// Size in bytes of a fixed-size GGUF value type, `None` for strings/arrays.
fn scalar_size(value_type: u32) -> io::Result<Option<u64>> {
    Ok(match value_type {
        0 | 1 | 7 => Some(1), // u8, i8, bool
        2 | 3 => Some(2),     // u16, i16
        4..=6 => Some(4),     // u32, i32, f32
        10..=12 => Some(8),   // u64, i64, f64
        8 | 9 => None,        // string, array
        _ => return Err(invalid("unknown value type in the header")),
    })
}

fn skip_value(r: &mut impl Read, value_type: u32) -> io::Result<()> {
    if let Some(size) = scalar_size(value_type)? {
        return skip(r, size);
    }
    if value_type == 8 {
        let len = read_u64(r)?;
        return skip(r, len);
    }
    let item_type = read_u32(r)?;
    let count = read_u64(r)?;
    match scalar_size(item_type)? {
        Some(size) => skip(
            r,
            size.checked_mul(count)
                .ok_or_else(|| invalid("array too long"))?,
        ),
        None => (0..count).try_for_each(|_| skip_value(r, item_type)),
    }
}

const TYPE_U32: u32 = 4;
const TYPE_STRING: u32 = 8;

fn read_keys(r: &mut impl Read) -> io::Result<(Option<String>, FrameGeometry)> {
    let version = read_u32(r)?;
    if !(2..=3).contains(&version) {
        return Err(invalid("unsupported GGUF version"));
    }
    let _tensor_count = read_u64(r)?;
    let kv_count = read_u64(r)?;
    let mut architecture = None;
    let mut frames = FrameGeometry::default();
    for _ in 0..kv_count {
        let key = read_string(r)?;
        let value_type = read_u32(r)?;
        if key == "general.architecture" && value_type == TYPE_STRING {
            architecture = Some(read_string(r)?);
        } else if let (Some(slot), TYPE_U32) = (frames.slot(&key), value_type) {
            *slot = Some(read_u32(r)?);
        } else {
            skip_value(r, value_type)?;
        }
    }
    Ok((architecture, frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gguf_with(kvs: &[(&str, &str)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend(0u64.to_le_bytes());
        out.extend((kvs.len() as u64 + 1).to_le_bytes());
        // A numeric key first, so the reader has to skip a value.
        out.extend(("x.n".len() as u64).to_le_bytes());
        out.extend(b"x.n");
        out.extend(4u32.to_le_bytes());
        out.extend(7u32.to_le_bytes());
        for (k, v) in kvs {
            out.extend((k.len() as u64).to_le_bytes());
            out.extend(k.as_bytes());
            out.extend(8u32.to_le_bytes());
            out.extend((v.len() as u64).to_le_bytes());
            out.extend(v.as_bytes());
        }
        out
    }

    fn header_of(bytes: &[u8]) -> Header {
        let dir = std::env::temp_dir().join(format!("voxtralrt-gguf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!(
            "{:x}.gguf",
            bytes.len() * 31 + bytes.first().copied().unwrap_or(0) as usize
        ));
        std::fs::write(&path, bytes).unwrap();
        let header = read_header(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        header
    }

    #[test]
    fn names_the_architecture_after_other_keys() {
        let bytes = gguf_with(&[
            ("general.name", "tiny"),
            ("general.architecture", "whisper"),
        ]);
        assert_eq!(
            header_of(&bytes),
            Header::Gguf {
                architecture: Some("whisper".into()),
                frames: FrameGeometry::default(),
            }
        );
    }

    #[test]
    fn reads_the_frame_geometry_of_the_fixture() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/voxtral-rt-tiny.gguf");
        let Header::Gguf { frames, .. } = read_header(&path).unwrap() else {
            panic!("the fixture is GGUF");
        };
        assert_eq!(frames, FrameGeometry::VOXTRAL_REALTIME);
        assert!(frames.is_voxtral_realtime());
        let other = FrameGeometry {
            hop_length: Some(320),
            ..frames
        };
        assert!(!other.is_voxtral_realtime());
        assert!(FrameGeometry::default().is_voxtral_realtime());
    }

    #[test]
    fn a_text_file_is_not_gguf() {
        assert_eq!(header_of(b"hello world\n"), Header::NotGguf);
    }

    #[test]
    fn a_cut_header_is_damaged() {
        let bytes = gguf_with(&[("general.architecture", "voxtral_realtime")]);
        assert!(matches!(
            header_of(&bytes[..bytes.len() - 5]),
            Header::Damaged(_)
        ));
    }
}
