// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The chat servers of `translate-url`: a comma-separated list of API bases
//! (`http://gpu-box:8000/v1`), checked, and the order a request tries them
//! in. A request starts at the server that answered last, so after a
//! failover the failed server is not asked first again; a server that fails
//! in a way another may not (a retryable failure) sends the request on to
//! the next.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::key::KeySource;
use super::Error;

const ENDPOINT_PATH: &str = "/chat/completions";

/// One server: its base as listed, and the URL requests go to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Server {
    base: String,
    endpoint: String,
}

/// The servers, in the order listed.
#[derive(Debug)]
pub struct Servers {
    servers: Vec<Server>,
    /// The one that answered last, where requests start.
    last_good: AtomicUsize,
}

impl Servers {
    /// Checks `list`. A base may be given with `/chat/completions` already
    /// on it. With a key (`key` not [`KeySource::None`]), plain http:// is
    /// allowed only to this machine.
    pub fn parse(list: &str, key: KeySource) -> Result<Servers, Error> {
        let bad = |reason: String| Error::BadUrl {
            url: list.to_owned(),
            reason,
        };
        let entries: Vec<&str> = list.split(',').map(str::trim).collect();
        let mut servers: Vec<Server> = Vec::new();
        for (k, entry) in entries.iter().enumerate() {
            if entry.is_empty() {
                let which = if entries.len() > 1 {
                    format!("entry {} of the list is empty", k + 1)
                } else {
                    "it is empty".to_owned()
                };
                return Err(bad(which));
            }
            let server = check_entry(entry, key)?;
            let same = |s: &Server| s.endpoint.eq_ignore_ascii_case(&server.endpoint);
            if let Some(j) = servers.iter().position(same) {
                return Err(bad(format!(
                    "{entry} is listed twice (entries {} and {}): list each server once",
                    j + 1,
                    k + 1
                )));
            }
            servers.push(server);
        }
        Ok(Servers {
            servers,
            last_good: AtomicUsize::new(0),
        })
    }

    pub fn len(&self) -> usize {
        self.servers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The base URL, as listed: how errors and answers name the server.
    pub fn base(&self, server: usize) -> &str {
        &self.servers[server].base
    }

    /// Where the requests go: the base and `/chat/completions`.
    pub fn endpoint(&self, server: usize) -> &str {
        &self.servers[server].endpoint
    }

    /// Every server once, from the one that answered last, round the list.
    pub fn order(&self) -> Vec<usize> {
        let n = self.servers.len();
        let start = self.last_good.load(Ordering::Relaxed) % n.max(1);
        (0..n).map(|k| (start + k) % n).collect()
    }

    /// Every server once, from `first`, round the list.
    pub fn order_from(&self, first: usize) -> Vec<usize> {
        let n = self.servers.len();
        (0..n).map(|k| (first + k) % n.max(1)).collect()
    }

    /// `server` answered: the next request starts there.
    pub fn answered(&self, server: usize) {
        self.last_good.store(server, Ordering::Relaxed);
    }
}

/// One entry of the list, checked.
fn check_entry(entry: &str, key: KeySource) -> Result<Server, Error> {
    let bad = |reason: &str| Error::BadUrl {
        url: entry.to_owned(),
        reason: reason.to_owned(),
    };
    let (secure, rest) = if let Some(rest) = entry.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = entry.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err(bad("the scheme must be http:// or https://"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host_of(authority).ok_or_else(|| bad("it has no host"))?;
    if rest[authority.len()..].contains(['?', '#']) {
        return Err(bad("an API base has no query or fragment"));
    }
    if key != KeySource::None && !secure && !is_loopback(host) {
        return Err(Error::KeyInTheClear {
            url: entry.to_owned(),
            source: key,
        });
    }
    let base = entry.trim_end_matches('/');
    let base = base.strip_suffix(ENDPOINT_PATH).unwrap_or(base);
    Ok(Server {
        base: base.to_owned(),
        endpoint: format!("{base}{ENDPOINT_PATH}"),
    })
}

/// The host of `user@host:port`, `[::1]:8000` as `::1`; None when empty.
fn host_of(authority: &str) -> Option<&str> {
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    (!host.is_empty()).then_some(host)
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(list: &str, key: KeySource) -> String {
        match Servers::parse(list, key) {
            Err(e) => e.to_string(),
            Ok(s) => panic!("{list} was taken: {s:?}"),
        }
    }

    #[test]
    fn requests_go_to_the_bases_chat_completions() {
        let s = Servers::parse(
            "http://a:8000/v1, https://b/v1/ ,http://c:8080/v1/chat/completions",
            KeySource::None,
        )
        .unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.base(0), "http://a:8000/v1");
        assert_eq!(s.endpoint(0), "http://a:8000/v1/chat/completions");
        assert_eq!(s.endpoint(1), "https://b/v1/chat/completions");
        assert_eq!(s.base(2), "http://c:8080/v1");
        assert_eq!(s.endpoint(2), "http://c:8080/v1/chat/completions");
    }

    #[test]
    fn a_bad_list_is_refused_naming_the_entry() {
        let none = KeySource::None;
        assert!(refused("", none).contains("it is empty"));
        assert!(refused("http://a/v1,,http://b/v1", none).contains("entry 2 of the list is empty"));
        assert!(refused("gpu:8000/v1", none).contains("http:// or https://"));
        assert!(refused("ws://a/v1", none).contains("http:// or https://"));
        assert!(refused("http:///v1", none).contains("no host"));
        assert!(refused("http://a/v1?x=1", none).contains("no query"));
        assert!(
            refused("http://a/v1,http://A/v1/", none).contains("listed twice (entries 1 and 2)")
        );
    }

    #[test]
    fn a_key_goes_in_clear_only_to_this_machine() {
        let key = KeySource::Env("OPENAI_API_KEY");
        for local in [
            "http://localhost:8000/v1",
            "http://127.0.0.1:1/v1",
            "http://[::1]:8000/v1",
        ] {
            assert!(Servers::parse(local, key).is_ok(), "{local}");
        }
        assert!(Servers::parse("https://api.example.com/v1", key).is_ok());
        let text = refused("http://gpu-box:8000/v1", key);
        assert!(text.contains("plain http://"), "{text}");
        assert!(text.contains("set OPENAI_API_KEY empty"), "{text}");
        assert!(Servers::parse("http://gpu-box:8000/v1", KeySource::None).is_ok());
    }

    #[test]
    fn requests_start_from_the_server_that_answered_last() {
        let s = Servers::parse("http://a/v1,http://b/v1,http://c/v1", KeySource::None).unwrap();
        assert_eq!(s.order(), [0, 1, 2]);
        s.answered(1);
        assert_eq!(s.order(), [1, 2, 0]);
        s.answered(0);
        assert_eq!(s.order(), [0, 1, 2]);
    }
}
