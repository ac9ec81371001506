// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One viewer: a bin with its own webrtcbin, payloaders and queues, hung
//! off the shared encoded tees, and the `captions` data channel.
//!
//! The viewer's media timeline. For a MediaStream, a browser's
//! `video.currentTime` is not the RTP or NTP time of the stream: it starts
//! at 0 on the first video frame the browser decodes and then follows the
//! frames' RTP timestamps (Chromium: the frame's render time minus the
//! first frame's). So this viewer's media time 0 is made to be exactly
//! that frame: nothing goes out before the peer connection (ICE and DTLS)
//! is up, then a key frame is asked for and the video starts with it, and
//! audio with the first buffer at or after it. That frame's running time
//! is the viewer's origin, and each cue goes out as `start`/`end` =
//! running time - origin, in seconds: directly comparable with
//! `video.currentTime`. A native receiver gets the same: the PTS of a
//! received frame minus the first received frame's PTS.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, Weak};

use gst::prelude::*;
use gst_webrtc::{
    WebRTCDataChannel, WebRTCICEGatheringState, WebRTCPeerConnectionState,
    WebRTCRTPTransceiverDirection, WebRTCSDPType, WebRTCSessionDescription,
};

use crate::media::{Cue, Media};
use crate::signalling::Outgoing;

pub type ViewerId = u64;

/// The video codecs offered, in order of preference: H.264 carries the
/// caption SEI for native receivers; VP8 is there for browsers without
/// H.264 (they get captions from the data channel only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VideoCodec {
    H264,
    Vp8,
}

impl VideoCodec {
    fn payload_type(self) -> u32 {
        match self {
            VideoCodec::H264 => 96,
            VideoCodec::Vp8 => 97,
        }
    }

    fn caps(self) -> gst::Caps {
        match self {
            // The profile-level-id x264enc's constrained-baseline output
            // gets from rtph264pay (level 3.0, enough for 640x360).
            VideoCodec::H264 => gst::Caps::builder("application/x-rtp")
                .field("media", "video")
                .field("encoding-name", "H264")
                .field("payload", 96i32)
                .field("clock-rate", 90_000i32)
                .field("packetization-mode", "1")
                .field("profile-level-id", "42c01e")
                .build(),
            VideoCodec::Vp8 => gst::Caps::builder("application/x-rtp")
                .field("media", "video")
                .field("encoding-name", "VP8")
                .field("payload", 97i32)
                .field("clock-rate", 90_000i32)
                .build(),
        }
    }

    fn tee(self) -> &'static str {
        match self {
            VideoCodec::H264 => "h264",
            VideoCodec::Vp8 => "vp8",
        }
    }

    fn payloader(self) -> Result<gst::Element, String> {
        let pt = self.payload_type();
        let built = match self {
            VideoCodec::H264 => gst::ElementFactory::make("rtph264pay")
                .property("pt", pt)
                .property_from_str("config-interval", "-1")
                .property_from_str("aggregate-mode", "zero-latency")
                .build(),
            VideoCodec::Vp8 => gst::ElementFactory::make("rtpvp8pay")
                .property("pt", pt)
                .property_from_str("picture-id-mode", "15-bit")
                .build(),
        };
        built.map_err(|e| e.to_string())
    }

    pub fn name(self) -> &'static str {
        match self {
            VideoCodec::H264 => "H264",
            VideoCodec::Vp8 => "VP8",
        }
    }
}

const OPUS_PT: u32 = 111;

fn opus_caps() -> gst::Caps {
    gst::Caps::builder("application/x-rtp")
        .field("media", "audio")
        .field("encoding-name", "OPUS")
        .field("payload", OPUS_PT as i32)
        .field("clock-rate", 48_000i32)
        .field("encoding-params", "2")
        .build()
}

#[derive(Default)]
struct State {
    /// The offer went out; an answer is expected.
    offered: bool,
    answered: bool,
    /// ICE and DTLS are up: media may flow from the next key frame.
    connected: bool,
    /// The running time of this viewer's media time 0.
    origin: Option<u64>,
    channel_open: bool,
    /// Cues for the data channel before it opened.
    pending: Vec<String>,
    codec: Option<VideoCodec>,
}

pub struct Viewer {
    pub id: ViewerId,
    media: Weak<Media>,
    bin: gst::Bin,
    webrtcbin: gst::Element,
    video_sink: gst::Pad,
    channel: WebRTCDataChannel,
    outgoing: Sender<Outgoing>,
    state: Mutex<State>,
    /// Tee pads feeding this viewer, released when it leaves.
    tee_pads: Mutex<Vec<(gst::Element, gst::Pad)>>,
    /// The probe holding the audio back until the origin is known.
    audio_block: Mutex<Option<(gst::Pad, gst::PadProbeId)>>,
}

/// How far a viewer may fall behind before its queue drops its frames.
const VIEWER_LAG: gst::ClockTime = gst::ClockTime::from_seconds(3);

/// A leaky queue: a viewer that cannot keep up loses its own frames
/// instead of holding back the shared tee.
fn viewer_queue() -> Result<gst::Element, String> {
    gst::ElementFactory::make("queue")
        .property_from_str("leaky", "downstream")
        .property("max-size-buffers", 0u32)
        .property("max-size-bytes", 0u32)
        .property("max-size-time", VIEWER_LAG.nseconds())
        .build()
        .map_err(|e| e.to_string())
}

/// The queue before `clocksync` holds each buffer for `latency` (the
/// clocksync waits that long): it gets room for that on top of the
/// viewer's lag, or with a transcriber `latency` above the lag it dropped
/// most of the video (2 frames a second with `--latency 4000`).
fn make_room_before(clocksync: &gst::Element, latency: gst::ClockTime) {
    // webrtcbin has clocksyncs of its own: only ours follow a queue.
    let queue = clocksync
        .static_pad("sink")
        .and_then(|sink| sink.peer())
        .and_then(|src| src.parent_element())
        .filter(|e| e.factory().is_some_and(|f| f.name() == "queue"));
    if let Some(queue) = queue {
        queue.set_property("max-size-time", (latency + VIEWER_LAG).nseconds());
    }
}

/// The running time of `buffer` on `pad`, from the pad's segment.
fn running_time(pad: &gst::Pad, buffer: &gst::BufferRef) -> Option<u64> {
    let event = pad.sticky_event::<gst::event::Segment>(0)?;
    let segment = event.segment().downcast_ref::<gst::ClockTime>()?;
    segment
        .to_running_time(buffer.pts()?)
        .map(gst::ClockTime::nseconds)
}

impl Viewer {
    pub fn new(
        id: ViewerId,
        media: Weak<Media>,
        outgoing: Sender<Outgoing>,
    ) -> Result<Arc<Viewer>, String> {
        let shared = media.upgrade().ok_or("the server is shutting down")?;
        let bin = gst::Bin::with_name(&format!("viewer{id}"));
        let webrtcbin = gst::ElementFactory::make("webrtcbin")
            .property_from_str("bundle-policy", "max-bundle")
            .build()
            .map_err(|e| {
                format!("webrtcbin: {e} (install gstreamer1.0-nice and gstreamer1.0-plugins-bad)")
            })?;
        if let Some(stun) = &shared.config.stun {
            webrtcbin.set_property("stun-server", stun);
        }
        if let Some(turn) = &shared.config.turn {
            webrtcbin.set_property("turn-server", turn);
        }
        bin.add(&webrtcbin).map_err(|e| e.to_string())?;

        let video_sink = Self::send_only_pad(
            &webrtcbin,
            &gst::Caps::builder_full()
                .structure(VideoCodec::H264.caps().structure(0).unwrap().to_owned())
                .structure(VideoCodec::Vp8.caps().structure(0).unwrap().to_owned())
                .build(),
        )?;
        let audio_sink = Self::send_only_pad(&webrtcbin, &opus_caps())?;
        // webrtcbin makes data channels from READY on.
        shared.pipeline.add(&bin).map_err(|e| e.to_string())?;
        bin.sync_state_with_parent()
            .map_err(|e| format!("starting the viewer's elements: {e}"))?;
        let channel = webrtcbin
            .emit_by_name::<Option<WebRTCDataChannel>>(
                "create-data-channel",
                &[&"captions", &None::<gst::Structure>],
            )
            .ok_or("webrtcbin made no data channel (is the sctp plugin there?)")?;

        let viewer = Arc::new(Viewer {
            id,
            media,
            bin,
            webrtcbin,
            video_sink,
            channel,
            outgoing,
            state: Mutex::new(State::default()),
            tee_pads: Mutex::new(Vec::new()),
            audio_block: Mutex::new(None),
        });
        viewer.connect_signals();
        viewer.add_branch(
            "opus",
            &[gst::ElementFactory::make("rtpopuspay")
                .property("pt", OPUS_PT)
                .build()
                .map_err(|e| e.to_string())?],
            &audio_sink,
            false,
        )?;
        Ok(viewer)
    }

    /// A webrtcbin sink pad whose transceiver only sends and offers `caps`.
    fn send_only_pad(webrtcbin: &gst::Element, caps: &gst::Caps) -> Result<gst::Pad, String> {
        let pad = webrtcbin
            .request_pad_simple("sink_%u")
            .ok_or("webrtcbin gave no sink pad")?;
        let transceiver = pad.property::<gst_webrtc::WebRTCRTPTransceiver>("transceiver");
        transceiver.set_property("direction", WebRTCRTPTransceiverDirection::Sendonly);
        transceiver.set_property("codec-preferences", caps);
        Ok(pad)
    }

    fn connect_signals(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        self.webrtcbin
            .connect("on-ice-candidate", false, move |args| {
                let mline = args[1].get::<u32>().ok()?;
                let candidate = args[2].get::<String>().ok()?;
                if let Some(viewer) = weak.upgrade() {
                    let _ = viewer.outgoing.send(Outgoing::Ice { mline, candidate });
                }
                None
            });
        let weak = Arc::downgrade(self);
        self.webrtcbin
            .connect_notify(Some("ice-gathering-state"), move |webrtcbin, _| {
                let state = webrtcbin.property::<WebRTCICEGatheringState>("ice-gathering-state");
                if let (WebRTCICEGatheringState::Complete, Some(viewer)) = (state, weak.upgrade()) {
                    viewer.send_offer();
                }
            });
        let weak = Arc::downgrade(self);
        self.webrtcbin
            .connect_notify(Some("connection-state"), move |webrtcbin, _| {
                let state = webrtcbin.property::<WebRTCPeerConnectionState>("connection-state");
                if let Some(viewer) = weak.upgrade() {
                    viewer.on_connection_state(state);
                }
            });
        let weak = Arc::downgrade(self);
        self.channel.connect_on_open(move |_| {
            if let Some(viewer) = weak.upgrade() {
                viewer.on_channel_open();
            }
        });
    }

    /// Builds `queue ! <elements>` into the bin from the tee `tee` to
    /// webrtcbin's `sink`, with the probe that holds media back until this
    /// viewer's timeline starts.
    fn add_branch(
        self: &Arc<Self>,
        tee: &str,
        elements: &[gst::Element],
        sink: &gst::Pad,
        video: bool,
    ) -> Result<(), String> {
        let queue = viewer_queue()?;
        self.bin.add(&queue).map_err(|e| e.to_string())?;
        // webrtcbin sends what it gets at once (its network sink does not
        // sync on the clock), and the video reaches this branch 0.7 s to
        // 1.3 s after its running time, as soon as cccombiner has its
        // captions. Sent like that, a browser's currentTime, which runs on
        // from the first frame, got ahead of the picture by the difference
        // and the cues showed up to 0.6 s late. clocksync holds each buffer
        // until its running time plus the latency upstream of it, so the
        // video leaves at a constant delay.
        let clocksync = gst::ElementFactory::make("clocksync")
            .build()
            .map_err(|e| e.to_string())?;
        self.bin.add(&clocksync).map_err(|e| e.to_string())?;
        queue.link(&clocksync).map_err(|e| e.to_string())?;
        let mut previous = clocksync.clone();
        for e in elements {
            self.bin.add(e).map_err(|e| e.to_string())?;
            previous.link(e).map_err(|e| e.to_string())?;
            previous = e.clone();
        }
        previous
            .static_pad("src")
            .expect("payloaders have a src pad")
            .link(sink)
            .map_err(|e| format!("linking to webrtcbin: {e:?}"))?;
        let src = queue.static_pad("src").expect("queues have a src pad");
        if !video {
            // Audio waits in the (leaky) queue rather than being dropped
            // until the origin is known: the video reaches the tee up to
            // `latency` after the audio of the same instant, and the
            // viewer's first second of sound would be lost.
            let block = src.add_probe(gst::PadProbeType::BLOCK_DOWNSTREAM, |_, _| {
                gst::PadProbeReturn::Ok
            });
            *self.audio_block.lock().unwrap() = block.map(|id| (src.clone(), id));
        }
        let weak = Arc::downgrade(self);
        src.add_probe(gst::PadProbeType::BUFFER, move |pad, info| {
            let Some(viewer) = weak.upgrade() else {
                return gst::PadProbeReturn::Drop;
            };
            match info.buffer() {
                Some(buffer) if viewer.lets_through(pad, buffer, video) => gst::PadProbeReturn::Ok,
                Some(_) => gst::PadProbeReturn::Drop,
                None => gst::PadProbeReturn::Ok,
            }
        });
        let ghost = gst::GhostPad::builder_with_target(&queue.static_pad("sink").unwrap())
            .map_err(|e| e.to_string())?
            .name(tee)
            .build();
        ghost.set_active(true).map_err(|e| e.to_string())?;
        self.bin.add_pad(&ghost).map_err(|e| e.to_string())?;
        for e in [&queue, &clocksync].into_iter().chain(elements) {
            e.sync_state_with_parent().map_err(|e| e.to_string())?;
        }
        let media = self.media.upgrade().ok_or("the server is shutting down")?;
        let tee = media.tee(tee);
        let tee_pad = tee
            .request_pad_simple("src_%u")
            .ok_or("the tee gave no pad")?;
        tee_pad
            .link(&ghost)
            .map_err(|e| format!("linking the viewer to the stream: {e:?}"))?;
        self.tee_pads.lock().unwrap().push((tee, tee_pad));
        Ok(())
    }

    /// Whether a buffer may go to this viewer: nothing before the peer is
    /// connected; then video from a key frame on, which fixes the origin,
    /// and audio from the origin on.
    fn lets_through(&self, pad: &gst::Pad, buffer: &gst::BufferRef, video: bool) -> bool {
        let state = self.state.lock().unwrap();
        let Some(at) = running_time(pad, buffer) else {
            return false;
        };
        match (state.origin, video) {
            (Some(origin), _) => at >= origin || video,
            (None, _) if !state.connected => false,
            (None, false) => false,
            (None, true) => {
                if buffer.flags().contains(gst::BufferFlags::DELTA_UNIT) {
                    return false;
                }
                drop(state);
                if let Some(media) = self.media.upgrade() {
                    media.start_timeline(self, at);
                }
                true
            }
        }
    }

    /// Sets the origin and sends the cues already said about what this
    /// viewer is going to see. The caller holds the transcript, so no new
    /// cue can slip in between.
    pub fn set_origin<'a>(&self, origin: u64, recent: impl Iterator<Item = &'a Cue>) {
        let codec = {
            let mut state = self.state.lock().unwrap();
            state.origin = Some(origin);
            state.codec
        };
        if let Some((pad, probe)) = self.audio_block.lock().unwrap().take() {
            pad.remove_probe(probe);
        }
        println!(
            "viewer {}: connected, {} video and Opus audio; its media time 0 is running time {:.3} s",
            self.id,
            codec.map_or("no", VideoCodec::name),
            origin as f64 / 1e9
        );
        for cue in recent {
            self.send_cue(cue);
        }
    }

    /// Sends a cue on the data channel (kept until the channel opens), with
    /// its times on this viewer's media timeline. Cues that end before the
    /// viewer's first frame are of no use to it.
    pub fn send_cue(&self, cue: &Cue) {
        let mut state = self.state.lock().unwrap();
        let Some(origin) = state.origin else {
            return;
        };
        if cue.end <= origin {
            return;
        }
        let seconds = |t: u64| (t as f64 - origin as f64) / 1e9;
        let message = serde_json::json!({
            "text": cue.text,
            "start": seconds(cue.start),
            "end": seconds(cue.end),
            "final": cue.is_final,
            "speaker": cue.speaker,
        })
        .to_string();
        if state.channel_open {
            self.channel.send_string(Some(&message));
        } else {
            state.pending.push(message);
        }
    }

    fn on_channel_open(&self) {
        let mut state = self.state.lock().unwrap();
        state.channel_open = true;
        for message in std::mem::take(&mut state.pending) {
            self.channel.send_string(Some(&message));
        }
    }

    fn on_connection_state(&self, state: WebRTCPeerConnectionState) {
        match state {
            WebRTCPeerConnectionState::Connected => {
                self.learn_latency();
                self.state.lock().unwrap().connected = true;
                self.request_key_frame();
            }
            WebRTCPeerConnectionState::Failed | WebRTCPeerConnectionState::Closed => {
                eprintln!("viewer {}: peer connection {state:?}", self.id);
                Media::remove_viewer_later(&self.media, self.id);
            }
            _ => {}
        }
    }

    /// Has each of this viewer's clocksyncs ask upstream for its latency
    /// now, before the first frame passes (nothing passes before
    /// `connected`): a pipeline's latency queries reach it only through
    /// webrtcbin's network sink, which may not have been there yet, and a
    /// latency learnt after the first frames would delay the rest.
    fn learn_latency(&self) {
        for clocksync in self
            .bin
            .iterate_all_by_element_factory_name("clocksync")
            .into_iter()
            .flatten()
        {
            let mut query = gst::query::Latency::new();
            let answered = clocksync
                .static_pad("src")
                .is_some_and(|src| src.query(&mut query));
            if answered {
                let (_, latency, _) = query.result();
                make_room_before(&clocksync, latency);
            }
        }
    }

    /// Asks the shared video encoder for a key frame, so this viewer's
    /// video starts without waiting for the next periodic one.
    fn request_key_frame(&self) {
        let event = gst::event::CustomUpstream::new(
            gst::Structure::builder("GstForceKeyUnit")
                .field("all-headers", true)
                .build(),
        );
        if let Some(peer) = self.video_sink.peer() {
            // The payloader's sink pad: the event goes up through the
            // viewer's queue and the tee to the encoder.
            if let Some(payloader) = peer.parent_element() {
                let _ = payloader.static_pad("sink").unwrap().push_event(event);
            }
        }
    }

    /// Creates the offer; it goes out once ICE gathering is complete, with
    /// every candidate in it (see signalling.rs for why).
    pub fn negotiate(self: &Arc<Self>) {
        let weak = Arc::downgrade(self);
        let promise = gst::Promise::with_change_func(move |reply| {
            let Some(viewer) = weak.upgrade() else { return };
            let offer = match reply {
                Ok(Some(reply)) => reply.get::<WebRTCSessionDescription>("offer").ok(),
                _ => None,
            };
            match offer {
                Some(offer) => viewer
                    .webrtcbin
                    .emit_by_name::<()>("set-local-description", &[&offer, &None::<gst::Promise>]),
                None => eprintln!("viewer {}: webrtcbin made no offer: {reply:?}", viewer.id),
            }
        });
        self.webrtcbin
            .emit_by_name::<()>("create-offer", &[&None::<gst::Structure>, &promise]);
    }

    /// The local description as SDP text, if there is one yet.
    pub fn local_sdp(&self) -> Option<String> {
        let description = self
            .webrtcbin
            .property::<Option<WebRTCSessionDescription>>("local-description")?;
        description.sdp().as_text().ok()
    }

    /// Hands the offer to the signalling connection, once.
    pub fn send_offer(&self) {
        {
            let mut state = self.state.lock().unwrap();
            if state.offered {
                return;
            }
            state.offered = true;
        }
        if let Some(sdp) = self.local_sdp() {
            let _ = self.outgoing.send(Outgoing::Offer { sdp });
        }
    }

    /// Applies the viewer's answer and starts the video branch for the
    /// codec it chose.
    pub fn apply_answer(self: &Arc<Self>, sdp: &str) -> Result<(), String> {
        {
            let state = self.state.lock().unwrap();
            if !state.offered {
                return Err("an answer before the offer".into());
            }
            if state.answered {
                return Err("a second answer (this session is already negotiated)".into());
            }
        }
        let message = gst_sdp::SDPMessage::parse_buffer(sdp.as_bytes())
            .map_err(|_| "the answer's SDP does not parse")?;
        let codec = chosen_video_codec(&message)?;
        let offer_media = self
            .webrtcbin
            .property::<Option<WebRTCSessionDescription>>("local-description")
            .map_or(0, |d| d.sdp().medias_len());
        if message.medias_len() != offer_media {
            return Err(format!(
                "the answer has {} media sections, the offer {offer_media}: an SDP for another session",
                message.medias_len()
            ));
        }
        self.state.lock().unwrap().answered = true;
        let answer = WebRTCSessionDescription::new(WebRTCSDPType::Answer, message);
        let id = self.id;
        let promise = gst::Promise::with_change_func(move |reply| {
            if let Ok(Some(reply)) = reply {
                if let Ok(error) = reply.get::<gst::glib::Error>("error") {
                    eprintln!("viewer {id}: the answer was refused: {error}");
                }
            }
        });
        self.webrtcbin
            .emit_by_name::<()>("set-remote-description", &[&answer, &promise]);
        self.state.lock().unwrap().codec = Some(codec);
        let payloader = codec.payloader()?;
        self.add_branch(codec.tee(), &[payloader], &self.video_sink, true)?;
        Ok(())
    }

    pub fn add_ice_candidate(&self, mline: u32, candidate: &str) -> Result<(), String> {
        let medias = self
            .webrtcbin
            .property::<Option<WebRTCSessionDescription>>("local-description")
            .map_or(0, |d| d.sdp().medias_len());
        if mline >= medias {
            return Err(format!("a candidate for media section {mline} of {medias}"));
        }
        if !candidate.is_empty() {
            self.webrtcbin
                .emit_by_name::<()>("add-ice-candidate", &[&mline, &candidate]);
        }
        Ok(())
    }

    /// Whether `object` is one of this viewer's elements or pads.
    pub fn owns(&self, object: &gst::Object) -> bool {
        object.has_as_ancestor(&self.bin) || object == self.bin.upcast_ref::<gst::Object>()
    }

    /// Unhooks the viewer from the tees and shuts its elements down.
    pub fn detach(&self, pipeline: &gst::Pipeline) {
        for (tee, pad) in self.tee_pads.lock().unwrap().drain(..) {
            tee.release_request_pad(&pad);
        }
        let _ = self.bin.set_state(gst::State::Null);
        let _ = pipeline.remove(&self.bin);
    }
}

/// The video codec the answer kept: H.264 when the viewer takes it, else
/// VP8.
fn chosen_video_codec(answer: &gst_sdp::SDPMessageRef) -> Result<VideoCodec, String> {
    let video = answer
        .medias()
        .find(|m| m.media() == Some("video"))
        .ok_or("the answer has no video section")?;
    if video.port() == 0 {
        return Err("the answer rejects the video".into());
    }
    let has = |codec: VideoCodec| {
        video
            .formats()
            .any(|f| f == codec.payload_type().to_string())
    };
    [VideoCodec::H264, VideoCodec::Vp8]
        .into_iter()
        .find(|&c| has(c))
        .ok_or_else(|| "the answer takes neither H264 (96) nor VP8 (97)".to_owned())
}
