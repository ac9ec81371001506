// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One request pad's participant: a model stream of its own (its own core
//! and gate: a quiet participant costs no model steps), whose words the
//! merge puts in time order with the others'.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use gst::prelude::*;

use crate::core::lifecycle::{stop_core, Lifecycle};
use crate::core::merge::Merge;
use crate::core::{check_speaker_event, Core, Stats};
use crate::settings::{Settings, SettingsCell};

use super::SpeakerPad;

/// How long a released pad's last words are waited for.
const LEAVING_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Participant {
    pub pad: SpeakerPad,
    life: Mutex<Lifecycle>,
    /// Its input of the merge, while its core runs.
    merge_input: Mutex<Option<usize>>,
}

impl Participant {
    /// A participant on `pad` (not yet added to the element).
    pub fn new(pad: SpeakerPad, wrapper: Option<crate::recognizer::Wrapper>) -> Arc<Self> {
        let mut life = Lifecycle::default();
        life.set_wrapper(wrapper);
        let participant = Arc::new(Participant {
            pad,
            life: Mutex::new(life),
            merge_input: Mutex::new(None),
        });
        let weak = Arc::downgrade(&participant);
        participant
            .pad
            .connect_notify(Some("speaker"), move |_, _| {
                if let Some(p) = weak.upgrade() {
                    p.announce_speaker();
                }
            });
        participant
    }

    fn core(&self) -> Option<Arc<Core>> {
        self.life.lock().unwrap().core()
    }

    /// Tells the core who speaks from here on (its pad's `speaker`).
    fn announce_speaker(&self) {
        if let Some(core) = self.core() {
            self.pad.announce_to(&core);
        }
    }

    pub fn chain(&self, buffer: gst::Buffer) -> Result<gst::FlowSuccess, gst::FlowError> {
        let (core, audio) = {
            let mut life = self.life.lock().unwrap();
            let core = life.core().ok_or(gst::FlowError::Flushing)?;
            let audio = life
                .input
                .take_buffer(self.pad.upcast_ref(), &buffer, &core)?;
            (core, audio)
        };
        core.push_audio(audio)
    }

    /// An event on the pad. Flushes and stream events stay with this
    /// participant: the merge makes the output's.
    pub fn event(&self, element: &gst::Element, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::Caps(e) => {
                let result = self.life.lock().unwrap().input.set_caps(e.caps());
                if let Err(msg) = result {
                    gst::element_error!(element, gst::StreamError::Format, ("{}", msg));
                    return false;
                }
                true
            }
            gst::EventView::FlushStart(_) => {
                if let Some(core) = self.core() {
                    core.flush_start();
                }
                true
            }
            gst::EventView::FlushStop(_) => {
                self.life.lock().unwrap().input.clear();
                if let Some(core) = self.core() {
                    core.flush_stop();
                }
                true
            }
            _ if event.is_serialized() => match self.core() {
                Some(core) => core
                    .push_event(check_speaker_event(event, self.pad.upcast_ref()))
                    .is_ok(),
                None => false,
            },
            _ => true,
        }
    }

    /// NULL->READY, or on request while the element is READY or above.
    pub fn load(
        &self,
        element: &gst::Element,
        settings: &SettingsCell,
    ) -> Result<(), gst::StateChangeError> {
        self.life.lock().unwrap().load(element, settings)
    }

    /// READY->PAUSED, or on request while the element runs.
    pub fn start(
        &self,
        element: &gst::Element,
        settings: &Settings,
        merge: &Arc<Merge>,
    ) -> Result<(), gst::ErrorMessage> {
        let input = merge.input(self.pad.upcast_ref());
        *self.merge_input.lock().unwrap() = Some(input.id());
        self.life
            .lock()
            .unwrap()
            .start(element, settings, Box::new(input))?;
        self.announce_speaker();
        Ok(())
    }

    pub fn resume(&self) {
        if let Some(core) = self.core() {
            core.resume();
        }
    }

    /// PAUSED->READY.
    pub fn stop(&self, merge: Option<&Arc<Merge>>) {
        let core = self.life.lock().unwrap().take_core();
        if let (Some(id), Some(merge)) = (self.merge_input.lock().unwrap().take(), merge) {
            merge.remove(id);
        }
        if let Some(core) = core {
            let stopped = stop_core(core);
            self.life.lock().unwrap().stopped(stopped);
        }
    }

    /// The pad is released while running: its stream finishes (its last
    /// words come out), then it stops; the others go on.
    pub fn leave(&self, merge: &Arc<Merge>) {
        let id = *self.merge_input.lock().unwrap();
        if let (Some(id), Some(core)) = (id, self.core()) {
            merge.finish_leaving(
                id,
                || {
                    let _ = core.push_event(gst::event::Eos::new());
                },
                LEAVING_TIMEOUT,
            );
        }
        self.merge_input.lock().unwrap().take();
        self.stop(None);
    }

    /// READY->NULL.
    pub fn unload(&self) {
        self.life.lock().unwrap().unload();
    }

    pub fn stats(&self) -> Stats {
        self.life.lock().unwrap().stats()
    }
}
