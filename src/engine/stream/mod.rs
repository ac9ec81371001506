// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A streaming transcription on one model instance.

use std::ffi::c_void;
use std::ptr::NonNull;

use transcribe_cpp_sys as ffi;

mod resume;

use super::decoder_position::{DecoderProgress, Verdict};
use super::model::engine_error;
use super::pool::{ModelLease, ModelPool};
use super::{log, threads, Error, Model, ModelSpec};
use crate::voxtral::{
    validate_delay, AbortHandle, StreamConfig, TextUpdate, FRAME_MS, FRAME_SAMPLES,
    TOKEN_LOOKAHEAD_SAMPLES,
};

/// Decodes fall this far past a whole number of decode intervals: where a
/// frame's token has just become decodable (its look-ahead past the frame's
/// end), so no decode waits most of a frame for nothing.
const DECODE_PHASE_SAMPLES: u64 = TOKEN_LOOKAHEAD_SAMPLES - FRAME_SAMPLES;

unsafe extern "C" fn poll_abort(user_data: *mut c_void) -> bool {
    // SAFETY: `user_data` is the stream's boxed `AbortHandle`, kept alive by
    // the stream for as long as the callback is installed.
    let handle = unsafe { &*(user_data as *const AbortHandle) };
    handle.poll()
}

/// Where the stream is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamState {
    Idle,
    Active,
    Finished,
    Failed,
}

/// A streaming transcription: a session of its own on a model shared with
/// the process's other streams of it (from the pool), for as long as it
/// lives.
pub struct Stream {
    lease: ModelLease,
    /// The lease's session; it is not replaced while the stream holds the
    /// lease.
    session: NonNull<ffi::transcribe_session>,
    /// Boxed: the library's abort callback holds its address.
    abort: Box<AbortHandle>,
    threads: u32,
    config: StreamConfig,
    state: StreamState,
    /// Audio gathered until a whole decode interval is there.
    pending: Vec<f32>,
    /// Samples handed to the library since `begin`.
    fed: u64,
    /// The sample at which the library's current stream started: after the
    /// model ends a stream on its own, the stream goes on in a new one.
    library_start: u64,
    /// The latest audio fed, from sample `recent_start`, to replay into a
    /// new stream what the model did not transcribe before it ended.
    recent: Vec<f32>,
    recent_start: u64,
    progress: DecoderProgress,
    /// Text was returned before the model started a new stream, whose first
    /// word then needs the space the library trims.
    space_owed: bool,
    /// Bytes of the library's transcript already returned as text.
    consumed: usize,
    /// Do not follow the decoder through the abort polls (as with a library
    /// whose polls are not known).
    blind_to_model_end: bool,
    /// The last few consumed bytes, to notice a rewritten transcript.
    consumed_tail: Vec<u8>,
}

const TAIL_CHECK: usize = 32;

// SAFETY: the session is used only through `&mut self` (one thread at a time)
// and is owned, with its model, by the lease the stream holds.
unsafe impl Send for Stream {}

impl Stream {
    /// Takes the model from the pool (loading it if needed) and prepares a
    /// session with `n_threads` (0: a share of the CPUs, [`threads::resolve`]).
    pub fn open(spec: &ModelSpec, n_threads: u32) -> Result<Stream, Error> {
        let pool = ModelPool::global();
        let mut lease = pool.acquire(spec)?;
        let n_threads = threads::resolve(n_threads, pool.leased());
        let abort = Box::new(AbortHandle::default());
        let session = lease.session(n_threads)?.as_ptr();
        // SAFETY: the handle outlives the callback: it is cleared in Drop
        // before the session goes back to the pool.
        unsafe {
            ffi::transcribe_set_abort_callback(
                session,
                Some(poll_abort),
                &*abort as *const AbortHandle as *mut c_void,
            )
        };
        Ok(Stream {
            lease,
            session: NonNull::new(session).expect("sessions are non-null"),
            abort,
            threads: n_threads,
            config: StreamConfig::default(),
            state: StreamState::Idle,
            pending: Vec::new(),
            fed: 0,
            library_start: 0,
            recent: Vec::new(),
            recent_start: 0,
            progress: DecoderProgress::new(0),
            space_owed: false,
            consumed: 0,
            consumed_tail: Vec::new(),
            blind_to_model_end: false,
        })
    }

    /// Stops following the decoder through the library's abort polls from
    /// the next `begin`: the stream then behaves as with a library whose
    /// polls it does not know, and only the text stopping tells that the
    /// model ended a stream. For tests of that fallback.
    pub fn ignore_decoder_polls(&mut self) {
        self.blind_to_model_end = true;
    }

    fn session(&self) -> *mut ffi::transcribe_session {
        self.session.as_ptr()
    }

    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle::clone(&self.abort)
    }

    pub fn config(&self) -> StreamConfig {
        self.config
    }

    pub fn state(&self) -> StreamState {
        self.state
    }

    /// Samples accepted since `begin` (fed to the model or waiting for the
    /// next decode).
    pub fn samples_received(&self) -> u64 {
        self.fed + self.pending.len() as u64
    }

    /// The loaded model this stream runs on.
    pub fn model(&self) -> &Model {
        self.lease.model()
    }

    /// The streams open on this stream's model in this process, this one
    /// included.
    pub fn model_streams(&self) -> u32 {
        self.lease.batcher().streams() as u32
    }

    /// How the feeds of this stream's model were run together so far, over
    /// all its streams.
    pub fn decoded_together(&self) -> super::BatchCounts {
        self.lease.batcher().counts()
    }

    /// The CPU threads the stream's session computes with.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// The name of the backend the model runs on.
    pub fn backend_name(&self) -> &str {
        self.lease.model().backend_name()
    }

    /// Starts a new stream. Any previous stream is dropped unfinished.
    pub fn begin(&mut self, config: StreamConfig) -> Result<(), Error> {
        validate_delay(config.delay_ms)?;
        self.clear_stream_state();
        self.begin_library_stream(config)?;
        self.config = config;
        self.state = StreamState::Active;
        Ok(())
    }

    /// Whether the stream notices at once when the model ends it on its own
    /// (see `decoder_position.rs`); if not, only the text stopping tells.
    pub fn sees_model_end(&self) -> bool {
        self.progress.can_see_the_end()
    }

    fn begin_library_stream(&mut self, config: StreamConfig) -> Result<(), Error> {
        let mut ext =
            std::mem::MaybeUninit::<ffi::transcribe_voxtral_realtime_stream_ext>::zeroed();
        let mut params = std::mem::MaybeUninit::<ffi::transcribe_stream_params>::zeroed();
        // SAFETY: the init functions fill the whole structs.
        let (mut ext, mut params) = unsafe {
            ffi::transcribe_voxtral_realtime_stream_ext_init(ext.as_mut_ptr());
            ffi::transcribe_stream_params_init(params.as_mut_ptr());
            (ext.assume_init(), params.assume_init())
        };
        ext.num_delay_tokens = (config.delay_ms / FRAME_MS) as i32;
        // The stream gathers whole decode intervals itself, so the library
        // decodes on every call; that way the audio position of each decode
        // is known exactly, whatever the buffer sizes upstream.
        ext.min_decode_interval_ms = 0;
        params.family = &ext.ext;
        let session = self.session();
        self.progress = DecoderProgress::new(u64::from(config.delay_ms / FRAME_MS));
        if !self.model().has_80_ms_frames() || self.blind_to_model_end {
            self.progress.ignore_polls();
        }
        self.consumed = 0;
        self.consumed_tail.clear();
        // SAFETY: valid session; params and ext live across the call and are
        // copied by the library before it returns.
        let (status, detail) = log::capture(|| unsafe {
            ffi::transcribe_stream_reset(session);
            ffi::transcribe_stream_begin(session, std::ptr::null(), &params)
        });
        if status != ffi::transcribe_status::TRANSCRIBE_OK {
            self.state = StreamState::Failed;
            return Err(engine_error("starting the stream", status, detail));
        }
        Ok(())
    }

    /// Adds audio (f32, 16 kHz, mono, finite). Returns one update per decode
    /// this audio completed; audio short of a decode interval is kept for the
    /// next call.
    pub fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        self.expect_active()?;
        let mut updates = Vec::new();
        let mut rest = samples;
        while !rest.is_empty() {
            // (A shorter interval just set may find a decode overdue.)
            let due = self
                .next_decode_at()
                .saturating_sub(self.samples_received());
            let take = (due as usize).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if take as u64 == due {
                let chunk = std::mem::take(&mut self.pending);
                updates.push(self.decode(&chunk)?);
                self.pending = chunk;
                self.pending.clear();
            }
        }
        Ok(updates)
    }

    /// Decodes every `ms` of audio from the next decode on (the element
    /// stretches the interval while the model falls behind).
    pub fn set_decode_interval(&mut self, ms: u32) {
        self.config.decode_interval_ms = ms.max(1);
    }

    /// Where the next decode falls, in samples since `begin`: on the grid of
    /// decode intervals, shifted by the phase at which tokens are ready.
    fn next_decode_at(&self) -> u64 {
        let interval = self.config.interval_samples() as u64;
        let decodes_done = self.fed.saturating_sub(DECODE_PHASE_SAMPLES) / interval;
        DECODE_PHASE_SAMPLES + (decodes_done + 1) * interval
    }

    /// The end of the last frame whose token the model can have decoded in
    /// the library's current stream.
    fn heard_until(&self) -> u64 {
        self.library_start + self.progress.tokens_due() * FRAME_SAMPLES
    }

    /// Ends the stream: decodes what is pending and the model's look-ahead,
    /// and returns the rest of the transcript.
    pub fn finalize(&mut self) -> Result<TextUpdate, Error> {
        self.expect_active()?;
        let mut text = String::new();
        let mut resumed_from = Vec::new();
        if !self.pending.is_empty() {
            let chunk = std::mem::take(&mut self.pending);
            (text, resumed_from) = self.feed_new_audio(&chunk)?;
        }
        loop {
            let verdict = self.finalize_library()?;
            text.push_str(&self.take_text(true));
            // A stream taken up anew needs finishing too.
            let new_streams = self.take_up_where_the_model_ended(verdict, &mut text)?;
            if new_streams.is_empty() {
                break;
            }
            resumed_from.extend(new_streams);
        }
        self.state = StreamState::Finished;
        Ok(TextUpdate {
            text,
            audio_end: self.fed,
            heard_until: self.fed,
            is_final: true,
            resumed_from,
        })
    }

    /// Drops the current stream, if any, and clears the abort flag.
    pub fn reset(&mut self) {
        let session = self.session();
        // SAFETY: valid session, not used by another thread.
        unsafe { ffi::transcribe_stream_reset(session) };
        self.clear_stream_state();
        self.abort.clear();
        self.state = StreamState::Idle;
    }

    fn clear_stream_state(&mut self) {
        self.pending.clear();
        self.fed = 0;
        self.library_start = 0;
        self.recent.clear();
        self.recent_start = 0;
        self.space_owed = false;
        self.consumed = 0;
        self.consumed_tail.clear();
    }

    fn expect_active(&self) -> Result<(), Error> {
        if self.abort.is_aborted() {
            return Err(Error::Aborted);
        }
        match self.state {
            StreamState::Active => Ok(()),
            other => Err(Error::Engine {
                operation: "feeding the stream",
                status: format!("the stream is {other:?}, not active"),
                detail: String::new(),
            }),
        }
    }

    fn decode(&mut self, chunk: &[f32]) -> Result<TextUpdate, Error> {
        let (text, resumed_from) = self.feed_new_audio(chunk)?;
        Ok(TextUpdate {
            text,
            audio_end: self.fed,
            heard_until: self.heard_until(),
            is_final: false,
            resumed_from,
        })
    }

    /// Feeds audio the stream has not seen, and goes on in a new library
    /// stream if the model ends this one. Returns the new text and where a
    /// new stream started, if one did.
    fn feed_new_audio(&mut self, chunk: &[f32]) -> Result<(String, Vec<u64>), Error> {
        self.remember(chunk);
        self.fed += chunk.len() as u64;
        let verdict = self.feed_library(chunk)?;
        let mut text = self.take_text(false);
        let resumed_from = self.take_up_where_the_model_ended(verdict, &mut text)?;
        Ok((text, resumed_from))
    }

    fn feed_library(&mut self, chunk: &[f32]) -> Result<Verdict, Error> {
        debug_assert!(chunk.iter().all(|v| v.is_finite()));
        let polls_before = self.abort.polls();
        let (status, detail) = if decode_alone() {
            self.feed_alone(chunk)
        } else {
            self.feed_with_the_models_streams(chunk)
        };
        self.check("decoding audio", status, detail)?;
        let polls = self.abort.polls() - polls_before;
        Ok(self.judge(polls, |progress| {
            progress.after_feed(chunk.len() as u64, polls)
        }))
    }

    /// One feed, decoded on this thread alone.
    fn feed_alone(&mut self, chunk: &[f32]) -> (ffi::transcribe_status, String) {
        let session = self.session();
        let mut update = new_update();
        // SAFETY: valid session; `chunk` is alive and non-empty.
        log::capture(|| unsafe {
            ffi::transcribe_stream_feed(session, chunk.as_ptr(), chunk.len() as i32, &mut update)
        })
    }

    /// One feed, run with the feeds of the model's other streams that are
    /// waiting meanwhile ([`super::batch`]).
    fn feed_with_the_models_streams(&mut self, chunk: &[f32]) -> (ffi::transcribe_status, String) {
        self.lease.batcher().feed(self.session(), chunk)
    }

    fn finalize_library(&mut self) -> Result<Verdict, Error> {
        let session = self.session();
        let mut update = new_update();
        let polls_before = self.abort.polls();
        if !decode_alone() {
            self.finish_with_the_models_streams()?;
        }
        // SAFETY: valid session with an active stream.
        let (status, detail) =
            log::capture(|| unsafe { ffi::transcribe_stream_finalize(session, &mut update) });
        self.check("finishing the stream", status, detail)?;
        let polls = self.abort.polls() - polls_before;
        Ok(self.judge(polls, |progress| progress.after_finalize(polls)))
    }

    /// The end of the stream's audio and its last steps, run with the
    /// model's other streams that end or feed meanwhile ([`super::batch`]):
    /// the finalize after it only gives the final text. A library that
    /// cannot leaves it all to the finalize.
    fn finish_with_the_models_streams(&mut self) -> Result<(), Error> {
        let (status, detail) = self.lease.batcher().finish(self.session());
        if status == ffi::transcribe_status::TRANSCRIBE_ERR_NOT_IMPLEMENTED {
            return Ok(());
        }
        self.check("finishing the stream", status, detail)
    }

    fn judge(
        &mut self,
        polls: u64,
        judge: impl FnOnce(&mut DecoderProgress) -> Verdict,
    ) -> Verdict {
        let could_see = self.progress.can_see_the_end();
        let verdict = judge(&mut self.progress);
        if could_see && verdict == Verdict::Blind {
            warn_blind_once(polls);
        }
        verdict
    }

    /// The stream's new text, with the space between streams that the
    /// library trims.
    fn take_text(&mut self, last: bool) -> String {
        let text = self.take_new_text(last);
        if !self.space_owed || text.is_empty() {
            return text;
        }
        self.space_owed = false;
        if text.starts_with(char::is_whitespace) {
            text
        } else {
            format!(" {text}")
        }
    }

    fn check(
        &mut self,
        operation: &'static str,
        status: ffi::transcribe_status,
        detail: String,
    ) -> Result<(), Error> {
        if status == ffi::transcribe_status::TRANSCRIBE_OK {
            return Ok(());
        }
        self.state = StreamState::Failed;
        Err(engine_error(operation, status, detail))
    }

    /// The transcript's bytes beyond what was returned before. A partial
    /// UTF-8 character at the end waits for the next decode, unless `last`.
    fn take_new_text(&mut self, last: bool) -> String {
        let session = self.session();
        let mut text = std::mem::MaybeUninit::<ffi::transcribe_stream_text>::zeroed();
        // SAFETY: the init function fills the struct; get_text fills the
        // pointers with session-owned storage valid until the next call.
        let full: &[u8] = unsafe {
            ffi::transcribe_stream_text_init(text.as_mut_ptr());
            let mut text = text.assume_init();
            if ffi::transcribe_stream_get_text(session, &mut text)
                != ffi::transcribe_status::TRANSCRIBE_OK
                || text.full_text.is_null()
            {
                return String::new();
            }
            std::slice::from_raw_parts(text.full_text as *const u8, text.full_text_bytes as usize)
        };
        if full.len() < self.consumed || !full[..self.consumed].ends_with(&self.consumed_tail) {
            gst::warning!(
                log::CAT,
                "the model rewrote text it had published; continuing after byte {}",
                self.consumed
            );
        }
        let new = full.get(self.consumed..).unwrap_or_default();
        let (text, used) = decode_utf8_prefix(new, last);
        self.consumed += used;
        let tail_from = self.consumed.saturating_sub(TAIL_CHECK);
        self.consumed_tail = full[tail_from..self.consumed.min(full.len())].to_vec();
        text
    }
}

/// `VOXTRALRT_DECODE_ALONE=1`: every stream decodes its steps on its own
/// thread, as before streams of one model decoded together (for side-by-side
/// measurements; docs/scale.md).
fn decode_alone() -> bool {
    static ALONE: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::env::var("VOXTRALRT_DECODE_ALONE").is_ok_and(|v| !v.is_empty() && v != "0")
    });
    *ALONE
}

fn warn_blind_once(polls: u64) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| {
        gst::warning!(
            log::CAT,
            "this transcribe.cpp polls its abort callback unlike 0.4.1 ({polls} polls in one \
             feed): the end of a stream by the model is noticed only when its text stops"
        );
    });
}

impl Drop for Stream {
    fn drop(&mut self) {
        let session = self.session();
        // SAFETY: valid session; uninstall the callback before the flag it
        // points at is freed, and leave the session clean for its next user.
        unsafe {
            ffi::transcribe_stream_reset(session);
            ffi::transcribe_set_abort_callback(session, None, std::ptr::null_mut());
        }
    }
}

fn new_update() -> ffi::transcribe_stream_update {
    let mut update = std::mem::MaybeUninit::<ffi::transcribe_stream_update>::zeroed();
    // SAFETY: the init function fills the whole struct.
    unsafe {
        ffi::transcribe_stream_update_init(update.as_mut_ptr());
        update.assume_init()
    }
}

/// Decodes the longest prefix of `bytes` that is complete UTF-8, replacing
/// invalid sequences; an incomplete character at the end is left unless
/// `last`. Returns the text and the number of bytes used.
pub(crate) fn decode_utf8_prefix(bytes: &[u8], last: bool) -> (String, usize) {
    let mut out = String::new();
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                return (out, bytes.len());
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).expect("checked valid"));
                match e.error_len() {
                    Some(n) => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[n..];
                    }
                    None if last => {
                        out.push(char::REPLACEMENT_CHARACTER);
                        return (out, bytes.len());
                    }
                    None => return (out, bytes.len() - after.len()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_split_character_waits_for_its_last_byte() {
        let bytes = "naïve".as_bytes();
        let (text, used) = decode_utf8_prefix(&bytes[..3], false);
        assert_eq!((text.as_str(), used), ("na", 2));
        let (text, used) = decode_utf8_prefix(&bytes[2..], false);
        assert_eq!((text.as_str(), used), ("ïve", 4));
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let (text, used) = decode_utf8_prefix(b"a\xffb", false);
        assert_eq!((text.as_str(), used), ("a\u{fffd}b", 3));
        let (text, used) = decode_utf8_prefix(b"a\xc3", true);
        assert_eq!((text.as_str(), used), ("a\u{fffd}", 2));
    }
}
