// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The translate pads' requests in flight: the servers' room, shared by the
//! element's languages ([`Capacity`]), and a thread per request, whose
//! answer goes back to the pad's thread.

use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::translation::capacity::{Capacity, Slot};
use crate::translation::{Attempt, ChatClient, Error, History, Language, Request};

use super::taps::Item;

/// The element's chat servers and how much each takes at once.
#[derive(Debug)]
pub(in crate::transcriber) struct Servers {
    pub client: ChatClient,
    capacity: Mutex<Capacity>,
    epoch: Instant,
}

impl Servers {
    pub(in crate::transcriber) fn new(client: ChatClient) -> Servers {
        Servers {
            capacity: Mutex::new(Capacity::new(client.servers().len())),
            client,
            epoch: Instant::now(),
        }
    }

    fn now(&self) -> Duration {
        self.epoch.elapsed()
    }

    /// How many requests language `who` may send now; while others are in
    /// line before it, none (it is then in line).
    pub(super) fn room_for(&self, who: usize) -> usize {
        self.capacity.lock().unwrap().room_for(who)
    }

    /// `who` wants no more slots (EOS, flush, stop).
    pub(super) fn leave(&self, who: usize) {
        self.capacity.lock().unwrap().leave(who);
    }

    /// Judges the requests still waiting for their first text.
    pub(super) fn tick(&self) {
        let now = self.now();
        self.capacity.lock().unwrap().tick(now);
    }

    fn settle_failed(&self, slot: Slot) {
        let now = self.now();
        self.capacity.lock().unwrap().done(slot, None, &[], now);
    }

    /// What each server is allowed at once, as learnt so far.
    pub(super) fn limits(&self) -> Vec<usize> {
        self.capacity.lock().unwrap().limits()
    }
}

/// A request's answer, as the pad's thread gets it.
pub(super) struct Answer {
    pub id: u64,
    pub result: Result<String, Error>,
}

/// Sends `request` on a thread of its own, with `history` as its context;
/// its answer goes to `answers`, then `wake` tells the pad's thread.
/// Returns false when `who` has no slot for it.
pub(super) fn send(
    servers: &Arc<Servers>,
    who: usize,
    language: &Language,
    history: History,
    request: &Request,
    answers: &Sender<Answer>,
    wake: &Sender<Item>,
) -> std::io::Result<bool> {
    let Some(slot) = servers.capacity.lock().unwrap().take(who, servers.now()) else {
        return Ok(false);
    };
    let (language, text, id) = (language.clone(), request.text(), request.id);
    let (answers, wake) = (answers.clone(), wake.clone());
    let spawned = std::thread::Builder::new()
        .name("voxtralrt-translate-request".into())
        .spawn({
            let servers = servers.clone();
            move || {
                let first_text = |server| {
                    let now = servers.now();
                    servers
                        .capacity
                        .lock()
                        .unwrap()
                        .first_text(slot, server, now);
                };
                let attempt = servers.client.translate_from(
                    slot.server,
                    &language,
                    &history,
                    &text,
                    first_text,
                );
                let result = settle(&servers, slot, attempt);
                let _ = answers.send(Answer { id, result });
                let _ = wake.send(Item::Answered);
            }
        });
    if let Err(e) = spawned {
        servers.settle_failed(slot);
        return Err(e);
    }
    Ok(true)
}

/// Hands the slot back, telling the servers' capacity what the request
/// found.
fn settle(servers: &Servers, slot: Slot, attempt: Attempt) -> Result<String, Error> {
    let answered = attempt.result.as_ref().ok().map(|t| t.server_index);
    let now = servers.now();
    servers
        .capacity
        .lock()
        .unwrap()
        .done(slot, answered, &attempt.failed, now);
    attempt.result.map(|t| t.text)
}
