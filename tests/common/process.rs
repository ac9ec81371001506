// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Child processes for the tests that run examples, servers and ffmpeg:
//! stopped with every process they started when the test ends, also when
//! it fails or panics, and waited for with a deadline, so that no test
//! hangs or leaves a process behind. (A test process that dies without
//! unwinding, killed or aborted, stops nothing: the last stage of
//! scripts/test ends what is left and fails the run.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Builds the examples once, in this test binary's profile, and returns
/// the directory holding them.
pub fn examples_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| super::cargo_build(&["--examples"]).join("examples"))
        .clone()
}

/// A child process that is stopped when dropped (a failed assertion or a
/// panic included), with every process it started. Killing the child alone
/// is not enough: `scripts/servers/vllm-server run` execs `vllm serve`, whose
/// engine runs in processes of its own, and a shell's background job
/// outlives the shell. The child stays in the test's process group, so that
/// what signals that group (Ctrl-C in a terminal, `timeout`) reaches it too.
pub struct Guarded {
    child: Child,
    what: String,
    /// Its value of `GUARD_MARK`, in the environment of every process it
    /// started.
    mark: String,
    /// Set once everything is stopped and the child waited for.
    ended: bool,
}

/// The environment variable that marks the processes a `Guarded` started:
/// they inherit it, also when their parent has ended (a shell's background
/// job, reparented), which a walk of the process tree would miss.
const GUARD_MARK: &str = "VOXTRALRT_TEST_GUARD";

/// How long the processes may take to end on SIGTERM (vLLM frees its
/// shared memory, ffmpeg closes its file) before they get SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);

impl Guarded {
    pub fn spawn(command: &mut Command, what: &str) -> Guarded {
        static GUARDS: AtomicU32 = AtomicU32::new(0);
        let mark = format!(
            "{}.{}",
            std::process::id(),
            GUARDS.fetch_add(1, Ordering::Relaxed)
        );
        let child = command
            .env(GUARD_MARK, &mark)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {what}: {e}"));
        Guarded {
            child,
            what: what.to_owned(),
            mark,
            ended: false,
        }
    }

    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Waits for the process to exit on its own; None if it still runs
    /// after `timeout`.
    pub fn wait_for(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                Ok(None) => return None,
                Err(e) => panic!("waiting for {}: {e}", self.what),
            }
        }
    }

    /// The live processes it started: those carrying its mark, and their
    /// descendants (a process title may overwrite the environment, as it
    /// does for vLLM's engine and Chromium's helpers).
    pub fn processes(&self) -> Vec<u32> {
        let table = live_processes();
        let entry = format!("{GUARD_MARK}={}", self.mark);
        let mut family: Vec<u32> = table
            .iter()
            .filter(|p| carries(p.pid, &entry))
            .map(|p| p.pid)
            .collect();
        let mut grew = true;
        while grew {
            let before = family.len();
            for p in &table {
                if family.contains(&p.parent) && !family.contains(&p.pid) {
                    family.push(p.pid);
                }
            }
            grew = family.len() > before;
        }
        family
    }

    /// Sends `signal` (a name `kill -l` lists: STOP, CONT) to every process
    /// it started.
    pub fn signal_all(&self, signal: &str) {
        if !self.ended {
            send(signal, &self.processes());
        }
    }

    /// SIGKILL to every process it started at once, as a crash would, then
    /// waits for the child.
    pub fn kill_now(&mut self) {
        if self.ended {
            return;
        }
        let processes = self.processes();
        let shared = shared_memory_of(&processes);
        send("KILL", &processes);
        self.reap(shared);
    }

    /// SIGTERM to every process it started, SIGKILL to those left after
    /// `STOP_GRACE`, then waits for the child.
    pub fn stop(&mut self) {
        if self.ended {
            return;
        }
        let processes = self.processes();
        let shared = shared_memory_of(&processes);
        send("TERM", &processes);
        // A stopped process (SIGSTOP, a stalled server) holds SIGTERM
        // pending until it runs again.
        send("CONT", &processes);
        // Those signalled too: one whose parent ended first is orphaned
        // (no mark, no longer a descendant) while it is still exiting.
        let ended = || self.processes().is_empty() && !processes.iter().any(|&p| still_runs(p));
        if !wait_until(STOP_GRACE, ended) {
            eprintln!(
                "{} still ran {STOP_GRACE:?} after SIGTERM: killed",
                self.what
            );
            let mut left = self.processes();
            left.extend(processes.iter().filter(|&&p| still_runs(p)));
            send("KILL", &left);
        }
        self.reap(shared);
    }

    /// Waits for the child, then removes the shared memory `shared` that
    /// its processes had mapped, if they did not (a process that ends by
    /// itself removes its own).
    fn reap(&mut self, shared: Vec<PathBuf>) {
        let _ = self.child.wait();
        self.ended = true;
        for file in shared {
            let _ = std::fs::remove_file(file);
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `kill -SIGNAL PID...`; a process that has ended meanwhile is no error
/// here.
fn send(signal: &str, pids: &[u32]) {
    if pids.is_empty() {
        return;
    }
    let _ = Command::new("kill")
        .arg(format!("-{signal}"))
        .args(pids.iter().map(u32::to_string))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// The POSIX shared memory (files in /dev/shm) that `pids` have mapped,
/// which a killed process leaves behind: vllm serve's message queues,
/// about 400 MB a server.
fn shared_memory_of(pids: &[u32]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = pids
        .iter()
        .flat_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/maps")))
        .flat_map(|maps| {
            maps.lines()
                .filter_map(|line| line.split_once("/dev/shm/").map(|(_, name)| name))
                .filter(|name| !name.ends_with(" (deleted)"))
                .map(|name| Path::new("/dev/shm").join(name))
                .collect::<Vec<_>>()
        })
        .collect();
    files.sort();
    files.dedup();
    files
}

/// A process and its parent.
struct Process {
    pid: u32,
    parent: u32,
}

/// Every live process (Linux /proc; zombies are left out: they have ended,
/// only their parent's wait is missing).
fn live_processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let parent = live_parent_of(pid)?;
            Some(Process { pid, parent })
        })
        .collect()
}

/// Whether process `pid` still runs (a zombie has ended).
pub fn still_runs(pid: u32) -> bool {
    live_parent_of(pid).is_some()
}

/// The parent of live process `pid`, from /proc/PID/stat: the state and
/// the parent are the fields after the command name, which is in
/// parentheses and may hold anything, so the last ')' ends it.
fn live_parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    let parent = fields.next()?.parse().ok()?;
    (state != "Z").then_some(parent)
}

/// Whether the environment process `pid` started with holds `entry`
/// ("NAME=value").
fn carries(pid: u32, entry: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(|e| e == entry.as_bytes()))
}

/// The lines a child writes on its stdout, as they come; the reading
/// thread drains the pipe to the end, so the child never blocks on it.
pub fn stdout_lines(guarded: &mut Guarded) -> Receiver<String> {
    use std::io::BufRead;
    let stdout = guarded
        .child()
        .stdout
        .take()
        .expect("the child's stdout is piped");
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// The first line from `lines` that starts with `prefix`, within `timeout`.
pub fn line_starting_with(
    lines: &Receiver<String>,
    prefix: &str,
    timeout: Duration,
) -> Option<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) if line.starts_with(prefix) => return Some(line),
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// A TCP listener on 127.0.0.1, on a port this test process has not handed
/// out before. The element remembers failed servers by address for the
/// whole process (their rest, src/remote/rack.rs), and Linux gives a freed
/// port out again, so a port that an earlier test's refusing or killed
/// server had must not come back as a healthy server.
pub fn unused_tcp_listener() -> (std::net::TcpListener, u16) {
    static HANDED_OUT: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut handed_out = HANDED_OUT.lock().unwrap();
    // The ones refused stay bound until the search ends, so the next bind
    // cannot be given the same port again.
    let mut refused = Vec::new();
    loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if !handed_out.contains(&port) {
            handed_out.push(port);
            return (listener, port);
        }
        refused.push(listener);
    }
}

/// A TCP port on 127.0.0.1 for a server the test starts: free a moment ago,
/// and not handed out before in this process (`unused_tcp_listener`).
pub fn unused_tcp_port() -> u16 {
    unused_tcp_listener().1
}

/// A UDP port on 127.0.0.1 that was free a moment ago (the OS picks it).
pub fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("binding a UDP socket on 127.0.0.1")
        .port()
}

/// Whether a UDP socket is bound on 127.0.0.1:`port` (Linux
/// /proc/net/udp): how a test knows that a listener is up.
pub fn udp_port_bound(port: u16) -> bool {
    let local = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/udp")
        .map(|table| {
            table
                .lines()
                .skip(1)
                .any(|l| l.split_whitespace().nth(1) == Some(local.as_str()))
        })
        .unwrap_or(false)
}

/// Waits until `ready` holds, checking every 50 ms; false after `timeout`.
pub fn wait_until(timeout: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ready()
}
