// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! How many requests each chat server of `translate-url` answers side by
//! side, learnt from its answers, and which server the next request goes
//! to: the one with the most room, in turn, so that two servers answer
//! twice the units.
//!
//! Servers differ: vLLM batches any number of requests, llama.cpp's
//! `llama-server` has a few slots, llama-cpp-python and an Ollama with one
//! parallel request answer one at a time and queue the rest. A request
//! sent to a full server waits inside it for another's whole answer before
//! its first text comes; held back and merged with the units that wait
//! meanwhile (see [`super::pacing`]) it would go out no later and carry
//! more. So each server's limit starts at one request and grows by one
//! each time a request at the limit gets its first text as fast as ever;
//! a request whose first text is later than the fastest by half the
//! quickest whole answer (or that is still waiting for it by then) waited
//! for another, and the limit falls to the number that ran beside it. A
//! limit found too high is not tried again for a while.
//!
//! The languages of one element share the servers: a request waits for a
//! slot in the order the languages asked for one. A server that failed
//! rests a few seconds: requests go to the others first. Pure: times come
//! from the caller's clock.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

/// The most requests one server is given at once, however well it does.
pub const MAX_PER_SERVER: usize = 16;
/// How many judged requests a limit found too high is not tried again for.
const CEILING_JUDGED: u32 = 32;
/// How many recent requests the fastest first text and the quickest
/// answer are taken over.
const RECENT: usize = 32;
/// How long a server that failed is asked after the others.
pub const REST: Duration = Duration::from_secs(5);
/// A first text later than the fastest by this much is queueing, however
/// quick the answers.
const QUEUE_FLOOR: Duration = Duration::from_millis(150);

/// A request's slot on a server; hand it back with [`Capacity::done`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub id: u64,
    pub server: usize,
}

/// A request in flight, as the capacity follows it.
#[derive(Debug, Clone, Copy)]
struct Flight {
    server: usize,
    /// Requests already on that server when this one was sent.
    beside: usize,
    sent_at: Duration,
    /// Whether it told yet whether it queued.
    judged: bool,
}

#[derive(Debug, Clone)]
struct Server {
    limit: usize,
    in_flight: usize,
    /// A limit that made requests queue, and for how many more judged
    /// requests it is not tried again.
    ceiling: Option<(usize, u32)>,
    /// The latest first-text and whole-answer times.
    firsts: VecDeque<Duration>,
    totals: VecDeque<Duration>,
    /// Failed at this time: rests until REST after it.
    failed_at: Option<Duration>,
}

impl Server {
    fn new() -> Server {
        Server {
            limit: 1,
            in_flight: 0,
            ceiling: None,
            firsts: VecDeque::new(),
            totals: VecDeque::new(),
            failed_at: None,
        }
    }

    fn room(&self) -> usize {
        self.limit.saturating_sub(self.in_flight)
    }

    fn resting(&self, now: Duration) -> bool {
        self.failed_at.is_some_and(|at| now < at + REST)
    }

    /// How late a first text may come without having queued; None before
    /// any first text came.
    fn latest_unqueued(&self) -> Option<Duration> {
        let fastest = *self.firsts.iter().min()?;
        let margin = self
            .totals
            .iter()
            .min()
            .map_or(fastest, |quickest| *quickest / 2);
        Some(fastest + margin.max(QUEUE_FLOOR))
    }

    /// A request that ran beside `beside` others queued: the server takes
    /// no more than that at once.
    fn queued(&mut self, beside: usize) {
        self.limit = self.limit.min(beside).max(1);
        self.ceiling = Some((self.limit + 1, CEILING_JUDGED));
    }

    /// A request at the limit got its first text without queueing: one
    /// more may go side by side, unless that was found too many lately.
    fn did_not_queue(&mut self, beside: usize) {
        let next = self.limit + 1;
        let allowed =
            next <= MAX_PER_SERVER && self.ceiling.is_none_or(|(ceiling, _)| next < ceiling);
        if beside + 1 >= self.limit && allowed {
            self.limit = next;
        }
    }

    fn judged(&mut self) {
        if let Some((ceiling, left)) = self.ceiling {
            self.ceiling = (left > 1).then_some((ceiling, left - 1));
        }
    }
}

fn push_recent(list: &mut VecDeque<Duration>, value: Duration) {
    if list.len() == RECENT {
        list.pop_front();
    }
    list.push_back(value);
}

/// The servers of one element, shared by its languages.
#[derive(Debug, Clone)]
pub struct Capacity {
    servers: Vec<Server>,
    flights: HashMap<u64, Flight>,
    next_id: u64,
    /// Where the rotation stands.
    next: usize,
    /// Languages waiting for a slot, first come first served.
    queue: VecDeque<usize>,
}

impl Capacity {
    pub fn new(servers: usize) -> Capacity {
        Capacity {
            servers: (0..servers.max(1)).map(|_| Server::new()).collect(),
            flights: HashMap::new(),
            next_id: 0,
            next: 0,
            queue: VecDeque::new(),
        }
    }

    /// How many requests the servers take now, together.
    pub fn room(&self) -> usize {
        self.servers.iter().map(Server::room).sum()
    }

    /// What each server is allowed at once now.
    pub fn limits(&self) -> Vec<usize> {
        self.servers.iter().map(|s| s.limit).collect()
    }

    /// How many requests language `who` may send now: none while others
    /// are in line before it (it is then in line too).
    pub fn room_for(&mut self, who: usize) -> usize {
        let first_in_line = self.queue.front().is_none_or(|&w| w == who);
        let room = if first_in_line { self.room() } else { 0 };
        if room == 0 && !self.queue.contains(&who) {
            self.queue.push_back(who);
        }
        room
    }

    /// A slot for one request of language `who`, or None: then `who` is
    /// in line, and the slots that free go to those before it first.
    pub fn take(&mut self, who: usize, now: Duration) -> Option<Slot> {
        let first_in_line = self.queue.front().is_none_or(|&w| w == who);
        let server = self.choose(now).filter(|_| first_in_line);
        let Some(server) = server else {
            if !self.queue.contains(&who) {
                self.queue.push_back(who);
            }
            return None;
        };
        if self.queue.front() == Some(&who) {
            self.queue.pop_front();
        }
        let s = &mut self.servers[server];
        let flight = Flight {
            server,
            beside: s.in_flight,
            sent_at: now,
            judged: false,
        };
        s.in_flight += 1;
        self.next = (server + 1) % self.servers.len();
        let id = self.next_id;
        self.next_id += 1;
        self.flights.insert(id, flight);
        Some(Slot { id, server })
    }

    /// The server with the most room, resting ones last, from the
    /// rotation's place on ties.
    fn choose(&self, now: Duration) -> Option<usize> {
        let n = self.servers.len();
        (0..n)
            .filter(|&s| self.servers[s].room() > 0)
            .max_by_key(|&s| {
                let server = &self.servers[s];
                // Of equals max_by_key keeps the last: rank the places
                // nearest the rotation's highest.
                let place = n - (s + n - self.next) % n;
                (!server.resting(now), server.room(), place)
            })
    }

    /// `who` wants no slot any more (its stream ended or was flushed).
    pub fn leave(&mut self, who: usize) {
        self.queue.retain(|&w| w != who);
    }

    /// The first text of `slot`'s answer came from `server` at `now`.
    pub fn first_text(&mut self, slot: Slot, server: usize, now: Duration) {
        let Some(flight) = self.flights.get_mut(&slot.id) else {
            return;
        };
        // Only the server the slot was on tells about itself.
        if server != flight.server {
            return;
        }
        let first = now.saturating_sub(flight.sent_at);
        let (judged, beside) = (std::mem::replace(&mut flight.judged, true), flight.beside);
        let s = &mut self.servers[server];
        if !judged {
            let late = s.latest_unqueued().is_some_and(|latest| first > latest);
            if beside > 0 && late {
                s.queued(beside);
            } else {
                s.did_not_queue(beside);
            }
            s.judged();
        }
        push_recent(&mut s.firsts, first);
    }

    /// Judges the requests still waiting for their first text at `now`: one
    /// that waits longer than a first text that did not queue has queued.
    pub fn tick(&mut self, now: Duration) {
        for flight in self.flights.values_mut() {
            let s = &mut self.servers[flight.server];
            let overdue = s
                .latest_unqueued()
                .is_some_and(|latest| now.saturating_sub(flight.sent_at) > latest);
            if !flight.judged && flight.beside > 0 && overdue {
                flight.judged = true;
                s.queued(flight.beside);
                s.judged();
            }
        }
    }

    /// The request of `slot` is over at `now`: answered by `answered`
    /// (whose first text was reported, or is now), or failed. `failed`
    /// names the servers that failed it on the way, which rest.
    pub fn done(&mut self, slot: Slot, answered: Option<usize>, failed: &[usize], now: Duration) {
        for &server in failed {
            if let Some(s) = self.servers.get_mut(server) {
                s.failed_at = Some(now);
            }
        }
        if let Some(server) = answered {
            self.first_text(slot, server, now);
        }
        let Some(flight) = self.flights.remove(&slot.id) else {
            return;
        };
        let s = &mut self.servers[flight.server];
        s.in_flight = s.in_flight.saturating_sub(1);
        if answered == Some(flight.server) {
            s.failed_at = None;
            push_recent(&mut s.totals, now.saturating_sub(flight.sent_at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Sends a request at `at` on one server, its first text after `first`
    /// and its answer after `total`.
    fn answered(c: &mut Capacity, at: f64, first: f64, total: f64) {
        let slot = c.take(0, secs(at)).unwrap();
        c.first_text(slot, slot.server, secs(at + first));
        c.done(slot, Some(slot.server), &[], secs(at + total));
    }

    #[test]
    fn a_server_starts_at_one_request_and_grows_while_first_texts_come_fast() {
        let mut c = Capacity::new(1);
        let a = c.take(0, secs(0.0)).unwrap();
        assert!(c.take(0, secs(0.0)).is_none(), "one at first");
        c.first_text(a, 0, secs(0.3));
        assert_eq!(
            c.limits(),
            [2],
            "grows on the first text, not the answer's end"
        );
        let b = c.take(0, secs(1.0)).unwrap();
        c.first_text(b, 0, secs(1.3));
        assert_eq!(c.limits(), [3]);
        c.done(a, Some(0), &[], secs(3.0));
        c.done(b, Some(0), &[], secs(4.0));
        assert_eq!(c.room(), 3);
    }

    #[test]
    fn a_late_first_text_is_queueing_and_brings_the_limit_down() {
        let mut c = Capacity::new(1);
        answered(&mut c, 0.0, 3.0, 3.0);
        assert_eq!(c.limits(), [2]);
        let a = c.take(0, secs(10.0)).unwrap();
        let b = c.take(0, secs(10.0)).unwrap();
        c.first_text(a, 0, secs(13.0));
        c.done(a, Some(0), &[], secs(13.0));
        // b waited for a: its first text came a whole answer later.
        c.first_text(b, 0, secs(16.0));
        c.done(b, Some(0), &[], secs(16.0));
        assert_eq!(c.limits(), [1]);
        // Nor is two tried again soon.
        for k in 0..10 {
            answered(&mut c, 20.0 + 4.0 * f64::from(k), 3.0, 3.0);
        }
        assert_eq!(c.limits(), [1]);
    }

    #[test]
    fn a_request_still_waiting_for_its_first_text_is_judged_queued_on_a_tick() {
        let mut c = Capacity::new(1);
        answered(&mut c, 0.0, 0.2, 3.0);
        let a = c.take(0, secs(10.0)).unwrap();
        c.first_text(a, 0, secs(10.2));
        let b = c.take(0, secs(11.0)).unwrap();
        c.tick(secs(11.5));
        assert_eq!(c.limits(), [2], "within 0.2 s and half an answer: not yet");
        c.tick(secs(12.8));
        assert_eq!(c.limits(), [1], "b waits for a");
        c.first_text(b, 0, secs(13.2));
        assert_eq!(c.limits(), [1], "judged once");
        c.done(a, Some(0), &[], secs(13.0));
        c.done(b, Some(0), &[], secs(16.0));
        assert_eq!(c.room(), 1);
    }

    #[test]
    fn long_streamed_answers_are_not_queueing_when_their_first_text_is_prompt() {
        let mut c = Capacity::new(1);
        answered(&mut c, 0.0, 0.05, 1.0);
        let a = c.take(0, secs(2.0)).unwrap();
        let b = c.take(0, secs(2.0)).unwrap();
        // A long (merged) answer beside another, both starting at once.
        c.first_text(a, 0, secs(2.06));
        c.first_text(b, 0, secs(2.07));
        c.done(a, Some(0), &[], secs(3.0));
        c.done(b, Some(0), &[], secs(5.0));
        assert_eq!(c.limits(), [3], "b, beside a at the limit, did not queue");
    }

    #[test]
    fn two_servers_share_the_requests_in_turn() {
        let mut c = Capacity::new(2);
        let a = c.take(0, secs(0.0)).unwrap();
        let b = c.take(0, secs(0.0)).unwrap();
        assert_eq!((a.server, b.server), (0, 1));
        assert!(c.take(0, secs(0.0)).is_none());
        c.done(b, Some(1), &[], secs(1.0));
        c.done(a, Some(0), &[], secs(1.0));
        assert_eq!(c.room(), 4);
        let servers: Vec<usize> = (0..4)
            .map(|_| c.take(0, secs(1.0)).unwrap().server)
            .collect();
        assert_eq!(servers.iter().filter(|&&s| s == 0).count(), 2);
        assert_eq!(servers.iter().filter(|&&s| s == 1).count(), 2);
    }

    #[test]
    fn a_server_that_failed_rests_while_another_has_room() {
        let mut c = Capacity::new(2);
        let a = c.take(0, secs(0.0)).unwrap();
        assert_eq!(a.server, 0);
        c.done(a, None, &[0], secs(10.0));
        let b = c.take(0, secs(11.0)).unwrap();
        assert_eq!(b.server, 1);
        c.done(b, Some(1), &[], secs(11.0));
        assert_eq!(c.take(0, secs(12.0)).unwrap().server, 1, "0 still rests");
        // After its rest it is asked again (1 is full now).
        assert_eq!(c.take(0, secs(16.0)).unwrap().server, 0);
    }

    #[test]
    fn an_answer_from_another_server_teaches_nothing_about_the_slots() {
        let mut c = Capacity::new(2);
        let a = c.take(0, secs(0.0)).unwrap();
        c.done(a, Some(1), &[0], secs(1.0));
        assert_eq!(c.limits(), [1, 1]);
        assert_eq!(c.room(), 2);
    }

    #[test]
    fn slots_go_to_the_languages_in_the_order_they_asked() {
        let mut c = Capacity::new(1);
        let a = c.take(0, secs(0.0)).unwrap();
        assert!(c.take(1, secs(0.0)).is_none(), "1 is in line");
        c.done(a, None, &[], secs(0.0));
        assert!(c.take(0, secs(0.0)).is_none(), "0 came after 1");
        assert!(c.take(1, secs(0.0)).is_some());
        c.leave(0);
        assert!(c.queue.is_empty());
    }

    #[test]
    fn a_language_in_line_behind_another_has_no_room() {
        let mut c = Capacity::new(1);
        let a = c.take(0, secs(0.0)).unwrap();
        assert_eq!(c.room_for(1), 0);
        c.done(a, Some(0), &[], secs(1.0));
        assert_eq!(c.room_for(0), 0, "1 asked first");
        assert_eq!(c.room_for(1), 2);
        c.take(1, secs(1.0)).unwrap();
        assert_eq!(c.room_for(0), 1);
    }
}
