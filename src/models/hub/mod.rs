// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Fetching a Hub file into the Hugging Face cache.
//!
//! The cache is the one Python's huggingface_hub and hf-hub use
//! (`$HF_HOME/hub/models--OWNER--REPO/{blobs,snapshots,refs}`), so a model
//! another tool fetched is found without a download. The conventions are
//! theirs too: `HF_HOME`, `HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_TOKEN` (or
//! the token file). A download goes to `blobs/<etag>.part`, resumes with an
//! HTTP Range request, is checked against the size and (for LFS files) the
//! sha256 the Hub names, and only then becomes the blob: a partial file is
//! never taken for a complete one. One process at a time downloads a blob
//! (a lock file next to it); the others wait and then find it.

mod download;
mod error;
mod http;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hf_hub::{Cache, Repo, RepoType};

pub use error::{FetchError, Progress};

use super::{FileChoice, HubFile};
use download::{create_dir, io, BlobLock};

const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// Waiting for a connection, or for the next bytes of an answer. A read
/// that times out is retried from where it stopped (the transfer goes on),
/// so the element can also see a cancel this often.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(1);
/// A server that sends nothing for this long is given up on.
const STALL_LIMIT: Duration = Duration::from_secs(15);
/// How often progress is reported at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);
const CHUNK: usize = 256 * 1024;

/// Where the Hub and the cache are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubConfig {
    /// The cache's `hub` folder (`$HF_HOME/hub`).
    pub cache_dir: PathBuf,
    /// `https://huggingface.co` unless `HF_ENDPOINT` says otherwise.
    pub endpoint: String,
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`: no request at all.
    pub offline: bool,
}

fn env_flag(name: &str) -> bool {
    std::env::var(name)
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

impl HubConfig {
    /// `HF_HOME`, `HF_ENDPOINT`, `HF_HUB_OFFLINE`, `HF_TOKEN` (else the
    /// token file in the cache), as huggingface_hub reads them.
    pub fn from_env() -> HubConfig {
        let cache = Cache::from_env();
        let token = std::env::var("HF_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
            .or_else(|| cache.token());
        let endpoint = std::env::var("HF_ENDPOINT")
            .ok()
            .filter(|e| !e.is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
        HubConfig {
            cache_dir: cache.path().clone(),
            endpoint,
            token,
            offline: env_flag("HF_HUB_OFFLINE"),
        }
    }
}

/// The Hub and the cache, ready for requests.
#[derive(Debug, Clone)]
pub struct Hub {
    cache: Cache,
    endpoint: String,
    token: Option<String>,
    offline: bool,
    agent: ureq::Agent,
}

impl Hub {
    pub fn new(config: HubConfig) -> Hub {
        Hub {
            cache: Cache::new(config.cache_dir),
            endpoint: config.endpoint.trim_end_matches('/').to_owned(),
            token: config.token,
            offline: config.offline,
            agent: ureq::AgentBuilder::new()
                .timeout_connect(CONNECT_TIMEOUT)
                .timeout_read(READ_TIMEOUT)
                .redirects(0)
                .try_proxy_from_env(true)
                .build(),
        }
    }

    pub fn from_env() -> Hub {
        Hub::new(HubConfig::from_env())
    }

    /// The cache's `hub` folder.
    pub fn cache_dir(&self) -> &Path {
        self.cache.path()
    }

    /// The URL of `file` in `repo`.
    pub fn url(&self, file: &HubFile, name: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint,
            file.repo,
            file.revision(),
            name
        )
    }

    fn repo_dir(&self, file: &HubFile) -> PathBuf {
        let repo = Repo::with_revision(
            file.repo.clone(),
            RepoType::Model,
            file.revision().to_owned(),
        );
        self.cache.path().join(repo.folder_name())
    }

    /// The file in the cache, if it is there, without any request.
    pub fn cached(&self, file: &HubFile) -> Option<PathBuf> {
        let snapshot = self.cached_snapshot(file)?;
        match &file.file {
            FileChoice::Name(name) => Some(snapshot.join(name)).filter(|p| p.is_file()),
            FileChoice::Quant(tag) => {
                let names = std::fs::read_dir(&snapshot)
                    .ok()?
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect::<Vec<_>>();
                let name = pick_by_tag(names.iter().map(String::as_str), tag).ok()?;
                Some(snapshot.join(name)).filter(|p| p.is_file())
            }
        }
    }

    /// The snapshot folder the revision points at in the cache.
    fn cached_snapshot(&self, file: &HubFile) -> Option<PathBuf> {
        let dir = self.repo_dir(file);
        let revision = file.revision();
        let commit = std::fs::read_to_string(dir.join("refs").join(revision))
            .map(|c| c.trim().to_owned())
            .unwrap_or_else(|_| revision.to_owned());
        Some(dir.join("snapshots").join(commit)).filter(|p| p.is_dir())
    }

    /// The file in the cache, downloading it first if it is not there.
    /// `progress` is called at most every 250 ms during a transfer and
    /// once at its end; `cancel` stops it within about a second.
    pub fn fetch(
        &self,
        file: &HubFile,
        progress: &mut dyn FnMut(Progress),
        cancel: &AtomicBool,
    ) -> Result<PathBuf, FetchError> {
        if let Some(path) = self.cached(file) {
            return Ok(path);
        }
        let name = match &file.file {
            FileChoice::Name(name) => name.clone(),
            FileChoice::Quant(tag) => {
                self.refuse_if_offline(
                    file,
                    &format!("{}/api/models/{}", self.endpoint, file.repo),
                )?;
                self.name_by_tag(file, tag, cancel)?
            }
        };
        let url = self.url(file, &name);
        self.refuse_if_offline(file, &url)?;
        let meta = self.metadata(&url, cancel)?;
        let blobs = self.repo_dir(file).join("blobs");
        create_dir(&blobs)?;
        let blob = blobs.join(&meta.etag);
        if !blob.is_file() {
            let _lock = BlobLock::acquire(&blob, cancel)?;
            // Another process may have finished it while this one waited.
            if !blob.is_file() {
                self.download(&url, &meta, &blob, progress, cancel)?;
            }
        }
        self.link_snapshot(file, &meta.commit, &name, &meta.etag)
    }

    fn refuse_if_offline(&self, file: &HubFile, url: &str) -> Result<(), FetchError> {
        if self.offline {
            return Err(FetchError::Offline {
                url: url.to_owned(),
                cache: self.repo_dir(file),
            });
        }
        Ok(())
    }

    /// `snapshots/<commit>/<name>` pointing at the blob, and the revision's
    /// ref, as huggingface_hub lays them out.
    fn link_snapshot(
        &self,
        file: &HubFile,
        commit: &str,
        name: &str,
        etag: &str,
    ) -> Result<PathBuf, FetchError> {
        let dir = self.repo_dir(file);
        let pointer = dir.join("snapshots").join(commit).join(name);
        let parent = pointer.parent().unwrap_or(&dir);
        create_dir(parent)?;
        let depth = name.split('/').count() + 1;
        let target = PathBuf::from("../".repeat(depth)).join("blobs").join(etag);
        if std::fs::symlink_metadata(&pointer).is_ok() {
            std::fs::remove_file(&pointer).map_err(|e| io(&pointer, e))?;
        }
        std::os::unix::fs::symlink(&target, &pointer).map_err(|e| io(&pointer, e))?;
        let refs = dir.join("refs");
        create_dir(&refs)?;
        let revision = file.revision();
        if revision != commit {
            let ref_file = refs.join(revision);
            if let Some(parent) = ref_file.parent() {
                create_dir(parent)?;
            }
            std::fs::write(&ref_file, commit).map_err(|e| io(&ref_file, e))?;
        }
        Ok(pointer)
    }
}

/// Fetches `file` for a person at a terminal: a progress bar on stderr
/// while it downloads. Returns the local path.
pub fn fetch_with_progress_bar(file: &HubFile) -> Result<PathBuf, FetchError> {
    use indicatif::{ProgressBar, ProgressStyle};
    let bar = ProgressBar::new(0);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec} ({eta})",
        )
        .expect("a valid template"),
    );
    bar.set_message(file.to_string());
    let mut show = |p: Progress| {
        bar.set_length(p.total);
        bar.set_position(p.done);
    };
    let result = Hub::from_env().fetch(file, &mut show, &AtomicBool::new(false));
    bar.finish_and_clear();
    result
}

#[derive(Debug)]
struct Metadata {
    etag: String,
    commit: String,
    size: u64,
}

/// Picks the one `.gguf` name carrying `tag` (any case, `-` or `_` alike),
/// or returns the candidates when there is not exactly one.
fn pick_by_tag<'a>(
    names: impl Iterator<Item = &'a str>,
    tag: &str,
) -> Result<&'a str, Vec<String>> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let tag = norm(tag);
    let matches: Vec<&str> = names
        .filter(|n| n.to_ascii_lowercase().ends_with(".gguf"))
        .filter(|n| {
            let stem = norm(n.rsplit('/').next().unwrap_or(n));
            let stem = stem.trim_end_matches(".gguf");
            // The tag is a whole part of the name: Q4_K not in Q4_K_M.
            stem.ends_with(&format!("_{tag}")) || stem.ends_with(&format!(".{tag}")) || stem == tag
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok(one),
        _ => Err(matches.iter().map(|s| s.to_string()).collect()),
    }
}

fn is_safe_blob_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests;
