// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The bridge from transcribe.cpp's process-wide log sink into GStreamer's
//! debug system, so `GST_DEBUG=voxtralrt-engine:6` shows the engine's lines.
//!
//! The library reports the reason of a failure only through its log (its
//! status codes just name the kind of failure), so the bridge also keeps the
//! warnings and errors emitted on the current thread while an engine call is
//! in progress; [`capture`] returns them for the error text.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{LazyLock, Once};

use transcribe_cpp_sys as ffi;

/// The engines' category (in [`crate::voxtral`]), which the bridge writes
/// the library's lines to.
pub(crate) use crate::voxtral::LOG_CAT as CAT;

thread_local! {
    /// `Some` while [`capture`] runs on this thread.
    static CAPTURED: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
    /// Level of the last message, so continuation fragments keep it.
    static LAST_LEVEL: RefCell<gst::DebugLevel> = const { RefCell::new(gst::DebugLevel::Info) };
}

/// Installs the bridge. The library allows one sink per process, so this is
/// done once, before the first model is loaded.
pub(crate) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        LazyLock::force(&CAT);
        // SAFETY: `on_log` is a plain function valid for the whole process and
        // ignores its user data.
        unsafe { ffi::transcribe_log_set(Some(on_log), std::ptr::null_mut()) };
    });
}

/// Runs `f`, returning its result and the warning and error lines the library
/// logged on this thread meanwhile, joined into one string.
pub(crate) fn capture<T>(f: impl FnOnce() -> T) -> (T, String) {
    CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let result = f();
    let lines = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
    (result, lines.join("; "))
}

fn gst_level(level: ffi::transcribe_log_level) -> Option<gst::DebugLevel> {
    Some(match level {
        ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_ERROR => gst::DebugLevel::Error,
        ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_WARN => gst::DebugLevel::Warning,
        ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_INFO => gst::DebugLevel::Info,
        ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_DEBUG => gst::DebugLevel::Debug,
        ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_CONT => LAST_LEVEL.with(|l| *l.borrow()),
        _ => return None,
    })
}

fn remember(level: gst::DebugLevel, continuation: bool, text: &str) {
    if level > gst::DebugLevel::Warning {
        return;
    }
    CAPTURED.with(|c| {
        if let Some(lines) = c.borrow_mut().as_mut() {
            match lines.last_mut() {
                Some(last) if continuation => last.push_str(text),
                _ => lines.push(text.to_owned()),
            }
        }
    });
}

unsafe extern "C" fn on_log(level: ffi::transcribe_log_level, msg: *const c_char, _: *mut c_void) {
    if msg.is_null() {
        return;
    }
    let Some(gst_level) = gst_level(level) else {
        return;
    };
    // SAFETY: the library passes a NUL-terminated string valid for this call.
    let raw = unsafe { CStr::from_ptr(msg) }.to_string_lossy();
    let text = raw.trim_end();
    let continuation = level == ffi::transcribe_log_level::TRANSCRIBE_LOG_LEVEL_CONT;
    LAST_LEVEL.with(|l| *l.borrow_mut() = gst_level);
    remember(gst_level, continuation, text);
    if !text.is_empty() {
        gst::log_with_level!(CAT, gst_level, "{}", text);
    }
}
