// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Frames of 29.97 fps video and the SMPTE time codes that label them.
//!
//! Frame `n` starts at `n * 1001 / 30000` s. A non-drop-frame label counts
//! 30 frames a second, so it runs 0.1 % behind the clock (3.6 s an hour);
//! a drop-frame label skips the frame numbers 0 and 1 at the start of each
//! minute except every tenth, and so stays within a frame of the clock.

/// Nanoseconds to frames: frames = ns * FPS_NUM / (FPS_DEN * 1e9).
const FPS_NUM: u128 = 30_000;
const FPS_DEN: u128 = 1_001;
const NS: u128 = 1_000_000_000;

/// Frames in ten minutes of drop-frame labels, and in each minute after
/// the first of the ten.
const FRAMES_PER_10_MIN: u64 = 17_982;
const FRAMES_PER_DROP_MIN: u64 = 1_798;

/// The frame nearest to `ns`.
pub fn frame_at(ns: u64) -> u64 {
    ((u128::from(ns) * FPS_NUM + FPS_DEN * NS / 2) / (FPS_DEN * NS)) as u64
}

/// The first frame that starts at or after `ns`.
pub fn frame_from(ns: u64) -> u64 {
    (u128::from(ns) * FPS_NUM).div_ceil(FPS_DEN * NS) as u64
}

/// Where frame `n` starts, in ns.
pub fn frame_time(n: u64) -> u64 {
    (u128::from(n) * FPS_DEN * NS / FPS_NUM) as u64
}

/// The SMPTE label of frame `n`: `HH:MM:SS;FF` (drop-frame) or
/// `HH:MM:SS:FF`.
pub fn label(n: u64, drop_frame: bool) -> String {
    let (counted, sep) = if drop_frame {
        (drop_frame_count(n), ';')
    } else {
        (n, ':')
    };
    let frames = counted % 30;
    let seconds = counted / 30;
    format!(
        "{:02}:{:02}:{:02}{sep}{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60,
        frames
    )
}

/// The 30-a-second count that a drop-frame label shows for frame `n`: two
/// numbers are skipped at each minute not divisible by ten.
fn drop_frame_count(n: u64) -> u64 {
    let tens = n / FRAMES_PER_10_MIN;
    let rest = n % FRAMES_PER_10_MIN;
    let skipped_in_rest = if rest < 2 {
        0
    } else {
        2 * ((rest - 2) / FRAMES_PER_DROP_MIN)
    };
    n + 18 * tens + skipped_in_rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_drop_labels_count_thirty_frames_a_second() {
        assert_eq!(label(0, false), "00:00:00:00");
        assert_eq!(label(29, false), "00:00:00:29");
        assert_eq!(label(30, false), "00:00:01:00");
        assert_eq!(label(108_000, false), "01:00:00:00");
    }

    #[test]
    fn drop_frame_labels_skip_two_numbers_each_minute_but_the_tenth() {
        assert_eq!(label(1799, true), "00:00:59;29");
        assert_eq!(label(1800, true), "00:01:00;02");
        assert_eq!(label(17_981, true), "00:09:59;29");
        assert_eq!(label(17_982, true), "00:10:00;00");
        assert_eq!(label(17_983, true), "00:10:00;01");
        // One hour of 29.97 fps video is 107892 frames: the label says so.
        assert_eq!(label(107_892, true), "01:00:00;00");
    }

    #[test]
    fn drop_frame_labels_stay_within_a_frame_of_the_clock() {
        for n in (0..200_000).step_by(997) {
            let shown = drop_frame_count(n) as f64 / 30.0;
            let clock = frame_time(n) as f64 / 1e9;
            assert!(
                (shown - clock).abs() < 2.0 / 30.0,
                "frame {n}: {shown} vs {clock}"
            );
        }
    }

    #[test]
    fn frames_round_to_the_nearest_or_the_next() {
        assert_eq!(frame_at(0), 0);
        assert_eq!(frame_at(1_000_000_000), 30);
        assert_eq!(frame_from(frame_time(7)), 7);
        assert_eq!(frame_from(frame_time(7) + 1), 8);
        assert_eq!(frame_at(frame_time(12) + 16_000_000), 12);
        assert_eq!(frame_at(frame_time(12) + 18_000_000), 13);
    }
}
