// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Requests to the Hub: the listing, a file's metadata, GETs that follow
//! redirects by hand and retry until the stall limit.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{is_safe_blob_name, pick_by_tag, FetchError, Hub, Metadata, STALL_LIMIT};
use crate::models::HubFile;

impl Hub {
    /// Finds the GGUF file with `tag` in the repository's listing (the
    /// model-info API, `siblings`).
    pub(super) fn name_by_tag(
        &self,
        file: &HubFile,
        tag: &str,
        cancel: &AtomicBool,
    ) -> Result<String, FetchError> {
        let mut url = format!("{}/api/models/{}", self.endpoint, file.repo);
        if let Some(revision) = &file.revision {
            url = format!("{url}/revision/{revision}");
        }
        let response = self.get(&url, None, "the repository", cancel)?;
        let info: hf_hub::api::RepoInfo = response
            .into_json()
            .map_err(|e| protocol(&url, format!("the listing is not the model-info JSON: {e}")))?;
        pick_by_tag(info.siblings.iter().map(|s| s.rfilename.as_str()), tag)
            .map(str::to_owned)
            .map_err(|candidates| FetchError::NoMatch {
                repo: file.repo.clone(),
                tag: tag.to_owned(),
                candidates,
            })
    }

    /// What the Hub says of a file before it is fetched (a one-byte range,
    /// as huggingface_hub asks): its ETag (the sha256 for LFS files), size
    /// and commit.
    pub(super) fn metadata(&self, url: &str, cancel: &AtomicBool) -> Result<Metadata, FetchError> {
        let response = self.get(url, Some("bytes=0-0"), "the file", cancel)?;
        let header = |name: &str| {
            response
                .header(name)
                .map(|v| v.trim_matches('"').to_owned())
        };
        let etag = header("x-linked-etag")
            .or_else(|| header("etag"))
            .filter(|e| is_safe_blob_name(e))
            .ok_or_else(|| protocol(url, "no usable ETag".into()))?;
        let commit = header("x-repo-commit")
            .filter(|c| is_safe_blob_name(c))
            .ok_or_else(|| protocol(url, "no X-Repo-Commit".into()))?;
        let size = header("x-linked-size")
            .or_else(|| {
                header("content-range").and_then(|r| r.rsplit('/').next().map(str::to_owned))
            })
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| protocol(url, "no size (X-Linked-Size or Content-Range)".into()))?;
        Ok(Metadata { etag, commit, size })
    }

    /// GET `url` (from byte `from` on, if given), following redirects by
    /// hand: the token goes only to the endpoint's host, and never over a
    /// downgrade from https to http.
    /// A connection that fails or an answer that does not come is tried
    /// again until `STALL_LIMIT`, unless `cancel` is set.
    pub(super) fn get(
        &self,
        url: &str,
        range: Option<&str>,
        what: &str,
        cancel: &AtomicBool,
    ) -> Result<ureq::Response, FetchError> {
        let started = Instant::now();
        loop {
            match self.get_once(url, range, what) {
                Err(FetchError::Unreachable { .. })
                    if started.elapsed() < STALL_LIMIT && !cancel.load(Ordering::Relaxed) =>
                {
                    std::thread::sleep(Duration::from_millis(250));
                }
                Err(FetchError::Unreachable { .. }) if cancel.load(Ordering::Relaxed) => {
                    return Err(FetchError::Cancelled)
                }
                other => return other,
            }
        }
    }

    pub(super) fn get_once(
        &self,
        url: &str,
        range: Option<&str>,
        what: &str,
    ) -> Result<ureq::Response, FetchError> {
        let mut current = url.to_owned();
        for _ in 0..10 {
            let mut request = self.agent.get(&current);
            if let Some(range) = range {
                request = request.set("Range", range);
            }
            if let Some(token) = &self.token {
                if same_host(&current, &self.endpoint) {
                    request = request.set("Authorization", &format!("Bearer {token}"));
                }
            }
            let response = match request.call() {
                Ok(response) => response,
                Err(ureq::Error::Status(code, response)) if (300..400).contains(&code) => response,
                Err(ureq::Error::Status(401 | 403, _)) => {
                    return Err(FetchError::Unauthorized {
                        url: url.to_owned(),
                    })
                }
                Err(ureq::Error::Status(404, response)) => {
                    let what = match response.header("x-error-code") {
                        Some("RepoNotFound") => "the repository",
                        Some("RevisionNotFound") => "the revision",
                        Some("EntryNotFound") => "the file",
                        _ => what,
                    };
                    return Err(FetchError::NotFound {
                        what: what.to_owned(),
                        url: url.to_owned(),
                    });
                }
                Err(ureq::Error::Status(code, response)) => {
                    return Err(protocol(
                        url,
                        format!("HTTP {code} {}", response.status_text()),
                    ))
                }
                Err(ureq::Error::Transport(t)) => return Err(self.unreachable(url, t.to_string())),
            };
            if !(300..400).contains(&response.status()) {
                return Ok(response);
            }
            let location = response
                .header("location")
                .ok_or_else(|| protocol(url, "a redirect without Location".into()))?;
            let next = resolve_location(&current, location);
            if current.starts_with("https://") && !next.starts_with("https://") {
                return Err(protocol(
                    url,
                    format!("refusing a redirect from https to {next}"),
                ));
            }
            current = next;
        }
        Err(protocol(url, "too many redirects".into()))
    }

    pub(super) fn unreachable(&self, url: &str, reason: String) -> FetchError {
        FetchError::Unreachable {
            url: url.to_owned(),
            reason,
            cache: self.cache.path().clone(),
        }
    }
}

pub(super) fn protocol(url: &str, reason: String) -> FetchError {
    FetchError::Protocol {
        url: url.to_owned(),
        reason,
    }
}

pub(super) fn same_host(url: &str, endpoint: &str) -> bool {
    let host = |u: &str| {
        u.split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .map(str::to_owned)
    };
    host(url).is_some() && host(url) == host(endpoint)
}

pub(super) fn resolve_location(current: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin_end = current
        .find("://")
        .and_then(|i| current[i + 3..].find('/').map(|j| i + 3 + j))
        .unwrap_or(current.len());
    format!("{}{}", &current[..origin_end], location)
}
