// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! When one language's units are sent to translation, and in which order
//! their translations go out.
//!
//! A unit's request goes out as soon as the unit closes, whatever is
//! already in flight, up to a bound of requests at once (and the room the
//! servers have, [`super::capacity`]): no unit waits for another's answer
//! to be sent, so with a server that answers in R the lag stays about R
//! however fast units come, as long as the bound covers R's worth of units.
//! Beyond that, the units waiting when a slot frees go out merged into one
//! request (a catch-up), so the lag stays bounded at any unit rate, and
//! with a server that answers one request at a time too.
//!
//! Translations go out in unit order whatever order their answers come
//! in: an answer waits for the ones before it. A failed request's units
//! go out as failures in their place.
//!
//! `merge` off (not live: a file), every unit is sent alone, one at a
//! time, so each one's context holds every earlier translation and a run
//! gives the same text every time. Nothing here knows about threads or
//! clocks: requests and answers are handed in by the caller.

use std::collections::{BTreeMap, VecDeque};

use super::unit::Unit;

/// How requests are paced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaceLimits {
    /// The most requests of this language in flight at once.
    pub max_requests: usize,
    /// Whether units waiting for a slot go out merged into one request
    /// (live) or one by one (not live).
    pub merge: bool,
}

/// translate-max-requests' default: a server that answers in 3 s keeps
/// pace with units every 0.75 s or more.
pub const DEFAULT_MAX_REQUESTS: usize = 4;

impl Default for PaceLimits {
    fn default() -> Self {
        PaceLimits {
            max_requests: DEFAULT_MAX_REQUESTS,
            merge: true,
        }
    }
}

/// A request to send: one unit, or several (a catch-up) as one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    /// The units it covers, in order.
    pub units: Vec<Unit>,
}

impl Request {
    /// What is sent: the units' text, joined with one space.
    pub fn text(&self) -> String {
        join_text(&self.units)
    }

    /// Whether it merges units that waited (a catch-up).
    pub fn is_catch_up(&self) -> bool {
        self.units.len() > 1
    }

    /// The first unit's start.
    pub fn start_ns(&self) -> u64 {
        self.units.first().map_or(0, |u| u.start_ns)
    }

    /// The last unit's end.
    pub fn end_ns(&self) -> u64 {
        self.units.iter().map(|u| u.end_ns).max().unwrap_or(0)
    }
}

/// What goes out, in unit order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released<E> {
    pub request: Request,
    pub outcome: Result<String, E>,
}

/// One language's units from closing to going out.
#[derive(Debug)]
pub struct Pacer<E> {
    limits: PaceLimits,
    /// Closed units not sent yet, in order.
    waiting: VecDeque<Unit>,
    /// Sent and not answered, by id (ids grow with unit order).
    in_flight: BTreeMap<u64, Request>,
    /// Answered, waiting for the requests before them.
    answered: BTreeMap<u64, Released<E>>,
    next_id: u64,
    catch_ups: u64,
}

impl<E> Pacer<E> {
    pub fn new(limits: PaceLimits) -> Pacer<E> {
        let mut pacer = Pacer {
            limits,
            waiting: VecDeque::new(),
            in_flight: BTreeMap::new(),
            answered: BTreeMap::new(),
            next_id: 0,
            catch_ups: 0,
        };
        pacer.set_limits(limits);
        pacer
    }

    /// Changes the limits (from the next request on).
    pub fn set_limits(&mut self, limits: PaceLimits) {
        self.limits = PaceLimits {
            max_requests: limits.max_requests.max(1),
            ..limits
        };
    }

    /// A unit closed: it is sent at the next [`Pacer::requests`] that has
    /// room for it.
    pub fn close(&mut self, unit: Unit) {
        self.waiting.push_back(unit);
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// How many more requests this language may send now.
    pub fn room(&self) -> usize {
        let most = if self.limits.merge {
            self.limits.max_requests
        } else {
            1
        };
        most.saturating_sub(self.in_flight.len())
    }

    /// Units closed and not sent yet.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// How many requests merged units that waited.
    pub fn catch_ups(&self) -> u64 {
        self.catch_ups
    }

    /// The requests to send now, given that the servers take at most
    /// `servers_room` more. With room for every waiting unit each goes
    /// alone; with less (live), the waiting units go out merged into as
    /// many requests as there is room for, a speaker's words never merged
    /// with another's.
    pub fn requests(&mut self, servers_room: usize) -> Vec<Request> {
        let room = self.room().min(servers_room);
        if room == 0 || self.waiting.is_empty() {
            return Vec::new();
        }
        let groups = if self.waiting.len() <= room || !self.limits.merge {
            self.waiting
                .drain(..room.min(self.waiting.len()))
                .map(|u| vec![u])
                .collect()
        } else {
            self.merged_groups(room)
        };
        groups.into_iter().map(|units| self.send(units)).collect()
    }

    /// The waiting units in at most `room` groups of one speaker each, in
    /// order; runs of speakers past the room wait.
    fn merged_groups(&mut self, room: usize) -> Vec<Vec<Unit>> {
        let runs = speaker_runs(self.waiting.drain(..).collect());
        let (sent, kept): (Vec<_>, Vec<_>) =
            runs.into_iter().enumerate().partition(|(k, _)| *k < room);
        self.waiting = kept.into_iter().flat_map(|(_, run)| run).collect();
        let sent: Vec<Vec<Unit>> = sent.into_iter().map(|(_, run)| run).collect();
        // Spread the room over the speakers' runs when there is more of it
        // than runs: the longest run is split until the room is used.
        split_to_fill(sent, room)
    }

    fn send(&mut self, units: Vec<Unit>) -> Request {
        let request = Request {
            id: self.next_id,
            units,
        };
        self.next_id += 1;
        if request.is_catch_up() {
            self.catch_ups += 1;
        }
        self.in_flight.insert(request.id, request.clone());
        request
    }

    /// The answer to request `id`; an id not in flight (sent before a
    /// flush) is ignored.
    pub fn answer(&mut self, id: u64, outcome: Result<String, E>) {
        if let Some(request) = self.in_flight.remove(&id) {
            self.answered.insert(id, Released { request, outcome });
        }
    }

    /// What may go out now: the answered requests that no earlier request
    /// is still waiting for, in order.
    pub fn release(&mut self) -> Vec<Released<E>> {
        let first_in_flight = self.in_flight.keys().next().copied();
        let mut out = Vec::new();
        while let Some(entry) = self.answered.first_entry() {
            if first_in_flight.is_some_and(|f| f < *entry.key()) {
                break;
            }
            out.push(entry.remove());
        }
        out
    }

    /// Where the first unit that has not gone out starts: nothing after
    /// it may be declared silent yet.
    pub fn holds_from(&self) -> Option<u64> {
        let in_flight = self.in_flight.values().next().map(Request::start_ns);
        let answered = self.answered.values().next().map(|r| r.request.start_ns());
        let waiting = self.waiting.front().map(|u| u.start_ns);
        [in_flight, answered, waiting].into_iter().flatten().min()
    }

    /// Nothing waits, is in flight or is held back.
    pub fn is_idle(&self) -> bool {
        self.waiting.is_empty() && self.in_flight.is_empty() && self.answered.is_empty()
    }

    /// Forgets every unit (a flush); answers to requests sent before are
    /// ignored.
    pub fn clear(&mut self) {
        self.waiting.clear();
        self.in_flight.clear();
        self.answered.clear();
    }
}

/// Units joined into one request's text.
fn join_text(units: &[Unit]) -> String {
    units
        .iter()
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Consecutive units of one speaker together.
fn speaker_runs(units: Vec<Unit>) -> Vec<Vec<Unit>> {
    let mut runs: Vec<Vec<Unit>> = Vec::new();
    for unit in units {
        match runs.last_mut() {
            Some(run) if run[0].speaker == unit.speaker => run.push(unit),
            _ => runs.push(vec![unit]),
        }
    }
    runs
}

/// Splits the longest group in two until there are `room` groups or every
/// group is one unit.
fn split_to_fill(mut groups: Vec<Vec<Unit>>, room: usize) -> Vec<Vec<Unit>> {
    while groups.len() < room {
        let Some((k, _)) = groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.len() > 1)
            .max_by_key(|(_, g)| g.len())
        else {
            break;
        };
        let half = groups[k].len().div_ceil(2);
        let tail = groups[k].split_off(half);
        groups.insert(k + 1, tail);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(k: u64) -> Unit {
        Unit {
            text: format!("u{k}"),
            start_ns: k * 1_000,
            end_ns: k * 1_000 + 500,
            speaker: None,
            words: 1,
        }
    }

    fn by(k: u64, speaker: &str) -> Unit {
        Unit {
            speaker: Some(speaker.to_owned()),
            ..unit(k)
        }
    }

    fn texts(requests: &[Request]) -> Vec<String> {
        requests.iter().map(Request::text).collect()
    }

    fn live(max_requests: usize) -> Pacer<&'static str> {
        Pacer::new(PaceLimits {
            max_requests,
            merge: true,
        })
    }

    #[test]
    fn each_unit_goes_out_when_it_closes_whatever_is_in_flight() {
        let mut p = live(4);
        for k in 0..3 {
            p.close(unit(k));
            assert_eq!(texts(&p.requests(usize::MAX)), [format!("u{k}")]);
        }
        assert_eq!(p.in_flight(), 3);
        assert_eq!(p.catch_ups(), 0);
    }

    #[test]
    fn at_the_bound_units_wait_and_go_out_merged_when_a_slot_frees() {
        let mut p = live(2);
        p.close(unit(0));
        p.close(unit(1));
        let first = p.requests(usize::MAX);
        assert_eq!(texts(&first), ["u0", "u1"]);
        for k in 2..5 {
            p.close(unit(k));
            assert!(p.requests(usize::MAX).is_empty());
        }
        assert_eq!(p.waiting(), 3);
        p.answer(first[0].id, Ok("t0".into()));
        let catch_up = p.requests(usize::MAX);
        assert_eq!(texts(&catch_up), ["u2 u3 u4"]);
        assert!(catch_up[0].is_catch_up());
        assert_eq!(
            (catch_up[0].start_ns(), catch_up[0].end_ns()),
            (2_000, 4_500)
        );
        assert_eq!(p.catch_ups(), 1);
    }

    #[test]
    fn the_servers_room_limits_what_is_sent() {
        let mut p = live(4);
        for k in 0..3 {
            p.close(unit(k));
        }
        assert!(p.requests(0).is_empty());
        // Room for one: the three go out as one catch-up.
        assert_eq!(texts(&p.requests(1)), ["u0 u1 u2"]);
    }

    #[test]
    fn room_for_two_splits_the_waiting_units_in_order() {
        let mut p = live(4);
        for k in 0..5 {
            p.close(unit(k));
        }
        assert_eq!(texts(&p.requests(2)), ["u0 u1 u2", "u3 u4"]);
    }

    #[test]
    fn a_speakers_words_are_never_merged_with_anothers() {
        let mut p = live(4);
        for (k, who) in [(0, "A"), (1, "A"), (2, "B"), (3, "A")] {
            p.close(by(k, who));
        }
        assert_eq!(texts(&p.requests(2)), ["u0 u1", "u2"]);
        assert_eq!(p.waiting(), 1);
        assert_eq!(texts(&p.requests(1)), ["u3"]);
    }

    #[test]
    fn translations_go_out_in_unit_order_whatever_order_answers_come_in() {
        let mut p = live(4);
        for k in 0..3 {
            p.close(unit(k));
        }
        let sent = p.requests(usize::MAX);
        p.answer(sent[2].id, Ok("t2".into()));
        assert!(p.release().is_empty());
        p.answer(sent[1].id, Err("server down"));
        assert!(p.release().is_empty());
        assert_eq!(p.holds_from(), Some(0));
        p.answer(sent[0].id, Ok("t0".into()));
        let out: Vec<_> = p.release().into_iter().map(|r| r.outcome).collect();
        assert_eq!(out, [Ok("t0".into()), Err("server down"), Ok("t2".into())]);
        assert!(p.is_idle());
        assert_eq!(p.holds_from(), None);
    }

    #[test]
    fn not_live_units_go_one_at_a_time_and_never_merged() {
        let mut p: Pacer<()> = Pacer::new(PaceLimits {
            max_requests: 4,
            merge: false,
        });
        for k in 0..3 {
            p.close(unit(k));
        }
        let mut sent = Vec::new();
        while !p.is_idle() {
            let requests = p.requests(usize::MAX);
            assert_eq!(requests.len(), 1, "one at a time");
            assert!(p.requests(usize::MAX).is_empty());
            p.answer(requests[0].id, Ok(String::new()));
            p.release();
            sent.extend(texts(&requests));
        }
        assert_eq!(sent, ["u0", "u1", "u2"]);
        assert_eq!(p.catch_ups(), 0);
    }

    #[test]
    fn answers_from_before_a_flush_are_ignored() {
        let mut p = live(4);
        p.close(unit(0));
        let old = p.requests(usize::MAX);
        p.clear();
        p.close(unit(1));
        let new = p.requests(usize::MAX);
        p.answer(old[0].id, Ok("stale".into()));
        assert!(p.release().is_empty());
        p.answer(new[0].id, Ok("t1".into()));
        assert_eq!(p.release()[0].outcome, Ok("t1".into()));
    }

    #[test]
    fn the_hold_starts_at_the_first_unit_not_out() {
        let mut p = live(1);
        p.close(unit(3));
        assert_eq!(p.holds_from(), Some(3_000));
        let sent = p.requests(usize::MAX);
        p.close(unit(4));
        assert_eq!(p.holds_from(), Some(3_000));
        p.answer(sent[0].id, Ok("t".into()));
        p.release();
        assert_eq!(p.holds_from(), Some(4_000));
    }

    /// The lag a live pad's units see, on a simulated clock: units every
    /// `every` ms, a server of `slots` answering each request in `r` ms
    /// after it gets a slot (first come, first served). The largest time
    /// from a unit's close to its translation going out.
    fn worst_lag(every: u64, r: u64, slots: usize, max_requests: usize, units: u64) -> u64 {
        let mut p = live(max_requests);
        // Per request in the server: (id, when it is answered).
        let mut serving: Vec<(u64, u64)> = Vec::new();
        let mut queued: VecDeque<u64> = VecDeque::new();
        let mut closed_at = BTreeMap::new();
        let mut worst = 0;
        let mut released = 0;
        let mut t = 0;
        while released < units {
            if t % every == 0 && t / every < units {
                let k = t / every;
                closed_at.insert(k * 1_000, t);
                p.close(unit(k));
            }
            serving.retain(|&(id, done)| {
                if done == t {
                    p.answer(id, Ok(String::new()));
                    false
                } else {
                    true
                }
            });
            for request in p.requests(usize::MAX) {
                queued.push_back(request.id);
            }
            while serving.len() < slots {
                let Some(id) = queued.pop_front() else { break };
                serving.push((id, t + r));
            }
            for out in p.release() {
                for u in &out.request.units {
                    worst = worst.max(t - closed_at[&u.start_ns]);
                    released += 1;
                }
            }
            t += 1;
        }
        worst
    }

    #[test]
    fn with_enough_slots_each_unit_waits_only_for_its_own_answer() {
        // 3 s answers, a unit every 1.25 s, 4 slots: about R, not R per
        // unit before it.
        assert_eq!(worst_lag(1_250, 3_000, 4, 4, 240), 3_000);
    }

    #[test]
    fn a_one_slot_server_with_one_request_allowed_stays_within_two_answers() {
        // The capacity learned (one) as the bound: merging keeps the lag
        // under 2 R over 240 units (5 minutes).
        let lag = worst_lag(1_250, 3_000, 1, 1, 240);
        assert!(lag <= 2 * 3_000, "{lag}");
    }

    #[test]
    fn the_bound_keeps_the_lag_bounded_on_a_one_slot_server() {
        // Sent beyond what the server runs at once, requests queue inside
        // it: the bound caps that queue, so the lag is bounded (here by
        // bound + 1 answers), not growing with the units.
        let short = worst_lag(1_000, 3_000, 1, 4, 60);
        let long = worst_lag(1_000, 3_000, 1, 4, 300);
        assert_eq!(short, long);
        assert!(long <= 5 * 3_000, "{long}");
    }
}
