// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A stand-in registered as `awstranscriber` when the aws plugin is
//! missing. transcriberbin 0.15 makes an `awstranscriber` for each audio
//! sink pad as the pad is made, links it (audio in, text out) and asks its
//! LATENCY; with none it fails to build ("no transcriber to link") and
//! refuses every state change after. This one takes any audio and writes
//! nothing; the checks replace it with `voxtralrttranscriber` through the
//! pad's `transcriber` before anything plays.

use std::sync::LazyLock;

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;

glib::wrapper! {
    pub struct StandIn(ObjectSubclass<imp::StandIn>) @extends gst::Element, gst::Object;
}

/// Registers the stand-in, unless there is an `awstranscriber`; whether it
/// did.
pub fn register_if_needed() -> bool {
    if gst::ElementFactory::find("awstranscriber").is_some() {
        return false;
    }
    gst::Element::register(
        None,
        "awstranscriber",
        gst::Rank::NONE,
        StandIn::static_type(),
    )
    .expect("registering the stand-in");
    true
}

mod imp {
    use super::*;

    pub struct StandIn {
        sink: gst::Pad,
        src: gst::Pad,
    }

    #[glib::object_subclass]
    impl ObjectSubclass for StandIn {
        const NAME: &'static str = "GstVoxtralRtInteropStandIn";
        type Type = super::StandIn;
        type ParentType = gst::Element;

        fn with_class(klass: &Self::Class) -> Self {
            let sink = gst::Pad::builder_from_template(&klass.pad_template("sink").unwrap())
                .chain_function(|_, _, _| Ok(gst::FlowSuccess::Ok))
                .build();
            let src = gst::Pad::builder_from_template(&klass.pad_template("src").unwrap()).build();
            StandIn { sink, src }
        }
    }

    impl ObjectImpl for StandIn {
        fn constructed(&self) {
            self.parent_constructed();
            self.obj().add_pad(&self.sink).unwrap();
            self.obj().add_pad(&self.src).unwrap();
        }
    }

    impl GstObjectImpl for StandIn {}

    impl ElementImpl for StandIn {
        fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
            static METADATA: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
                gst::subclass::ElementMetadata::new(
                    "awstranscriber stand-in",
                    "Audio/Text/Filter",
                    "Takes audio and writes no text, for transcriberbin to build without the aws plugin",
                    "gst-plugin-voxtralrt authors",
                )
            });
            Some(&*METADATA)
        }

        fn pad_templates() -> &'static [gst::PadTemplate] {
            static TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
                let text = gst::Caps::builder("text/x-raw")
                    .field("format", "utf8")
                    .build();
                vec![
                    gst::PadTemplate::new(
                        "sink",
                        gst::PadDirection::Sink,
                        gst::PadPresence::Always,
                        &gst::Caps::builder("audio/x-raw").build(),
                    )
                    .unwrap(),
                    gst::PadTemplate::new(
                        "src",
                        gst::PadDirection::Src,
                        gst::PadPresence::Always,
                        &text,
                    )
                    .unwrap(),
                ]
            });
            TEMPLATES.as_ref()
        }
    }
}
