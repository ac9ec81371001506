// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A session of a loaded model: one stream's state.

use std::ptr::NonNull;
use std::sync::Arc;

use transcribe_cpp_sys as ffi;

use super::log;
use super::model::engine_error;
use super::pool::SharedModel;
use super::Error;

/// A session: the per-stream state of one model (KV caches, buffers). It
/// holds its model, which the library frees only after its sessions.
pub(crate) struct Session {
    ptr: NonNull<ffi::transcribe_session>,
    n_threads: u32,
    /// Kept for its drop, which comes after the session's.
    _model: Arc<SharedModel>,
}

// SAFETY: a session is used by one thread at a time; ownership moves between
// threads only with the `Stream` that holds it exclusively.
unsafe impl Send for Session {}

impl Session {
    pub(crate) fn new(shared: &Arc<SharedModel>, n_threads: u32) -> Result<Session, Error> {
        let mut params = std::mem::MaybeUninit::<ffi::transcribe_session_params>::zeroed();
        // SAFETY: the init function fills the whole struct.
        let mut params = unsafe {
            ffi::transcribe_session_params_init(params.as_mut_ptr());
            params.assume_init()
        };
        params.n_threads = n_threads as i32;
        let mut out: *mut ffi::transcribe_session = std::ptr::null_mut();
        // SAFETY: valid model, initialised params and an out pointer.
        let (status, detail) = log::capture(|| unsafe {
            ffi::transcribe_session_init(shared.model.as_ptr(), &params, &mut out)
        });
        match NonNull::new(out) {
            Some(ptr) if status == ffi::transcribe_status::TRANSCRIBE_OK => Ok(Session {
                ptr,
                n_threads,
                _model: shared.clone(),
            }),
            _ => Err(engine_error("creating a session", status, detail)),
        }
    }

    pub(crate) fn as_ptr(&self) -> *mut ffi::transcribe_session {
        self.ptr.as_ptr()
    }

    pub(crate) fn n_threads(&self) -> u32 {
        self.n_threads
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: the session is not used after this; `_model` keeps its model
        // alive until after it.
        unsafe { ffi::transcribe_session_free(self.ptr.as_ptr()) };
    }
}
