// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The signalling WebSocket: one connection per viewer, JSON messages.
//!
//! Server to viewer: `{"type":"offer","session":N,"sdp":...,"iceServers":[...]}`,
//! then `{"type":"ice","session":N,"candidate":...,"sdpMLineIndex":M}` for
//! each local candidate. Viewer to server: `{"type":"answer","session":N,
//! "sdp":...}` and trickled `{"type":"ice",...}`. Anything else (bad JSON,
//! another type, another session's number, an answer that does not fit the
//! offer) is logged and ignored.
//!
//! Everything the server says is said before it first reads: the offer is
//! sent once ICE gathering is complete, with every candidate. The
//! connection tiny_http hands over after the upgrade is one object that
//! can neither be split nor given a read timeout, so a thread blocked in
//! `read` could not also write; a sender that says all it has up front
//! needs neither. Host candidates gather in milliseconds; with STUN/TURN
//! configured the offer waits for them, at most `GATHERING_TIMEOUT`.

use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::protocol::Role;
use tungstenite::{Message, WebSocket};

use crate::media::Media;
use crate::viewer::Viewer;

const GATHERING_TIMEOUT: Duration = Duration::from_secs(10);

/// What a viewer's peer has to tell the other side.
pub enum Outgoing {
    Offer { sdp: String },
    Ice { mline: u32, candidate: String },
}

type Socket = WebSocket<Box<dyn tiny_http::ReadWrite + Send>>;

/// Whether `request` asks for the signalling WebSocket.
pub fn is_upgrade(request: &tiny_http::Request) -> bool {
    request
        .headers()
        .iter()
        .any(|h| h.field.equiv("Upgrade") && h.value.as_str().eq_ignore_ascii_case("websocket"))
}

/// Completes the WebSocket handshake on `request` and serves one viewer
/// until it leaves; returns when the connection closes.
pub fn serve(request: tiny_http::Request, media: Arc<Media>) {
    let Some(key) = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Sec-WebSocket-Key"))
        .map(|h| h.value.as_str().to_owned())
    else {
        let _ = request.respond(tiny_http::Response::empty(400));
        return;
    };
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let response = tiny_http::Response::empty(101).with_header(
        tiny_http::Header::from_bytes("Sec-WebSocket-Accept", accept)
            .expect("the accept key is a valid header value"),
    );
    let stream = request.upgrade("websocket", response);
    let mut socket = WebSocket::from_raw_socket(stream, Role::Server, None);

    let (outgoing, said) = channel();
    let viewer = match media.add_viewer(outgoing) {
        Ok(viewer) => viewer,
        Err(e) => {
            eprintln!("a viewer could not be set up: {e}");
            let _ = socket.send(Message::text(
                json!({"type": "error", "reason": e}).to_string(),
            ));
            return;
        }
    };
    println!(
        "viewer {}: signalling connected ({} watching)",
        viewer.id,
        media.viewer_count()
    );
    if let Err(e) = send_offer(&mut socket, &said, &viewer, &media) {
        eprintln!("viewer {}: could not send the offer: {e}", viewer.id);
    } else {
        read_until_closed(&mut socket, &viewer);
    }
    media.remove_viewer(viewer.id);
}

/// Waits for the offer with all candidates gathered (or what there is
/// after `GATHERING_TIMEOUT`) and sends it, then the candidates again as
/// trickle messages for peers that look only there.
fn send_offer(
    socket: &mut Socket,
    said: &Receiver<Outgoing>,
    viewer: &Arc<Viewer>,
    media: &Media,
) -> Result<(), String> {
    let deadline = Instant::now() + GATHERING_TIMEOUT;
    let mut candidates = Vec::new();
    let sdp = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match said.recv_timeout(left) {
            Ok(Outgoing::Offer { sdp }) => break sdp,
            Ok(Outgoing::Ice { mline, candidate }) => candidates.push((mline, candidate)),
            Err(_) => {
                eprintln!(
                    "viewer {}: ICE gathering not complete after {GATHERING_TIMEOUT:?}; offering what there is",
                    viewer.id
                );
                viewer.send_offer();
                match said.recv_timeout(Duration::from_secs(1)) {
                    Ok(Outgoing::Offer { sdp }) => break sdp,
                    _ => return Err("webrtcbin has no local description".into()),
                }
            }
        }
    };
    while let Ok(Outgoing::Ice { mline, candidate }) = said.try_recv() {
        candidates.push((mline, candidate));
    }
    let session = viewer.id;
    let offer = json!({
        "type": "offer",
        "session": session,
        "sdp": sdp,
        "iceServers": ice_servers(&media.config),
    });
    send(socket, offer)?;
    for (mline, candidate) in candidates {
        send(
            socket,
            json!({"type": "ice", "session": session, "candidate": candidate, "sdpMLineIndex": mline}),
        )?;
    }
    Ok(())
}

fn send(socket: &mut Socket, value: Value) -> Result<(), String> {
    socket
        .send(Message::text(value.to_string()))
        .map_err(|e| e.to_string())
}

/// Applies the viewer's messages until the connection closes.
fn read_until_closed(socket: &mut Socket, viewer: &Arc<Viewer>) {
    loop {
        match socket.read() {
            Ok(Message::Text(text)) => {
                if let Err(reason) = handle(viewer, text.as_str()) {
                    eprintln!(
                        "viewer {}: ignored a signalling message ({reason}): {}",
                        viewer.id,
                        shorten(text.as_str())
                    );
                }
            }
            Ok(Message::Binary(_)) => {
                eprintln!("viewer {}: ignored a binary signalling message", viewer.id)
            }
            Ok(Message::Close(_)) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

/// Applies one message from the viewer, or says why it cannot.
fn handle(viewer: &Arc<Viewer>, text: &str) -> Result<(), String> {
    let message: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let kind = message
        .get("type")
        .and_then(Value::as_str)
        .ok_or("no \"type\"")?;
    if !matches!(kind, "answer" | "ice") {
        return Err(format!("unknown type {kind:?}"));
    }
    match message.get("session").and_then(Value::as_u64) {
        Some(session) if session == viewer.id => {}
        Some(session) => return Err(format!("for session {session}, not this one")),
        None => return Err("no \"session\"".into()),
    }
    if kind == "answer" {
        let sdp = message
            .get("sdp")
            .and_then(Value::as_str)
            .ok_or("an answer without \"sdp\"")?;
        return viewer.apply_answer(sdp);
    }
    let candidate = message
        .get("candidate")
        .and_then(Value::as_str)
        .ok_or("a candidate without \"candidate\"")?;
    let mline = message
        .get("sdpMLineIndex")
        .and_then(Value::as_u64)
        .and_then(|m| u32::try_from(m).ok())
        .ok_or("a candidate without \"sdpMLineIndex\"")?;
    viewer.add_ice_candidate(mline, candidate)
}

fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(80).collect();
    if short.len() < text.len() {
        short.push_str("...");
    }
    short
}

/// The configured STUN/TURN servers as RTCIceServer entries for the page.
fn ice_servers(config: &crate::media::Config) -> Value {
    let mut servers = Vec::new();
    if let Some(stun) = &config.stun {
        servers.push(json!({"urls": format!("stun:{}", strip_scheme(stun))}));
    }
    if let Some(turn) = &config.turn {
        let scheme = if turn.starts_with("turns://") {
            "turns"
        } else {
            "turn"
        };
        let rest = strip_scheme(turn);
        let (credentials, host) = rest.rsplit_once('@').unwrap_or(("", rest));
        let (user, password) = credentials.split_once(':').unwrap_or((credentials, ""));
        servers.push(json!({
            "urls": format!("{scheme}:{host}"),
            "username": user,
            "credential": password,
        }));
    }
    Value::Array(servers)
}

fn strip_scheme(uri: &str) -> &str {
    uri.split_once("://").map_or(uri, |(_, rest)| rest)
}
