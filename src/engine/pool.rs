// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A process-wide pool of loaded models.
//!
//! Streams on the same model share one loaded model, each with a session of
//! its own: the engine we carry runs sessions of one model in parallel
//! (vendor/transcribe-cpp-sys.patches/0001), and on the CPU the repacked
//! weights are a copy in memory that a model per stream would repeat. The
//! streams of one model also decode their steps together
//! ([`super::batch`]). A model nobody uses, and a session given back, stay
//! loaded for [`IDLE_TIMEOUT`], so an element that goes to NULL and back to
//! READY does not load its model again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::batch::Batcher;
use super::model::{Model, ModelSpec};
use super::session::Session;
use super::Error;

/// How long an unused model or session stays loaded.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What makes two requests share a model: the same spec and the same file
/// on disk. A file replaced after a load (new inode or mtime) is loaded anew.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    spec: ModelSpec,
    file: Option<(u64, u64, u64, SystemTime)>,
}

impl Key {
    fn of(spec: &ModelSpec) -> Key {
        Key {
            spec: spec.clone(),
            file: file_identity(&spec.path),
        }
    }
}

#[cfg(unix)]
fn file_identity(path: &std::path::Path) -> Option<(u64, u64, u64, SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.len(), m.modified().ok()?))
}

#[cfg(not(unix))]
fn file_identity(path: &std::path::Path) -> Option<(u64, u64, u64, SystemTime)> {
    let m = std::fs::metadata(path).ok()?;
    Some((0, 0, m.len(), m.modified().ok()?))
}

/// A loaded model and what its streams share: the batcher of their feeds.
pub(crate) struct SharedModel {
    pub(crate) model: Model,
    pub(crate) batcher: Batcher,
}

/// A model in the pool: its users, the sessions given back, and since when
/// nobody uses it.
struct Entry {
    shared: Arc<SharedModel>,
    users: usize,
    idle_sessions: Vec<(Session, Instant)>,
    unused_since: Option<Instant>,
}

/// The pool. Use [`ModelPool::global`].
pub struct ModelPool {
    entries: Mutex<HashMap<Key, Entry>>,
    /// One lock per key while it loads, so that streams starting together
    /// load a model once and other models load meanwhile.
    loading: Mutex<HashMap<Key, Arc<Mutex<()>>>>,
    reaper_wake: Condvar,
    loads: AtomicU64,
    loads_by_path: Mutex<HashMap<PathBuf, u64>>,
    /// Leases not yet returned: the local streams open in this process.
    leased: AtomicUsize,
}

/// One stream's use of a shared model: the model and a session of its own;
/// returns both to the pool when dropped.
pub struct ModelLease {
    shared: Arc<SharedModel>,
    /// Dropped before `shared` (fields drop in order), though the session
    /// keeps its model alive by itself too.
    session: Option<Session>,
    key: Key,
}

impl ModelLease {
    /// The lease's session, created (again) if the thread count differs.
    pub(crate) fn session(&mut self, n_threads: u32) -> Result<&Session, Error> {
        if self.session.as_ref().map(Session::n_threads) != Some(n_threads) {
            self.session = None;
            self.session = Some(Session::new(&self.shared, n_threads)?);
        }
        Ok(self.session.as_ref().expect("session was just created"))
    }

    pub fn model(&self) -> &Model {
        &self.shared.model
    }

    pub(crate) fn batcher(&self) -> &Batcher {
        &self.shared.batcher
    }
}

impl Drop for ModelLease {
    fn drop(&mut self) {
        let pool = ModelPool::global();
        pool.leased.fetch_sub(1, Ordering::Relaxed);
        self.shared.batcher.stream_closed();
        pool.give_back(&self.key, self.session.take());
    }
}

impl ModelPool {
    /// The one pool of this process.
    pub fn global() -> &'static ModelPool {
        static POOL: LazyLock<ModelPool> = LazyLock::new(|| {
            std::thread::Builder::new()
                .name("voxtralrt-pool".into())
                .spawn(|| ModelPool::global().reap_forever())
                .expect("spawning the model pool thread");
            ModelPool {
                entries: Mutex::new(HashMap::new()),
                loading: Mutex::new(HashMap::new()),
                reaper_wake: Condvar::new(),
                loads: AtomicU64::new(0),
                loads_by_path: Mutex::new(HashMap::new()),
                leased: AtomicUsize::new(0),
            }
        });
        &POOL
    }

    /// The model for one more stream, with a session given back earlier if
    /// there is one: loaded now unless it is loaded already.
    pub fn acquire(&self, spec: &ModelSpec) -> Result<ModelLease, Error> {
        let key = Key::of(spec);
        let load_lock = self
            .loading
            .lock()
            .unwrap()
            .entry(key.clone())
            .or_default()
            .clone();
        let _loading = load_lock.lock().unwrap();
        if let Some(lease) = self.lease_loaded(&key) {
            return Ok(lease);
        }
        let shared = Arc::new(SharedModel {
            model: Model::load(spec)?,
            batcher: Batcher::default(),
        });
        self.loads.fetch_add(1, Ordering::Relaxed);
        *self
            .loads_by_path
            .lock()
            .unwrap()
            .entry(spec.path.clone())
            .or_default() += 1;
        self.entries.lock().unwrap().insert(
            key.clone(),
            Entry {
                shared,
                users: 0,
                idle_sessions: Vec::new(),
                unused_since: None,
            },
        );
        Ok(self.lease_loaded(&key).expect("the model was just added"))
    }

    fn lease_loaded(&self, key: &Key) -> Option<ModelLease> {
        let mut entries = self.entries.lock().unwrap();
        let entry = entries.get_mut(key)?;
        entry.users += 1;
        entry.unused_since = None;
        let session = entry.idle_sessions.pop().map(|(session, _)| session);
        self.leased.fetch_add(1, Ordering::Relaxed);
        entry.shared.batcher.stream_opened();
        Some(ModelLease {
            shared: entry.shared.clone(),
            session,
            key: key.clone(),
        })
    }

    /// Leases not returned: the local streams open in this process.
    pub fn leased(&self) -> usize {
        self.leased.load(Ordering::Relaxed)
    }

    /// How many times this process loaded a model file.
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }

    /// How many times this process loaded the model file at `path`.
    pub fn loads_of(&self, path: &Path) -> u64 {
        self.loads_by_path
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// How many loaded models nobody uses.
    pub fn idle_count(&self) -> usize {
        self.entries
            .lock()
            .unwrap()
            .values()
            .filter(|e| e.users == 0)
            .count()
    }

    /// Frees every model nobody uses, and every session given back, now.
    pub fn clear_idle(&self) {
        let mut freed = Vec::new();
        {
            let mut entries = self.entries.lock().unwrap();
            for entry in entries.values_mut() {
                freed.extend(entry.idle_sessions.drain(..).map(|(s, _)| s));
            }
            entries.retain(|_, e| e.users > 0);
        }
        drop(freed);
    }

    fn give_back(&self, key: &Key, session: Option<Session>) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(entry) = entries.get_mut(key) {
            entry.users -= 1;
            if entry.users == 0 {
                entry.unused_since = Some(Instant::now());
            }
            entry
                .idle_sessions
                .extend(session.map(|s| (s, Instant::now())));
        }
        self.reaper_wake.notify_one();
    }

    /// What has been idle for the timeout, taken out of the pool.
    fn take_expired(entries: &mut HashMap<Key, Entry>, now: Instant) -> (Vec<Session>, Vec<Entry>) {
        let expired = |since: Instant| now.duration_since(since) >= IDLE_TIMEOUT;
        let mut sessions = Vec::new();
        for entry in entries.values_mut() {
            let (old, keep) = std::mem::take(&mut entry.idle_sessions)
                .into_iter()
                .partition(|(_, since)| expired(*since));
            entry.idle_sessions = keep;
            sessions.extend(old.into_iter().map(|(s, _)| s));
        }
        let unused: Vec<Key> = entries
            .iter()
            .filter(|(_, e)| e.users == 0 && e.unused_since.is_some_and(expired))
            .map(|(k, _)| k.clone())
            .collect();
        let models = unused.iter().filter_map(|k| entries.remove(k)).collect();
        (sessions, models)
    }

    /// When the next model or session given back is due to expire.
    fn next_expiry(entries: &HashMap<Key, Entry>, now: Instant) -> Option<Duration> {
        entries
            .values()
            .flat_map(|e| {
                e.idle_sessions
                    .iter()
                    .map(|(_, since)| *since)
                    .chain(e.unused_since.filter(|_| e.users == 0))
            })
            .map(|since| IDLE_TIMEOUT.saturating_sub(now.duration_since(since)))
            .min()
    }

    fn reap_forever(&self) {
        let mut entries = self.entries.lock().unwrap();
        loop {
            let now = Instant::now();
            let (sessions, models) = Self::take_expired(&mut entries, now);
            if !sessions.is_empty() || !models.is_empty() {
                // Free outside the lock: unloading a big model takes a while.
                drop(entries);
                drop(sessions);
                drop(models);
                entries = self.entries.lock().unwrap();
                continue;
            }
            entries = match Self::next_expiry(&entries, now) {
                Some(wait) => self.reaper_wake.wait_timeout(entries, wait).unwrap().0,
                None => self.reaper_wake.wait(entries).unwrap(),
            };
        }
    }
}
