// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Speaker diarization ("who spoke when") with transcribe.cpp's DIARIZE role:
//! NVIDIA's Streaming Sortformer (the `sortformer` family, up to 4 speakers).
//!
//! The library diarizes one recording per call ([`Diarizer::run`]); it keeps
//! no state between calls. Live use runs it over a sliding window of recent
//! audio and carries the labels from window to window with
//! [`SpeakerTracker`] (docs/diarizer.md).

use std::path::Path;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use transcribe_cpp_sys as ffi;

use super::model::{engine_error, load_file, status_name};
use super::{log, Backend, Error, ModelSpec};

/// The architecture name of Sortformer GGUF files.
pub const SORTFORMER_ARCH: &str = "sortformer";

/// The sample rate the diarizer takes (mono f32).
pub const DIARIZE_SAMPLE_RATE: u32 = 16_000;

/// Sortformer's streaming operating point: chunk geometry bundles published
/// with the model (include/transcribe/sortformer.h), from most to least
/// look-ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiarizePreset {
    /// The configuration shipped in the GGUF file.
    #[default]
    Default,
    /// About 30.4 s of look-ahead (chunk 340 + 40 frames of 80 ms).
    VeryHighLatency,
    /// About 10 s of look-ahead (chunk 124 + 1 frame).
    HighLatency,
    /// About 1.04 s of look-ahead (chunk 6 + 7 frames): the real-time point.
    LowLatency,
}

impl DiarizePreset {
    /// The audio a frame's label waits for past the frame (chunk plus right
    /// context, at 80 ms a frame); `None` for the file's own configuration.
    pub fn lookahead(self) -> Option<Duration> {
        let frames = match self {
            DiarizePreset::Default => return None,
            DiarizePreset::VeryHighLatency => 340 + 40,
            DiarizePreset::HighLatency => 124 + 1,
            DiarizePreset::LowLatency => 6 + 7,
        };
        Some(Duration::from_millis(frames * 80))
    }

    /// The name used in messages and on command lines.
    pub fn nick(self) -> &'static str {
        match self {
            DiarizePreset::Default => "default",
            DiarizePreset::VeryHighLatency => "very-high-latency",
            DiarizePreset::HighLatency => "high-latency",
            DiarizePreset::LowLatency => "low-latency",
        }
    }

    fn ffi(self) -> ffi::transcribe_sortformer_preset {
        use ffi::transcribe_sortformer_preset as P;
        match self {
            DiarizePreset::Default => P::TRANSCRIBE_SORTFORMER_PRESET_DEFAULT,
            DiarizePreset::VeryHighLatency => P::TRANSCRIBE_SORTFORMER_PRESET_VERY_HIGH_LATENCY,
            DiarizePreset::HighLatency => P::TRANSCRIBE_SORTFORMER_PRESET_HIGH_LATENCY,
            DiarizePreset::LowLatency => P::TRANSCRIBE_SORTFORMER_PRESET_LOW_LATENCY,
        }
    }
}

/// One speaker turn: `speaker` talks from `start_ms` to `end_ms`. Turns of
/// different speakers may overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpeakerSegment {
    pub start_ms: u64,
    pub end_ms: u64,
    /// 1-based, at most the model's `max_speakers`: a column of the model's
    /// output, numbered afresh by each run (the real model orders speakers
    /// by arrival).
    pub speaker: u32,
}

/// A diarization model and its one session. The library runs one recording
/// per model at a time, so the two belong together.
pub struct Diarizer {
    model: NonNull<ffi::transcribe_model>,
    session: NonNull<ffi::transcribe_diarize_session>,
    max_speakers: u32,
    sample_rate: u32,
    load_time: Duration,
}

// SAFETY: model calls are thread-safe in transcribe.cpp, and the session is
// used only through `&mut self`, by one thread at a time.
unsafe impl Send for Diarizer {}

impl Diarizer {
    /// Loads a diarization model (a `sortformer` GGUF) on the CPU, with a
    /// session of `n_threads` (0 = the library's default).
    pub fn load(path: &Path, n_threads: u32) -> Result<Diarizer, Error> {
        log::install();
        // The library's own "no such file" would be worded for Voxtral models.
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Err(unreadable(path, "it is not a file")),
            Err(e) => return Err(unreadable(path, &e.to_string())),
        }
        let mut spec = ModelSpec::new(path);
        spec.backend = Backend::Cpu;
        let started = Instant::now();
        let model = load_file(path, &spec).map_err(|e| match e {
            Error::WrongArchitecture { found, .. } => not_a_diarizer(path, found),
            e => e,
        })?;
        let load_time = started.elapsed();
        // From here on, `model` is freed by Drop or by `free_model`.
        let free_model = |e: Error| {
            // SAFETY: loaded above, never shared, not used after this.
            unsafe { ffi::transcribe_model_free(model.as_ptr()) };
            e
        };

        let mut info = std::mem::MaybeUninit::<ffi::transcribe_diarize_info>::zeroed();
        // SAFETY: the init function fills the struct; the model is valid.
        let (info, status) = unsafe {
            ffi::transcribe_diarize_info_init(info.as_mut_ptr());
            let mut info = info.assume_init();
            let status = ffi::transcribe_diarize_get_info(model.as_ptr(), &mut info);
            (info, status)
        };
        if status != ffi::transcribe_status::TRANSCRIBE_OK {
            return Err(free_model(not_a_diarizer(path, status_name(status))));
        }

        let mut sp = std::mem::MaybeUninit::<ffi::transcribe_diarize_session_params>::zeroed();
        // SAFETY: the init function fills the whole struct.
        let mut sp = unsafe {
            ffi::transcribe_diarize_session_params_init(sp.as_mut_ptr());
            sp.assume_init()
        };
        sp.n_threads = i32::try_from(n_threads).unwrap_or(i32::MAX);
        let mut session: *mut ffi::transcribe_diarize_session = std::ptr::null_mut();
        // SAFETY: a valid model, initialised params and an out pointer.
        let (status, detail) = log::capture(|| unsafe {
            ffi::transcribe_diarize_session_init(model.as_ptr(), &sp, &mut session)
        });
        let session = match NonNull::new(session) {
            Some(s) if status == ffi::transcribe_status::TRANSCRIBE_OK => s,
            _ => {
                return Err(free_model(engine_error(
                    "creating a diarization session",
                    status,
                    detail,
                )))
            }
        };
        Ok(Diarizer {
            model,
            session,
            max_speakers: info.max_speakers.max(0) as u32,
            sample_rate: info.sample_rate.max(0) as u32,
            load_time,
        })
    }

    /// The most speakers a run tells apart (ids are `1..=max_speakers`).
    pub fn max_speakers(&self) -> u32 {
        self.max_speakers
    }

    /// The sample rate [`run`](Self::run) expects.
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// How long the library took to load the file.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// Diarizes one recording of 16 kHz mono samples with `preset`; returns
    /// the speaker turns ordered by start (then speaker). Computes on the
    /// calling thread. The preset travels as the Sortformer run extension,
    /// which a diarizer of another family would refuse (INVALID_ARG).
    pub fn run(
        &mut self,
        samples: &[f32],
        preset: DiarizePreset,
    ) -> Result<Vec<SpeakerSegment>, Error> {
        let invalid = |detail: String| Error::Engine {
            operation: "diarizing",
            status: "invalid audio".into(),
            detail,
        };
        if samples.is_empty() {
            return Err(invalid("no samples".into()));
        }
        let n = i32::try_from(samples.len()).map_err(|_| {
            invalid(format!(
                "{} samples are too many for one run",
                samples.len()
            ))
        })?;
        if let Some(i) = samples.iter().position(|s| !s.is_finite()) {
            return Err(invalid(format!(
                "sample {i} is {} (every sample must be finite)",
                samples[i]
            )));
        }

        let mut ext = std::mem::MaybeUninit::<ffi::transcribe_sortformer_diarize_ext>::zeroed();
        // SAFETY: the init function fills the whole struct.
        let mut ext = unsafe {
            ffi::transcribe_sortformer_diarize_ext_init(ext.as_mut_ptr());
            ext.assume_init()
        };
        ext.preset = preset.ffi();
        let mut params = std::mem::MaybeUninit::<ffi::transcribe_diarize_params>::zeroed();
        // SAFETY: the init function fills the whole struct.
        let mut params = unsafe {
            ffi::transcribe_diarize_params_init(params.as_mut_ptr());
            params.assume_init()
        };
        params.family = &ext.ext;
        // SAFETY: valid session; `samples` holds `n` finite floats; params
        // and the extension it points to live across the call.
        let (status, detail) = log::capture(|| unsafe {
            ffi::transcribe_diarize_run(self.session.as_ptr(), samples.as_ptr(), n, &params)
        });
        if status != ffi::transcribe_status::TRANSCRIBE_OK {
            return Err(engine_error("diarizing", status, detail));
        }

        // SAFETY: valid session.
        let count = unsafe { ffi::transcribe_diarize_n_segments(self.session.as_ptr()) };
        let mut segments = Vec::with_capacity(count.max(0) as usize);
        for i in 0..count {
            let mut row = std::mem::MaybeUninit::<ffi::transcribe_speaker_segment>::zeroed();
            // SAFETY: the init function sets the struct size; `i` is in range.
            let (row, status) = unsafe {
                ffi::transcribe_speaker_segment_init(row.as_mut_ptr());
                let mut row = row.assume_init();
                let status =
                    ffi::transcribe_diarize_get_segment(self.session.as_ptr(), i, &mut row);
                (row, status)
            };
            if status != ffi::transcribe_status::TRANSCRIBE_OK {
                return Err(engine_error(
                    "reading a speaker segment",
                    status,
                    String::new(),
                ));
            }
            if row.speaker_id <= 0 {
                continue;
            }
            segments.push(SpeakerSegment {
                start_ms: row.t0_ms.max(0) as u64,
                end_ms: row.t1_ms.max(0) as u64,
                speaker: row.speaker_id as u32,
            });
        }
        segments.sort_by_key(|s| (s.start_ms, s.speaker));
        Ok(segments)
    }
}

impl Drop for Diarizer {
    fn drop(&mut self) {
        // SAFETY: the session goes before its model; neither is used after.
        unsafe {
            ffi::transcribe_diarize_session_free(self.session.as_ptr());
            ffi::transcribe_model_free(self.model.as_ptr());
        }
    }
}

fn not_a_diarizer(path: &Path, status: String) -> Error {
    Error::Engine {
        operation: "loading the diarization model",
        status,
        detail: format!(
            "{} is not a diarization model (want a '{SORTFORMER_ARCH}' GGUF)",
            path.display()
        ),
    }
}

fn unreadable(path: &Path, reason: &str) -> Error {
    Error::ModelUnreadable {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Keeps speaker labels the same from one window to the next.
///
/// Each run numbers its speakers afresh (in order of first appearance in its
/// window), so speaker 1 of one window may be speaker 2 of the next. Windows
/// overlap: a window's local speaker takes the label of the earlier speaker
/// it shares the most overlapping speech time with (one label per speaker,
/// best overlaps first); a speaker who shares none gets a new label. Labels
/// are therefore 1, 2, 3, ... over the whole stream, and may exceed the
/// model's 4 once speakers come and go.
#[derive(Debug, Default)]
pub struct SpeakerTracker {
    /// Labelled turns of earlier windows, in stream time.
    history: Vec<SpeakerSegment>,
    next_label: u32,
}

/// How much of the past is kept to match against, beyond any window.
const TRACKER_HISTORY_MS: u64 = 120_000;

impl SpeakerTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Labels the turns of a run over a window starting at `window_start_ms`
    /// of the stream (times in `segments` are relative to the window);
    /// returns them in stream time with stream-wide labels.
    pub fn label(
        &mut self,
        window_start_ms: u64,
        segments: &[SpeakerSegment],
    ) -> Vec<SpeakerSegment> {
        let absolute: Vec<SpeakerSegment> = segments
            .iter()
            .map(|s| SpeakerSegment {
                start_ms: s.start_ms + window_start_ms,
                end_ms: s.end_ms + window_start_ms,
                speaker: s.speaker,
            })
            .collect();

        // Overlap (ms) of each local speaker with each earlier label.
        let mut pairs: Vec<(u64, u32, u32)> = Vec::new();
        for new in &absolute {
            for old in &self.history {
                let shared = new
                    .end_ms
                    .min(old.end_ms)
                    .saturating_sub(new.start_ms.max(old.start_ms));
                if shared == 0 {
                    continue;
                }
                match pairs
                    .iter_mut()
                    .find(|p| p.1 == new.speaker && p.2 == old.speaker)
                {
                    Some(p) => p.0 += shared,
                    None => pairs.push((shared, new.speaker, old.speaker)),
                }
            }
        }
        pairs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut map: Vec<(u32, u32)> = Vec::new();
        for (_, local, label) in pairs {
            if map.iter().all(|&(l, g)| l != local && g != label) {
                map.push((local, label));
            }
        }
        let mut locals: Vec<u32> = absolute.iter().map(|s| s.speaker).collect();
        locals.sort_unstable();
        locals.dedup();
        for local in locals {
            if map.iter().all(|&(l, _)| l != local) {
                self.next_label += 1;
                map.push((local, self.next_label));
            }
        }
        let labelled: Vec<SpeakerSegment> = absolute
            .into_iter()
            .map(|s| SpeakerSegment {
                speaker: map
                    .iter()
                    .find(|&&(l, _)| l == s.speaker)
                    .map_or(0, |m| m.1),
                ..s
            })
            .collect();

        // The new window's view replaces the old one where they overlap.
        let horizon = window_start_ms.saturating_sub(TRACKER_HISTORY_MS);
        self.history.retain(|s| s.end_ms > horizon);
        for s in &mut self.history {
            s.end_ms = s.end_ms.min(window_start_ms);
        }
        self.history.retain(|s| s.start_ms < s.end_ms);
        self.history.extend_from_slice(&labelled);
        labelled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start_ms: u64, end_ms: u64, speaker: u32) -> SpeakerSegment {
        SpeakerSegment {
            start_ms,
            end_ms,
            speaker,
        }
    }

    #[test]
    fn labels_follow_speakers_across_windows() {
        let mut t = SpeakerTracker::new();
        // Window at 0: A 0-2 s, B 2-4 s.
        let first = t.label(0, &[seg(0, 2000, 1), seg(2000, 4000, 2)]);
        assert_eq!(first, vec![seg(0, 2000, 1), seg(2000, 4000, 2)]);
        // Window at 2 s: B first (so local 1), then at 4-5 s and 5-6 s two
        // speakers the overlap (2-4 s) does not tie to anyone: new labels.
        // (Had A spoken in 2-4 s, the one at 4-5 s could have been matched.)
        let second = t.label(
            2000,
            &[seg(0, 2000, 1), seg(2000, 3000, 2), seg(3000, 4000, 3)],
        );
        assert_eq!(
            second,
            vec![seg(2000, 4000, 2), seg(4000, 5000, 3), seg(5000, 6000, 4)]
        );
    }

    #[test]
    fn the_best_overlap_wins_and_each_label_is_used_once() {
        let mut t = SpeakerTracker::new();
        t.label(0, &[seg(0, 3000, 1), seg(3000, 4000, 2)]);
        // Both local speakers overlap label 1; local 2 overlaps it more, so
        // it takes label 1, and local 1 then takes label 2 (its only other
        // overlap).
        let out = t.label(0, &[seg(2500, 3500, 1), seg(0, 2500, 2)]);
        assert_eq!(out, vec![seg(2500, 3500, 2), seg(0, 2500, 1)]);
    }
}
