// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Both elements' sink pads: each has a `speaker`, the name its words
//! carry. Setting it while playing changes the speaker from that point of
//! the stream on (the element hears of it through `notify::speaker`).

use std::sync::Mutex;

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

mod imp {
    use super::*;
    use std::sync::LazyLock;

    #[derive(Default)]
    pub struct SpeakerPad {
        pub(super) speaker: Mutex<Option<String>>,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for SpeakerPad {
        const NAME: &'static str = "GstVoxtralRtSpeakerPad";
        type Type = super::SpeakerPad;
        type ParentType = gst::Pad;
    }

    impl ObjectImpl for SpeakerPad {
        fn properties() -> &'static [glib::ParamSpec] {
            static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
                vec![glib::ParamSpecString::builder("speaker")
                    .nick("Speaker")
                    .blurb("The name this pad's words carry (request pads: the pad's name; sink: none). Set while playing, it changes from that point of the stream on")
                    .mutable_playing()
                    .build()]
            });
            PROPERTIES.as_ref()
        }

        fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
            if pspec.name() == "speaker" {
                *self.speaker.lock().unwrap() = value.get().expect("type checked");
            }
        }

        fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
            match pspec.name() {
                "speaker" => self.speaker.lock().unwrap().to_value(),
                other => unreachable!("no property {other}"),
            }
        }
    }

    impl GstObjectImpl for SpeakerPad {}
    impl PadImpl for SpeakerPad {}
}

glib::wrapper! {
    pub struct SpeakerPad(ObjectSubclass<imp::SpeakerPad>) @extends gst::Pad, gst::Object;
}

impl SpeakerPad {
    /// The name its words carry, if one is set.
    pub fn speaker(&self) -> Option<String> {
        self.imp().speaker.lock().unwrap().clone()
    }

    /// Tells `core` (this pad's) who speaks from here on, if the pad names
    /// a speaker: a checked `voxtralrt/speaker` event, in order with the
    /// audio that has reached it.
    pub fn announce_to(&self, core: &crate::core::Core) {
        let Some(speaker) = self.speaker() else {
            return;
        };
        let s = gst::Structure::builder(crate::speakers::SPEAKER_EVENT)
            .field("speaker", speaker)
            .build();
        let event = gst::event::CustomDownstream::new(s);
        let _ = core.push_event(crate::core::check_speaker_event(event, self.upcast_ref()));
    }
}
