// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! A process-wide pool of loaded models.
//!
//! transcribe.cpp runs at most one stream per loaded model at a time, so the
//! pool hands out exclusive leases: two streams on the same file at once get
//! two instances (on the CPU the weights are memory-mapped and shared by the
//! OS). A returned instance stays loaded for [`IDLE_TIMEOUT`], so an element
//! that goes to NULL and back to READY does not load its model again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::model::{Model, ModelSpec, Session};
use super::Error;

/// How long an unused instance stays loaded.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// What makes two requests share instances: the same spec and the same file
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

/// A loaded model with the session that streams on it. The session field
/// comes first so that it is dropped before the model it borrows.
pub(crate) struct Instance {
    session: Option<Session>,
    model: Model,
}

impl Instance {
    /// The instance's session, created (again) if the thread count differs.
    pub(crate) fn session(&mut self, n_threads: u32) -> Result<&Session, Error> {
        if self.session.as_ref().map(Session::n_threads) != Some(n_threads) {
            self.session = None;
            self.session = Some(Session::new(&self.model, n_threads)?);
        }
        Ok(self.session.as_ref().expect("session was just created"))
    }
}

struct Idle {
    instance: Instance,
    since: Instant,
}

/// The pool. Use [`ModelPool::global`].
pub struct ModelPool {
    idle: Mutex<HashMap<Key, Vec<Idle>>>,
    reaper_wake: Condvar,
    loads: AtomicU64,
    loads_by_path: Mutex<HashMap<PathBuf, u64>>,
    /// Leases not yet returned: the local streams open in this process.
    leased: AtomicUsize,
}

/// Exclusive use of one model instance; returns it to the pool when dropped.
pub struct ModelLease {
    instance: Option<Instance>,
    key: Key,
}

impl ModelLease {
    pub(crate) fn instance(&mut self) -> &mut Instance {
        self.instance
            .as_mut()
            .expect("instance is present until drop")
    }

    pub fn model(&self) -> &Model {
        &self
            .instance
            .as_ref()
            .expect("instance is present until drop")
            .model
    }
}

impl Drop for ModelLease {
    fn drop(&mut self) {
        if let Some(instance) = self.instance.take() {
            let pool = ModelPool::global();
            pool.leased.fetch_sub(1, Ordering::Relaxed);
            pool.give_back(self.key.clone(), instance);
        }
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
                idle: Mutex::new(HashMap::new()),
                reaper_wake: Condvar::new(),
                loads: AtomicU64::new(0),
                loads_by_path: Mutex::new(HashMap::new()),
                leased: AtomicUsize::new(0),
            }
        });
        &POOL
    }

    /// An instance of the model for exclusive use: an idle one if there is
    /// one, else a fresh load.
    pub fn acquire(&self, spec: &ModelSpec) -> Result<ModelLease, Error> {
        let key = Key::of(spec);
        let reused = self
            .idle
            .lock()
            .unwrap()
            .get_mut(&key)
            .and_then(|list| list.pop());
        let instance = match reused {
            Some(idle) => idle.instance,
            None => {
                let model = Model::load(spec)?;
                self.loads.fetch_add(1, Ordering::Relaxed);
                *self
                    .loads_by_path
                    .lock()
                    .unwrap()
                    .entry(spec.path.clone())
                    .or_default() += 1;
                Instance {
                    session: None,
                    model,
                }
            }
        };
        self.leased.fetch_add(1, Ordering::Relaxed);
        Ok(ModelLease {
            instance: Some(instance),
            key,
        })
    }

    /// Instances in use: the local streams open in this process.
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

    /// How many loaded instances are waiting for a user.
    pub fn idle_count(&self) -> usize {
        self.idle.lock().unwrap().values().map(Vec::len).sum()
    }

    /// Frees every idle instance now.
    pub fn clear_idle(&self) {
        let drained: Vec<Idle> = self
            .idle
            .lock()
            .unwrap()
            .drain()
            .flat_map(|(_, v)| v)
            .collect();
        drop(drained);
    }

    fn give_back(&self, key: Key, instance: Instance) {
        let mut idle = self.idle.lock().unwrap();
        idle.entry(key).or_default().push(Idle {
            instance,
            since: Instant::now(),
        });
        self.reaper_wake.notify_one();
    }

    fn reap_forever(&self) {
        let mut idle = self.idle.lock().unwrap();
        loop {
            let now = Instant::now();
            let mut expired = Vec::new();
            for list in idle.values_mut() {
                let (old, keep): (Vec<Idle>, Vec<Idle>) = std::mem::take(list)
                    .into_iter()
                    .partition(|i| now.duration_since(i.since) >= IDLE_TIMEOUT);
                *list = keep;
                expired.extend(old);
            }
            idle.retain(|_, list| !list.is_empty());
            if !expired.is_empty() {
                // Free outside the lock: unloading a big model takes a while.
                drop(idle);
                drop(expired);
                idle = self.idle.lock().unwrap();
                continue;
            }
            let next = idle
                .values()
                .flatten()
                .map(|i| IDLE_TIMEOUT.saturating_sub(now.duration_since(i.since)))
                .min();
            idle = match next {
                Some(wait) => self.reaper_wake.wait_timeout(idle, wait).unwrap().0,
                None => self.reaper_wake.wait(idle).unwrap(),
            };
        }
    }
}
