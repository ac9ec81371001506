// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! One blob's transfer: resumed, checked against the Hub's size and sha256,
//! in a cache with room for it, one process at a time.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::http::protocol;
use super::{FetchError, Hub, Metadata, Progress, CHUNK, PROGRESS_EVERY, STALL_LIMIT};

impl Hub {
    /// Downloads into `<blob>.part` (resuming what is there), checks it and
    /// makes it the blob.
    pub(super) fn download(
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
}

pub(super) fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| c.is_ascii_hexdigit())
}

pub(super) fn verify(url: &str, part: &Path, meta: &Metadata) -> Result<(), FetchError> {
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

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn rate(done: u64, total: u64, resumed_at: u64, started: Instant) -> Progress {
    let seconds = started.elapsed().as_secs_f64().max(1e-3);
    Progress {
        done,
        total,
        bytes_per_second: (done - resumed_at) as f64 / seconds,
    }
}

pub(super) fn io(path: &Path, error: std::io::Error) -> FetchError {
    FetchError::Io {
        path: path.to_owned(),
        error,
    }
}

pub(super) fn write_error(part: &Path, error: std::io::Error, still_needed: u64) -> FetchError {
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

pub(super) fn create_dir(dir: &Path) -> Result<(), FetchError> {
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))
}

/// Bytes free for this user on the file system of `dir`.
pub(super) fn free_space(dir: &Path) -> Option<u64> {
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

pub(super) fn check_space(dir: &Path, needed: u64) -> Result<(), FetchError> {
    match free_space(dir) {
        Some(available) if available < needed => Err(FetchError::DiskFull {
            dir: dir.to_owned(),
            needed,
            available,
        }),
        _ => Ok(()),
    }
}

/// An exclusive lock on `<blob>.lock`, waited for while another process
/// downloads the same blob.
pub(super) struct BlobLock {
    file: File,
}

impl BlobLock {
    pub(super) fn acquire(blob: &Path, cancel: &AtomicBool) -> Result<BlobLock, FetchError> {
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
