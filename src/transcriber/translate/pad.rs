// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The `translate_src_%u` pads' class: each has the `language-code` its
//! text is translated into (transcriberbin sets it right after requesting
//! the pad), and the caption channel and service its closed captions go
//! on (a second language's, CC3 and service 2, unless set).

use std::sync::Mutex;

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

use crate::transcriber::captions::{CaptionChannel, CaptionSettings};

/// A translation's captions go beside the transcript's (CC1, service 1).
const DEFAULT_CHANNEL: CaptionChannel = CaptionChannel::Cc3;
const DEFAULT_SERVICE: u32 = 2;

mod imp {
    use super::*;
    use std::sync::LazyLock;

    pub struct TranslatePad {
        pub(super) language_code: Mutex<Option<String>>,
        pub(super) channel: Mutex<CaptionChannel>,
        pub(super) service: Mutex<u32>,
    }

    impl Default for TranslatePad {
        fn default() -> Self {
            TranslatePad {
                language_code: Mutex::default(),
                channel: Mutex::new(DEFAULT_CHANNEL),
                service: Mutex::new(DEFAULT_SERVICE),
            }
        }
    }

    #[glib::object_subclass]
    impl ObjectSubclass for TranslatePad {
        const NAME: &'static str = "GstVoxtralRtTranslatePad";
        type Type = super::TranslatePad;
        type ParentType = gst::Pad;
    }

    impl ObjectImpl for TranslatePad {
        fn properties() -> &'static [glib::ParamSpec] {
            static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
                vec![
                    glib::ParamSpecString::builder("language-code")
                        .nick("Language code")
                        .blurb("The BCP-47 language this pad's text is translated into (es, es-ES, fr-FR, ...); set before the element starts")
                        .mutable_ready()
                        .build(),
                    glib::ParamSpecEnum::builder_with_default("caption-channel", DEFAULT_CHANNEL)
                        .nick("CEA-608 channel")
                        .blurb("The CEA-608 channel of this pad's closed captions: cc3 (field 2, a second language) or cc1")
                        .mutable_ready()
                        .build(),
                    glib::ParamSpecUInt::builder("caption-service")
                        .nick("CEA-708 service")
                        .blurb("The CEA-708 service of this pad's closed captions: 2 (secondary language) by default, 1 to 6")
                        .minimum(u32::from(*crate::caption::SERVICES.start()))
                        .maximum(u32::from(*crate::caption::SERVICES.end()))
                        .default_value(DEFAULT_SERVICE)
                        .mutable_ready()
                        .build(),
                ]
            });
            PROPERTIES.as_ref()
        }

        fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
            match pspec.name() {
                "language-code" => {
                    *self.language_code.lock().unwrap() = value.get().expect("type checked")
                }
                "caption-channel" => {
                    *self.channel.lock().unwrap() = value.get().expect("type checked")
                }
                "caption-service" => {
                    *self.service.lock().unwrap() = value.get().expect("type checked")
                }
                other => unreachable!("no property {other}"),
            }
        }

        fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
            match pspec.name() {
                "language-code" => self.language_code.lock().unwrap().to_value(),
                "caption-channel" => self.channel.lock().unwrap().to_value(),
                "caption-service" => self.service.lock().unwrap().to_value(),
                other => unreachable!("no property {other}"),
            }
        }
    }

    impl GstObjectImpl for TranslatePad {}
    impl PadImpl for TranslatePad {}
}

glib::wrapper! {
    pub struct TranslatePad(ObjectSubclass<imp::TranslatePad>) @extends gst::Pad, gst::Object;
}

impl TranslatePad {
    pub fn language_code(&self) -> Option<String> {
        self.imp().language_code.lock().unwrap().clone()
    }

    /// The element's caption settings with this pad's channel and service.
    pub(in crate::transcriber) fn caption_settings(
        &self,
        element: &CaptionSettings,
    ) -> CaptionSettings {
        CaptionSettings {
            channel: *self.imp().channel.lock().unwrap(),
            service: *self.imp().service.lock().unwrap(),
            ..element.clone()
        }
    }
}
