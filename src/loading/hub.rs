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

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hf_hub::{Cache, Repo, RepoType};
use sha2::{Digest, Sha256};

use super::{FileChoice, HubFile};

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

/// How far a download has come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
    /// Over the download so far (resumed bytes not counted).
    pub bytes_per_second: f64,
}

/// Why a file could not be fetched; each says what to do about it.
#[derive(Debug)]
pub enum FetchError {
    /// `HF_HUB_OFFLINE` is set and the file is not in the cache.
    Offline { url: String, cache: PathBuf },
    /// The Hub could not be reached, or did not answer in time.
    Unreachable {
        url: String,
        reason: String,
        cache: PathBuf,
    },
    /// 404: the repository, revision or file does not exist (or is private).
    NotFound { what: String, url: String },
    /// 401/403: a token is needed, or the one given is refused.
    Unauthorized { url: String },
    /// The server answered something this client cannot use.
    Protocol { url: String, reason: String },
    /// No file in the repository carries the quantisation tag, or several.
    NoMatch {
        repo: String,
        tag: String,
        candidates: Vec<String>,
    },
    /// The downloaded bytes are not the file the Hub named.
    Checksum {
        url: String,
        expected: String,
        actual: String,
    },
    /// Not enough room in the cache for the file.
    DiskFull {
        dir: PathBuf,
        needed: u64,
        available: u64,
    },
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The element stopped; the partial file stays for the next attempt.
    Cancelled,
}

fn gb(bytes: u64) -> f64 {
    bytes as f64 / 1e9
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Offline { url, cache } => write!(
                f,
                "HF_HUB_OFFLINE is set and {url} is not in the cache {}; unset HF_HUB_OFFLINE, \
                 or download the file by hand (huggingface-cli download) into that cache, or \
                 point model-path at a local copy",
                cache.display()
            ),
            FetchError::Unreachable { url, reason, cache } => write!(
                f,
                "could not download {url}: {reason}. Without network, place the file in the \
                 Hugging Face cache {} (huggingface-cli download on a machine with network, then \
                 copy the cache), or download it by hand and point model-path at it",
                cache.display()
            ),
            FetchError::NotFound { what, url } => {
                write!(f, "{what} not found on the Hub ({url}); check the name, or set HF_TOKEN if it is private or gated")
            }
            FetchError::Unauthorized { url } => write!(
                f,
                "the Hub refused {url} without a valid token: set HF_TOKEN to an access token \
                 that may read it (and accept the model's terms on its page if it is gated)"
            ),
            FetchError::Protocol { url, reason } => write!(f, "unexpected answer for {url}: {reason}"),
            FetchError::NoMatch { repo, tag, candidates } if candidates.is_empty() => write!(
                f,
                "no GGUF file with \"{tag}\" in its name in {repo}; name the file with hf://{repo}/FILE"
            ),
            FetchError::NoMatch { repo, tag, candidates } => write!(
                f,
                "several GGUF files with \"{tag}\" in their name in {repo} ({}); name one with hf://{repo}/FILE",
                candidates.join(", ")
            ),
            FetchError::Checksum { url, expected, actual } => write!(
                f,
                "the download of {url} is damaged: its sha256 is {actual}, the Hub names {expected}; \
                 the file was deleted, try again"
            ),
            FetchError::DiskFull { dir, needed, available } => write!(
                f,
                "not enough space for the model in {}: {:.2} GB needed, {:.2} GB free; free some \
                 space or set HF_HOME to a cache on a larger disk",
                dir.display(),
                gb(*needed),
                gb(*available)
            ),
            FetchError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            FetchError::Cancelled => write!(f, "the download was cancelled"),
        }
    }
}

impl std::error::Error for FetchError {}

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

    /// Finds the GGUF file with `tag` in the repository's listing (the
    /// model-info API, `siblings`).
    fn name_by_tag(
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
    fn metadata(&self, url: &str, cancel: &AtomicBool) -> Result<Metadata, FetchError> {
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
    fn get(
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

    fn get_once(
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

    fn unreachable(&self, url: &str, reason: String) -> FetchError {
        FetchError::Unreachable {
            url: url.to_owned(),
            reason,
            cache: self.cache.path().clone(),
        }
    }

    /// Downloads into `<blob>.part` (resuming what is there), checks it and
    /// makes it the blob.
    fn download(
        &self,
        url: &str,
        meta: &Metadata,
        blob: &Path,
        progress: &mut dyn FnMut(Progress),
        cancel: &AtomicBool,
    ) -> Result<(), FetchError> {
        let part = blob.with_extension("part");
        let mut out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&part)
            .map_err(|e| io(&part, e))?;
        let mut done = out.metadata().map_err(|e| io(&part, e))?.len();
        if done > meta.size {
            out.set_len(0).map_err(|e| io(&part, e))?;
            done = 0;
        }
        check_space(blob.parent().unwrap_or(blob), meta.size - done)?;
        let started = Instant::now();
        let resumed_at = done;
        let mut reported = Instant::now() - PROGRESS_EVERY;
        let mut last_bytes = Instant::now();
        let mut buffer = vec![0u8; CHUNK];
        while done < meta.size {
            if cancel.load(Ordering::Relaxed) {
                return Err(FetchError::Cancelled);
            }
            let range = format!("bytes={done}-");
            let response = self.get(url, Some(&range), "the file", cancel)?;
            if response.status() == 200 && done > 0 {
                // The server ignored the range: start again.
                out.set_len(0).map_err(|e| io(&part, e))?;
                done = 0;
            }
            let mut reader = response.into_reader();
            loop {
                if cancel.load(Ordering::Relaxed) {
                    return Err(FetchError::Cancelled);
                }
                match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        out.write_all(&buffer[..n])
                            .map_err(|e| write_error(&part, e, meta.size - done))?;
                        done += n as u64;
                        last_bytes = Instant::now();
                        if reported.elapsed() >= PROGRESS_EVERY {
                            reported = Instant::now();
                            progress(rate(done, meta.size, resumed_at, started));
                        }
                    }
                    // A timeout or a cut connection: ask again from here
                    // (a Range request), unless the server has sent nothing
                    // for too long.
                    Err(_) if last_bytes.elapsed() < STALL_LIMIT => break,
                    Err(e) => {
                        return Err(self.unreachable(
                            url,
                            format!("{e}; no data for {} s", STALL_LIMIT.as_secs()),
                        ))
                    }
                }
            }
            if done < meta.size && last_bytes.elapsed() >= STALL_LIMIT {
                return Err(
                    self.unreachable(url, format!("no data for {} s", STALL_LIMIT.as_secs()))
                );
            }
        }
        out.sync_all().map_err(|e| io(&part, e))?;
        drop(out);
        progress(rate(done, meta.size, resumed_at, started));
        verify(url, &part, meta)?;
        std::fs::rename(&part, blob).map_err(|e| io(blob, e))
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

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn verify(url: &str, part: &Path, meta: &Metadata) -> Result<(), FetchError> {
    let size = std::fs::metadata(part).map_err(|e| io(part, e))?.len();
    if size != meta.size {
        let _ = std::fs::remove_file(part);
        return Err(protocol(
            url,
            format!("{size} bytes came, {} were announced", meta.size),
        ));
    }
    if !is_sha256(&meta.etag) {
        return Ok(());
    }
    let mut file = File::open(part).map_err(|e| io(part, e))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| io(part, e))?;
    let actual = hex(&hasher.finalize());
    if actual != meta.etag.to_ascii_lowercase() {
        let _ = std::fs::remove_file(part);
        return Err(FetchError::Checksum {
            url: url.to_owned(),
            expected: meta.etag.clone(),
            actual,
        });
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn rate(done: u64, total: u64, resumed_at: u64, started: Instant) -> Progress {
    let seconds = started.elapsed().as_secs_f64().max(1e-3);
    Progress {
        done,
        total,
        bytes_per_second: (done - resumed_at) as f64 / seconds,
    }
}

fn protocol(url: &str, reason: String) -> FetchError {
    FetchError::Protocol {
        url: url.to_owned(),
        reason,
    }
}

fn io(path: &Path, error: std::io::Error) -> FetchError {
    FetchError::Io {
        path: path.to_owned(),
        error,
    }
}

fn write_error(part: &Path, error: std::io::Error, still_needed: u64) -> FetchError {
    if error.raw_os_error() == Some(libc::ENOSPC) {
        let dir = part.parent().unwrap_or(part).to_owned();
        return FetchError::DiskFull {
            available: free_space(&dir).unwrap_or(0),
            dir,
            needed: still_needed,
        };
    }
    io(part, error)
}

fn create_dir(dir: &Path) -> Result<(), FetchError> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))
}

/// Bytes free for this user on the file system of `dir`.
fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a valid C string and `stat` a buffer statvfs fills.
    let rc = unsafe { libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: statvfs succeeded, so it filled the buffer.
    let stat = unsafe { stat.assume_init() };
    Some(stat.f_bavail * stat.f_frsize)
}

fn check_space(dir: &Path, needed: u64) -> Result<(), FetchError> {
    match free_space(dir) {
        Some(available) if available < needed => Err(FetchError::DiskFull {
            dir: dir.to_owned(),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

fn same_host(url: &str, endpoint: &str) -> bool {
    let host = |u: &str| {
        u.split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .map(str::to_owned)
    };
    host(url).is_some() && host(url) == host(endpoint)
}

fn resolve_location(current: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_owned();
    }
    let origin_end = current
        .find("://")
        .and_then(|i| current[i + 3..].find('/').map(|j| i + 3 + j))
        .unwrap_or(current.len());
    format!("{}{}", &current[..origin_end], location)
}

/// An exclusive lock on `<blob>.lock`, waited for while another process
/// downloads the same blob.
struct BlobLock {
    file: File,
}

impl BlobLock {
    fn acquire(blob: &Path, cancel: &AtomicBool) -> Result<BlobLock, FetchError> {
        use std::os::fd::AsRawFd;
        let path = blob.with_extension("lock");
        let file = File::create(&path).map_err(|e| io(&path, e))?;
        loop {
            // SAFETY: flock on a file descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(BlobLock { file });
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(FetchError::Cancelled);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for BlobLock {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: unlocking the descriptor this lock owns.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quantisation_tag_picks_the_one_gguf_that_carries_it() {
        let names = [
            "README.md",
            "Voxtral-Mini-4B-Realtime-2602-Q4_K_M.gguf",
            "Voxtral-Mini-4B-Realtime-2602-Q4_K_S.gguf",
            "Voxtral-Mini-4B-Realtime-2602-Q8_0.gguf",
            "Voxtral-Mini-4B-Realtime-2602-F16.gguf",
            "Voxtral-Mini-4B-Realtime-2602-BF16.gguf",
        ];
        let pick = |tag| pick_by_tag(names.iter().copied(), tag);
        assert_eq!(
            pick("Q4_K_M"),
            Ok("Voxtral-Mini-4B-Realtime-2602-Q4_K_M.gguf")
        );
        assert_eq!(pick("q8_0"), Ok("Voxtral-Mini-4B-Realtime-2602-Q8_0.gguf"));
        assert_eq!(pick("F16"), Ok("Voxtral-Mini-4B-Realtime-2602-F16.gguf"));
        assert_eq!(pick("Q4_K").unwrap_err(), Vec::<String>::new());
        assert_eq!(pick("Q5_K_M").unwrap_err(), Vec::<String>::new());
    }

    #[test]
    fn a_redirect_location_is_taken_relative_to_the_server() {
        assert_eq!(
            resolve_location("http://h:1/a/b?x", "/c/d"),
            "http://h:1/c/d"
        );
        assert_eq!(
            resolve_location("http://h:1/a", "https://cdn/x"),
            "https://cdn/x"
        );
    }

    #[test]
    fn the_token_goes_only_to_the_endpoint_host() {
        assert!(same_host(
            "https://huggingface.co/a/b",
            "https://huggingface.co"
        ));
        assert!(!same_host(
            "https://cdn.example/a",
            "https://huggingface.co"
        ));
    }
}
