// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! How many CPU threads a stream's session computes with.
//!
//! ggml's CPU threads meet at a barrier after every operation, and a thread
//! waiting there spins. When a machine has no idle core for each of them (a
//! video encoder, other channels, the tests' other pipelines), one is
//! preempted and the others spin until it runs again: on 2 cores beside one
//! busy loop the tiny model took 7.5 s of CPU at 2 threads for what 1 thread
//! does in 0.8 s. So `threads=0` asks for a share that leaves room for the
//! rest of the machine.

/// The most threads `threads=0` gives a stream: the decoder is bound by
/// memory bandwidth, so more threads add little and risk more waiting.
pub const MAX_AUTO_THREADS: u32 = 4;

/// `threads=0`: half the CPUs this process may use, shared among its local
/// streams, between 1 and [`MAX_AUTO_THREADS`].
pub fn auto_threads(cpus: usize, streams: usize) -> u32 {
    let share = cpus / (2 * streams.max(1));
    u32::try_from(share)
        .unwrap_or(MAX_AUTO_THREADS)
        .clamp(1, MAX_AUTO_THREADS)
}

/// The threads for a stream: `requested`, or with 0 the automatic share
/// when `streams` local streams (this one included) are open. The CPUs
/// counted are those the process may use: its affinity and, in a container,
/// its CPU quota.
pub fn resolve(requested: u32, streams: usize) -> u32 {
    if requested > 0 {
        return requested;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    auto_threads(cpus, streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_two_core_machine_gives_one_thread() {
        assert_eq!(auto_threads(2, 1), 1);
        assert_eq!(auto_threads(1, 1), 1);
    }

    #[test]
    fn half_the_cpus_go_to_one_stream_up_to_the_cap() {
        assert_eq!(auto_threads(4, 1), 2);
        assert_eq!(auto_threads(8, 1), 4);
        assert_eq!(auto_threads(64, 1), MAX_AUTO_THREADS);
    }

    #[test]
    fn streams_share_the_half() {
        assert_eq!(auto_threads(16, 2), 4);
        assert_eq!(auto_threads(16, 4), 2);
        assert_eq!(auto_threads(16, 8), 1);
        assert_eq!(auto_threads(16, 100), 1);
    }

    #[test]
    fn a_thread_count_that_is_set_is_kept() {
        assert_eq!(resolve(3, 10), 3);
        assert!((1..=MAX_AUTO_THREADS).contains(&resolve(0, 1)));
    }
}
