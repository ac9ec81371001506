// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Reporting to the element: ERROR and WARNING messages (a GStreamer error
//! domain per cause), element messages, and the element's running time.
//! Both elements report through this, from the worker thread.

use gst::glib;
use gst::prelude::*;

use crate::recognizer::{self, Kind, Notice};
use crate::voxtral::samples_to_ns;

/// Why a WARNING is posted; each cause has its GStreamer error domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The model is slower than real time (a lag, a skip).
    Overload,
    /// A remote engine's connection was lost and made again.
    Connection,
    /// A setting that cannot do what was asked (the latency, say).
    Settings,
    /// Captions could not carry everything (characters, words).
    Captions,
    /// The model wrote nothing while people talked.
    Stall,
    /// Words came after later ones went out and were re-timed.
    Order,
    /// No caption left while people talked (`caption-alarm`).
    Alarm,
}

/// Posts on behalf of one element, for as long as it lives.
#[derive(Debug, Clone)]
pub struct Reporter {
    element: glib::WeakRef<gst::Element>,
}

impl Reporter {
    pub fn new(element: &gst::Element) -> Reporter {
        Reporter {
            element: element.downgrade(),
        }
    }

    fn element(&self) -> Option<gst::Element> {
        self.element.upgrade()
    }

    /// The recognizer failed: an ERROR in the domain of its kind.
    pub fn error(&self, error: &recognizer::Error) {
        if let Some(element) = self.element() {
            element.post_error_message(error_message(error));
        }
    }

    pub fn warning(&self, cause: Cause, text: &str) {
        let Some(element) = self.element() else {
            return;
        };
        match cause {
            Cause::Overload => {
                gst::element_warning!(element, gst::ResourceError::Busy, ("{}", text))
            }
            Cause::Connection => {
                gst::element_warning!(element, gst::ResourceError::Read, ("{}", text))
            }
            Cause::Settings => {
                gst::element_warning!(element, gst::LibraryError::Settings, ("{}", text))
            }
            Cause::Captions => {
                gst::element_warning!(element, gst::StreamError::Encode, ("{}", text))
            }
            Cause::Stall => {
                gst::element_warning!(element, gst::StreamError::Decode, ("{}", text))
            }
            Cause::Order => {
                gst::element_warning!(element, gst::CoreError::Clock, ("{}", text))
            }
            Cause::Alarm => {
                gst::element_warning!(element, gst::StreamError::Failed, ("{}", text))
            }
        }
    }

    /// An INFO message: a problem that was reported is over.
    pub fn info(&self, text: &str) {
        if let Some(element) = self.element() {
            gst::element_info!(element, gst::StreamError::Failed, ("{}", text));
        }
    }

    /// An element message an application may act on.
    pub fn message(&self, structure: gst::Structure) {
        if let Some(element) = self.element() {
            let _ = element.post_message(
                gst::message::Element::builder(structure)
                    .src(&element)
                    .build(),
            );
        }
    }

    /// The element's running time now, if it has a clock.
    pub fn running_time(&self) -> Option<gst::ClockTime> {
        self.element()?.current_running_time()
    }
}

/// `error` as an ERROR message, in the domain of its kind.
pub fn error_message(error: &recognizer::Error) -> gst::ErrorMessage {
    match error.kind() {
        Kind::Library => gst::error_msg!(gst::LibraryError::Failed, ("{}", error)),
        Kind::Stream => gst::error_msg!(gst::StreamError::Failed, ("{}", error)),
        Kind::NotFound => gst::error_msg!(gst::ResourceError::NotFound, ("{}", error)),
        Kind::NotAuthorized => gst::error_msg!(gst::ResourceError::NotAuthorized, ("{}", error)),
        Kind::Unreachable => gst::error_msg!(gst::ResourceError::OpenReadWrite, ("{}", error)),
        Kind::Settings => gst::error_msg!(gst::ResourceError::Settings, ("{}", error)),
    }
}

/// Reports what a recognizer noticed besides text, and counts it.
pub(super) fn notice(report: &Reporter, stats: &super::stats::SharedStats, notice: Notice) {
    match notice {
        Notice::Reconnected {
            cause,
            outage,
            resent_samples,
            left,
            joined,
        } => {
            stats.update(|s| {
                s.reconnects += 1;
                s.failovers += u64::from(left != joined);
                s.resent_samples += resent_samples;
                s.server_connected = true;
            });
            let resent = samples_to_ns(resent_samples);
            let whereto = if left == joined {
                String::new()
            } else {
                format!(" to {joined}")
            };
            report.warning(
                Cause::Connection,
                &format!(
                    "lost the connection to the server {left} ({cause}); reconnected{whereto} \
                     after {} ms and sent the {} ms of audio it had not answered for again",
                    outage.as_millis(),
                    resent / 1_000_000
                ),
            );
            report.message(
                gst::Structure::builder("voxtralrt-reconnected")
                    .field("outage", outage.as_nanos() as u64)
                    .field("audio-resent", resent)
                    .field("cause", cause)
                    .field("left", left)
                    .field("joined", joined)
                    .build(),
            );
        }
        Notice::ServerJoined { url } => stats.update(|s| {
            s.server_mut(&url).connections += 1;
            s.server = url;
            s.server_connected = true;
        }),
        Notice::ServerFailed { url, reason, warn } => {
            stats.update(|s| {
                s.server_mut(&url).failures += 1;
                s.server_connected = false;
            });
            if warn {
                report.warning(
                    Cause::Connection,
                    &format!(
                        "the vLLM server at {url} cannot be used ({reason}); going on with the \
                         other servers in url, and trying it again later"
                    ),
                );
            }
        }
        Notice::IgnoredFrames(n) => stats.update(|s| s.ignored_frames += n),
    }
}
