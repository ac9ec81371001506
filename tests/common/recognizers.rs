// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Recognizers made for tests, plugged into an element through the seam
//! (`gstvoxtralrt::set_recognizer_wrapper`): the real engine, made slow or
//! faulty, or one that stops writing.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gstvoxtralrt::recognizer::{
    AbortHandle, Error, Notice, Recognizer, StreamConfig, TextUpdate, Wrapper,
};

/// Wraps what `element` runs its model on from its next start.
pub fn wrap(
    element: &gst::Element,
    wrapper: impl Fn(Box<dyn Recognizer>) -> Box<dyn Recognizer> + Send + Sync + 'static,
) {
    let wrapper: Wrapper = Arc::new(wrapper);
    assert!(gstvoxtralrt::set_recognizer_wrapper(element, wrapper));
}

/// Forwards to the recognizer inside all but feed, finalize and reset.
macro_rules! forward_common {
    () => {
        fn backend_name(&self) -> String {
            self.inner.backend_name()
        }
        fn abort_handle(&self) -> AbortHandle {
            self.inner.abort_handle()
        }
        fn threads(&self) -> u32 {
            self.inner.threads()
        }
        fn prepare(&mut self) -> Result<(), Error> {
            self.inner.prepare()
        }
        fn begin(&mut self, config: StreamConfig) -> Result<(), Error> {
            self.inner.begin(config)
        }
        fn set_decode_interval(&mut self, ms: u32) {
            self.inner.set_decode_interval(ms)
        }
        fn samples_received(&self) -> u64 {
            self.inner.samples_received()
        }
        fn sees_model_end(&self) -> bool {
            self.inner.sees_model_end()
        }
        fn slowness_advice(&self) -> String {
            self.inner.slowness_advice()
        }
        fn take_notices(&mut self) -> Vec<Notice> {
            self.inner.take_notices()
        }
    };
}

/// Forwards everything but feed; the wrappers below change one thing each.
macro_rules! forward_rest {
    () => {
        forward_common!();
        fn finalize(&mut self) -> Result<Vec<TextUpdate>, Error> {
            self.inner.finalize()
        }
        fn reset(&mut self) {
            self.inner.reset()
        }
    };
}

/// A model `factor` times slower than real time: each feed takes that
/// many times its audio's duration.
pub struct Slow {
    pub inner: Box<dyn Recognizer>,
    pub factor: f64,
}

impl Recognizer for Slow {
    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        let started = Instant::now();
        let result = self.inner.feed(samples);
        let audio = Duration::from_secs_f64(samples.len() as f64 / 16_000.0);
        std::thread::sleep(audio.mul_f64(self.factor).saturating_sub(started.elapsed()));
        result
    }
    forward_rest!();
}

/// A model with a fixed cost per decode, as transcribe.cpp's encoder pays
/// on a CPU: each decode takes `per_decode`, on top of `factor` times the
/// audio fed. A longer decode interval makes it faster.
pub struct CostPerDecode {
    pub inner: Box<dyn Recognizer>,
    pub per_decode: Duration,
    pub factor: f64,
}

impl Recognizer for CostPerDecode {
    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        let started = Instant::now();
        let result = self.inner.feed(samples);
        let decodes = result.as_ref().map_or(0, Vec::len) as u32;
        let audio = Duration::from_secs_f64(samples.len() as f64 / 16_000.0);
        let cost = audio.mul_f64(self.factor) + self.per_decode * decodes;
        std::thread::sleep(cost.saturating_sub(started.elapsed()));
        result
    }
    forward_rest!();
}

/// The text of the fault [`FaultAfter`] reports.
pub const INJECTED_FAULT: &str = "fault injected by the test recognizer";

/// A model that fails for good once `after` samples were fed in all.
pub struct FaultAfter {
    pub inner: Box<dyn Recognizer>,
    pub after: u64,
    pub fed: u64,
}

impl Recognizer for FaultAfter {
    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        if self.fed >= self.after {
            return Err(Error::Other {
                operation: "decoding audio",
                reason: INJECTED_FAULT.into(),
            });
        }
        self.fed += samples.len() as u64;
        self.inner.feed(samples)
    }
    forward_rest!();
}

/// A model that stops writing after `after` samples until it is reset (a
/// stalled serving, vLLM issue 47614); `forever` keeps it silent after
/// resets too (a model that never speaks again).
pub struct MuteAfter {
    pub inner: Box<dyn Recognizer>,
    pub after: u64,
    pub fed: u64,
    pub forever: bool,
}

impl MuteAfter {
    pub fn new(inner: Box<dyn Recognizer>, after: u64, forever: bool) -> MuteAfter {
        MuteAfter {
            inner,
            after,
            fed: 0,
            forever,
        }
    }

    fn silence(&self, mut updates: Vec<TextUpdate>) -> Vec<TextUpdate> {
        if self.fed >= self.after {
            for u in &mut updates {
                u.text.clear();
            }
        }
        updates
    }
}

impl Recognizer for MuteAfter {
    fn feed(&mut self, samples: &[f32]) -> Result<Vec<TextUpdate>, Error> {
        self.fed += samples.len() as u64;
        let updates = self.inner.feed(samples)?;
        Ok(self.silence(updates))
    }
    fn finalize(&mut self) -> Result<Vec<TextUpdate>, Error> {
        let updates = self.inner.finalize()?;
        Ok(self.silence(updates))
    }
    fn reset(&mut self) {
        // The restart that ends the stall (the worker also resets before
        // every new stream, the first included).
        if !self.forever && self.fed >= self.after {
            self.after = u64::MAX;
        }
        self.inner.reset()
    }
    forward_common!();
}
