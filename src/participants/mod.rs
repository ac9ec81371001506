// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The request pads (`sink_%u`) of both elements: one participant per
//! speaker, each with a model stream of its own, their words put in time
//! order by the merge and handed to the element's one output.
//!
//! The element's own `sink` pad keeps its direct path when it is linked and
//! no participant exists at start; otherwise its core is one more input of
//! the merge (so that participants may join while it runs). Unlinked beside
//! participants it carries no audio: it loads no model and has no core.
//!
//! A pad loads its model at READY only if it is linked then (a pad that
//! carries no audio costs no model: on a GPU each load is a copy); the
//! element's sink pad also when it has no request pads, so that a model's
//! trouble shows at READY. A request pad that comes or is linked later
//! loads at start, or at once while the element runs.

mod pad;
mod participant;

use std::sync::{Arc, Mutex, OnceLock, Weak};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use crate::core::lifecycle::Lifecycle;
use crate::core::merge::Merge;
use crate::core::report::Reporter;
use crate::core::stats::field;
use crate::core::Output;
use crate::recognizer::Wrapper;
use crate::settings::{Settings, SettingsCell};

pub use pad::SpeakerPad;
use participant::Participant;

#[derive(Default)]
pub struct Participants {
    /// In the order they came.
    list: Mutex<Vec<Arc<Participant>>>,
    /// Puts every input's words in time order, while running.
    merge: Mutex<Option<Arc<Merge>>>,
    /// Set by tests: what each recognizer is wrapped in.
    wrapper: Mutex<Option<Wrapper>>,
}

impl Participants {
    pub fn set_wrapper(&self, wrapper: Option<Wrapper>) {
        *self.wrapper.lock().unwrap() = wrapper;
    }

    fn list(&self) -> Vec<Arc<Participant>> {
        self.list.lock().unwrap().clone()
    }

    pub fn is_empty(&self) -> bool {
        self.list.lock().unwrap().is_empty()
    }

    /// The request pads, in the order they came.
    pub fn pads(&self) -> Vec<gst::Pad> {
        self.list().iter().map(|p| p.pad.clone().upcast()).collect()
    }

    /// Whether the element's own sink pad carries the audio: it is linked,
    /// or there is no request pad to.
    pub fn sink_pad_carries_audio(&self, sinkpad: &gst::Pad) -> bool {
        sinkpad.is_linked() || self.is_empty()
    }

    /// At start: what the element's own sink pad's core delivers to (none:
    /// the pad carries no audio, and has no core). The pad alone (linked,
    /// no participant) delivers to `out` itself; otherwise a merge is made,
    /// with that core as one of its inputs. With live input, an input whose
    /// data has not come holds the others back for at most `latency` (the
    /// element's own) plus upstream's.
    pub fn output_for_sink_pad(
        &self,
        element: &gst::Element,
        sinkpad: &gst::Pad,
        latency: gst::ClockTime,
        out: Box<dyn Output>,
    ) -> Option<Box<dyn Output>> {
        let linked = sinkpad.is_linked();
        if linked && self.is_empty() {
            *self.merge.lock().unwrap() = None;
            return Some(out);
        }
        let weak = element.downgrade();
        let live = move || Some(live_upstream_latency(&weak.upgrade()?)? + latency);
        let merge = Merge::new(out, Reporter::new(element), Box::new(live));
        *self.merge.lock().unwrap() = Some(merge.clone());
        if !self.sink_pad_carries_audio(sinkpad) {
            return None;
        }
        let input = merge.input(sinkpad);
        if !linked {
            // Nothing will come on it: the others' end does not wait for it.
            merge.remove(input.id());
        }
        Some(Box::new(input))
    }

    /// NULL->READY: the models of the pads that carry audio: the element's
    /// sink pad's (into `own`) and each linked participant's (the others
    /// load theirs at start).
    pub fn load(
        &self,
        element: &gst::Element,
        settings: &SettingsCell,
        sinkpad: &gst::Pad,
        own: &Mutex<Lifecycle>,
    ) -> Result<(), gst::StateChangeError> {
        if self.sink_pad_carries_audio(sinkpad) {
            own.lock().unwrap().load(element, settings)?;
        } else {
            settings.post_pending_warnings(element);
        }
        self.list()
            .iter()
            .filter(|p| p.pad.is_linked())
            .try_for_each(|p| p.load(element, settings))
    }

    /// READY->PAUSED, after [`Self::output_for_sink_pad`].
    pub fn start(
        &self,
        element: &gst::Element,
        settings: &Settings,
    ) -> Result<(), gst::ErrorMessage> {
        let Some(merge) = self.merge.lock().unwrap().clone() else {
            return Ok(());
        };
        self.list()
            .iter()
            .try_for_each(|p| p.start(element, settings, &merge))
    }

    /// PAUSED->PLAYING.
    pub fn resume(&self) {
        self.list().iter().for_each(|p| p.resume());
    }

    /// PAUSED->READY.
    pub fn stop(&self) {
        let merge = self.merge.lock().unwrap().take();
        if let Some(merge) = &merge {
            merge.stop();
        }
        for p in self.list() {
            p.stop(merge.as_ref());
        }
    }

    /// READY->NULL.
    pub fn unload(&self) {
        self.list().iter().for_each(|p| p.unload());
    }

    /// A new `sink_%u` pad of `imp`'s element. One requested while the
    /// element runs gets its model and core at once (one requested before
    /// loads its model at start); the element's own sink pad running alone
    /// (`own_core_running` and no merge) cannot be joined, which a WARNING
    /// says.
    pub fn request<T: ElementImpl>(
        &self,
        imp: &T,
        templ: &gst::PadTemplate,
        name: Option<&str>,
        settings: &SettingsCell,
        own_core_running: bool,
    ) -> Option<gst::Pad> {
        let name = name.map_or_else(|| self.free_pad_name(), str::to_owned);
        let (pad, slot) = participant_pad::<T>(templ, &name);
        pad.set_property("speaker", &name);
        let participant = Participant::new(pad.clone(), self.wrapper.lock().unwrap().clone());
        let _ = slot.set(Arc::downgrade(&participant));
        let obj = imp.obj();
        let element: &gst::Element = obj.upcast_ref();
        let merge = self.merge.lock().unwrap().clone();
        if own_core_running && merge.is_none() {
            gst::element_warning!(
                element,
                gst::CoreError::Pad,
                (
                    "{} cannot join: the element started with its sink pad alone; request the \
                     speakers' pads before it starts (or leave the sink pad unlinked)",
                    name
                )
            );
            return None;
        }
        if let Some(merge) = merge {
            participant.load(element, settings).ok()?;
            if let Err(msg) = participant.start(element, &settings.snapshot(), &merge) {
                element.post_error_message(msg);
                return None;
            }
            participant.resume();
        }
        self.list.lock().unwrap().push(participant);
        element.add_pad(&pad).ok()?;
        announce_child(element, Some(pad.upcast_ref()), None);
        Some(pad.upcast())
    }

    /// A request pad goes: while running, its stream finishes first (its
    /// last words come out) and the others go on.
    pub fn release(&self, element: &gst::Element, pad: &gst::Pad) {
        let participant = {
            let mut list = self.list.lock().unwrap();
            let i = list
                .iter()
                .position(|p| p.pad.upcast_ref::<gst::Pad>() == pad);
            i.map(|i| list.remove(i))
        };
        let Some(participant) = participant else {
            return;
        };
        let merge = self.merge.lock().unwrap().clone();
        match merge {
            Some(merge) => participant.leave(&merge),
            None => participant.stop(None),
        }
        participant.unload();
        let _ = element.remove_pad(pad);
        announce_child(element, None, Some(pad));
    }

    /// What upstream of the element's linked sink pads (`sinkpad` and the
    /// request pads) answers a LATENCY query: live if any is, the largest
    /// minimum (the pads' words are merged, so the slowest counts).
    pub fn upstream_latency(
        &self,
        sinkpad: &gst::Pad,
    ) -> Option<(bool, gst::ClockTime, Option<gst::ClockTime>)> {
        let mut pads = vec![sinkpad.clone()];
        pads.extend(self.pads());
        let mut answer: Option<(bool, gst::ClockTime, Option<gst::ClockTime>)> = None;
        for pad in pads.iter().filter(|p| p.is_linked()) {
            let mut upstream = gst::query::Latency::new();
            if !pad.peer_query(&mut upstream) {
                return None;
            }
            let (live, min, max) = upstream.result();
            answer = Some(match answer {
                None => (live, min, max),
                Some((l, m, x)) => (l || live, m.max(min), x.zip(max).map(|(a, b)| a.max(b))),
            });
        }
        answer
    }

    /// Adds to the element's `stats`: `words-retimed` (the merge's words
    /// that came after later ones went out) and `participants`, each
    /// request pad's statistics (with its `pad`), if there are any.
    pub fn add_stats(&self, stats: &mut gst::Structure) {
        let retimed = self
            .merge
            .lock()
            .unwrap()
            .as_ref()
            .map_or(0, |m| m.retimed());
        stats.set("words-retimed", retimed);
        let list = self.list();
        if list.is_empty() {
            return;
        }
        let pads = list.iter().map(|p| {
            let mut s = p.stats().to_structure();
            s.set(field::PAD, p.pad.name().as_str());
            s.to_send_value()
        });
        stats.set(field::PARTICIPANTS, gst::Array::from_values(pads));
    }

    /// The lowest free `sink_N`.
    fn free_pad_name(&self) -> String {
        let taken: Vec<String> = self
            .list()
            .iter()
            .map(|p| p.pad.name().to_string())
            .collect();
        (0..)
            .map(|n| format!("sink_{n}"))
            .find(|name| !taken.contains(name))
            .expect("a free name")
    }
}

/// The element's pad `index` as a child (GstChildProxy): its pads, the
/// request pads included, in the order they were added.
pub fn pad_child(element: &gst::Element, index: u32) -> Option<glib::Object> {
    let pads = element.pads();
    pads.into_iter().nth(index as usize).map(|p| p.upcast())
}

/// Tells GstChildProxy's watchers (gst-launch-1.0's `sink_0::speaker=`
/// waits for it) that a request pad came or went.
pub fn announce_child(
    element: &gst::Element,
    added: Option<&gst::Pad>,
    removed: Option<&gst::Pad>,
) {
    let Some(proxy) = element.dynamic_cast_ref::<gst::ChildProxy>() else {
        return;
    };
    if let Some(pad) = added {
        proxy.child_added(pad, &pad.name());
    }
    if let Some(pad) = removed {
        proxy.child_removed(pad, &pad.name());
    }
}

/// Upstream's least latency, if any linked sink pad of `element` is live.
fn live_upstream_latency(element: &gst::Element) -> Option<gst::ClockTime> {
    let mut latency = None;
    for pad in element.sink_pads().iter().filter(|p| p.is_linked()) {
        let mut query = gst::query::Latency::new();
        if !pad.peer_query(&mut query) {
            continue;
        }
        let (live, min, _) = query.result();
        if live {
            latency = Some(latency.map_or(min, |l: gst::ClockTime| l.max(min)));
        }
    }
    latency
}

type ParticipantSlot = Arc<OnceLock<Weak<Participant>>>;

/// A participant's pad: its functions reach the participant through a weak
/// reference (the participant holds the pad), set once it exists.
fn participant_pad<T: ElementImpl>(
    templ: &gst::PadTemplate,
    name: &str,
) -> (SpeakerPad, ParticipantSlot) {
    let slot = ParticipantSlot::default();
    let (for_chain, for_event) = (slot.clone(), slot.clone());
    let pad = gst::PadBuilder::<SpeakerPad>::from_template(templ)
        .name(name)
        .chain_function(move |_, parent, buffer| {
            T::catch_panic_pad_function(
                parent,
                || Err(gst::FlowError::Error),
                |_| match for_chain.get().and_then(Weak::upgrade) {
                    Some(p) => p.chain(buffer),
                    None => Err(gst::FlowError::Flushing),
                },
            )
        })
        .event_function(move |_, parent, event| {
            T::catch_panic_pad_function(
                parent,
                || false,
                |imp| match for_event.get().and_then(Weak::upgrade) {
                    Some(p) => p.event(imp.obj().upcast_ref(), event),
                    None => false,
                },
            )
        })
        .build();
    (pad, slot)
}
