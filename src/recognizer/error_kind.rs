// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

/// The kind of a failure, for the GStreamer error domain it is posted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The engine itself failed.
    Library,
    /// A model or server that was named is not there.
    NotFound,
    /// A server refused the credentials.
    NotAuthorized,
    /// A server could not be reached, or went away for too long.
    Unreachable,
    /// A setting cannot work (a missing backend, a refused key, ...).
    Settings,
    /// The data sent or received was refused.
    Stream,
}
