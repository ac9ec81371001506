// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Several servers behind one `url` (a comma-separated list): the list
//! checked, the order a connection tries them in, and what each element of
//! the process has learnt of their health.
//!
//! A new recognizer starts at the next server of a process-wide rotation
//! whose first pick is random per process, so that the streams of several
//! elements, and of several processes, spread over the list; or, in order,
//! at the first. A server that
//! failed is tried last until its rest is over (5 s, doubling with each
//! failure in a row up to 60 s); a connection that succeeds ends its rest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::socket::{check_url, Endpoint};
use super::Error;

const FIRST_REST: Duration = Duration::from_secs(5);
const LONGEST_REST: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy)]
struct Health {
    failures_in_a_row: u32,
    rests_until: Instant,
}

/// What every recognizer of the process knows of each server, by URL.
fn health() -> &'static Mutex<HashMap<String, Health>> {
    static HEALTH: OnceLock<Mutex<HashMap<String, Health>>> = OnceLock::new();
    HEALTH.get_or_init(Default::default)
}

/// The process-wide rotation: where the next recognizer starts.
fn next_pick() -> usize {
    static NEXT: OnceLock<AtomicUsize> = OnceLock::new();
    NEXT.get_or_init(|| {
        // Random enough to spread processes started together.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos() as usize);
        AtomicUsize::new(nanos ^ std::process::id() as usize)
    })
    .fetch_add(1, Ordering::Relaxed)
}

/// The servers of one element, in the order `url` lists them.
#[derive(Debug, Clone)]
pub struct Rack {
    urls: Vec<String>,
    /// Where this recognizer's rotation starts.
    first: usize,
}

impl Rack {
    /// Checks `list` (one URL, or several separated by commas) before
    /// anything is sent.
    /// `spread`: this recognizer starts at the rotation's next server,
    /// else at the first.
    pub fn from_list(list: &str, with_key: bool, spread: bool) -> Result<Rack, Error> {
        let urls = parse_list(list, with_key)?;
        let first = if spread { next_pick() % urls.len() } else { 0 };
        Ok(Rack { urls, first })
    }

    pub fn len(&self) -> usize {
        self.urls.len()
    }

    pub fn url(&self, server: usize) -> &str {
        &self.urls[server]
    }

    /// The servers to try for a connection, each once: from `from` (by
    /// default this recognizer's first pick) on, round the list; those at
    /// rest after a failure last, the soonest rested first.
    pub fn order(&self, from: Option<usize>) -> Vec<usize> {
        let start = from.unwrap_or(self.first);
        let n = self.urls.len();
        let rotation = (0..n).map(|k| (start + k) % n);
        let now = Instant::now();
        let table = health().lock().expect("not poisoned");
        let rests = |i: usize| {
            table
                .get(&self.urls[i])
                .map(|h| h.rests_until)
                .filter(|&until| until > now)
        };
        let (mut resting, ready): (Vec<usize>, Vec<usize>) =
            rotation.partition(|&i| rests(i).is_some());
        resting.sort_by_key(|&i| rests(i));
        ready.into_iter().chain(resting).collect()
    }

    /// The server failed: it rests, longer for each failure in a row.
    /// `true`: it was well before (the first failure in a row).
    pub fn failed(&self, server: usize) -> bool {
        let mut table = health().lock().expect("not poisoned");
        let h = table.entry(self.urls[server].clone()).or_insert(Health {
            failures_in_a_row: 0,
            rests_until: Instant::now(),
        });
        let rest = FIRST_REST
            .saturating_mul(1 << h.failures_in_a_row.min(8))
            .min(LONGEST_REST);
        h.failures_in_a_row += 1;
        h.rests_until = Instant::now() + rest;
        h.failures_in_a_row == 1
    }

    /// A connection to the server was made: it is well again.
    pub fn joined(&self, server: usize) {
        health()
            .lock()
            .expect("not poisoned")
            .remove(&self.urls[server]);
    }
}

/// The URLs of `list`, each checked: an empty entry, a URL that is not a
/// ws:// or wss:// one, a server listed twice, and a list mixing ws:// and
/// wss:// are refused, naming the entry.
fn parse_list(list: &str, with_key: bool) -> Result<Vec<String>, Error> {
    let entries: Vec<&str> = list.split(',').map(str::trim).collect();
    let several = entries.len() > 1;
    let mut urls: Vec<String> = Vec::new();
    let mut endpoints = Vec::new();
    for (k, entry) in entries.iter().enumerate() {
        if entry.is_empty() && several {
            return Err(Error::BadUrl {
                url: list.to_owned(),
                reason: format!("entry {} of the list is empty", k + 1),
            });
        }
        let endpoint = check_url(entry, with_key)?;
        let same_server = |e: &Endpoint| e.host == endpoint.host && e.port == endpoint.port;
        if let Some(j) = endpoints.iter().position(same_server) {
            return Err(Error::BadUrl {
                url: list.to_owned(),
                reason: format!(
                    "{entry} is the same server as entry {} ({}): list each server once",
                    j + 1,
                    urls[j]
                ),
            });
        }
        endpoints.push(endpoint);
        urls.push((*entry).to_owned());
    }
    let secure = |e: &Endpoint| e.secure;
    if endpoints.iter().any(secure) && !endpoints.iter().all(secure) {
        return Err(Error::BadUrl {
            url: list.to_owned(),
            reason: "the list mixes ws:// and wss:// servers, so a failover would change \
                     whether the audio and the key travel encrypted: use one scheme for all"
                .into(),
        });
    }
    Ok(urls)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(list: &str) -> String {
        match parse_list(list, false) {
            Err(e) => e.to_string(),
            Ok(urls) => panic!("{list} was taken: {urls:?}"),
        }
    }

    #[test]
    fn a_list_names_each_server_once_with_one_scheme() {
        let urls = parse_list(" ws://a:8000/v1/realtime , ws://b:8000/v1/realtime", false);
        assert_eq!(
            urls.unwrap(),
            ["ws://a:8000/v1/realtime", "ws://b:8000/v1/realtime"]
        );
        assert!(refused("ws://a:8000/v1/realtime,,ws://b:8000/v1/realtime")
            .contains("entry 2 of the list is empty"));
        assert!(refused("ws://a:8000/v1/realtime,").contains("entry 2"));
        assert!(refused("ws://a:8000/v1/realtime,gpu2:8000").contains("'gpu2:8000'"));
        assert!(refused("ws://a:8000/v1/realtime,ws://A:8000/v1/realtime")
            .contains("the same server as entry 1"));
        assert!(refused("ws://a/v1/realtime,ws://a:80/v1/realtime").contains("same server"));
        assert!(refused("ws://a:8000/v1/realtime,wss://b:8000/v1/realtime").contains("mixes"));
    }

    #[test]
    fn servers_that_failed_are_tried_last_until_they_have_rested() {
        let rack = Rack {
            urls: [
                "ws://r1:1/v1/realtime",
                "ws://r2:1/v1/realtime",
                "ws://r3:1/v1/realtime",
            ]
            .map(String::from)
            .to_vec(),
            first: 1,
        };
        assert_eq!(rack.order(None), [1, 2, 0]);
        rack.failed(2);
        assert_eq!(rack.order(None), [1, 0, 2]);
        rack.failed(1);
        // Both rest; the one that failed first has rested longest.
        assert_eq!(rack.order(None), [0, 2, 1]);
        rack.joined(2);
        assert_eq!(rack.order(Some(2)), [2, 0, 1]);
    }

    #[test]
    fn recognizers_start_at_successive_servers() {
        let list = "ws://s1:1/v1/realtime,ws://s2:1/v1/realtime";
        let a = Rack::from_list(list, false, true).unwrap();
        let b = Rack::from_list(list, false, true).unwrap();
        assert_ne!(a.order(None)[0], b.order(None)[0]);
        let in_order = Rack::from_list(list, false, false).unwrap();
        assert_eq!(in_order.order(None)[0], 0);
    }
}
