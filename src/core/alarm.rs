// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! The missing-caption alarm (`caption-alarm`): people talk and no word has
//! left for that long. Time is the input's (audio) time, as for the stall
//! watchdog, so a file behaves as live input does; speech is judged by the
//! core's one voice detector.
//!
//! The count is of talk since the last word left: speech, and the pauses
//! of talk (under `PAUSE_NS`) between it; a longer pause is not counted,
//! since nothing is missing while nobody talks. It runs from where the
//! audio heard stood when the last word left (the word's own end is
//! earlier by the latency, which is not an outage), and the alarm is raised
//! once it reaches the window, on speech; the next word that leaves clears
//! it. A quiet as long as the window before it is raised starts the count
//! afresh (a voice-like blip long ago is no outage).

use super::speech::SustainedSpeech;
use super::voice::{Frame, VAD_FRAME};
use super::Stats;
use crate::voxtral::samples_to_ns;

/// A pause in talk shorter than this counts as talk: between sentences
/// and speakers; longer is nobody talking.
const PAUSE_NS: u64 = 2_000_000_000;

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Change {
    /// Speech at `at` after the window's talk without a word; the captions
    /// stopped at `since` (where the last word ended, or the talk began).
    Raised { since: u64, at: u64 },
    /// A word starting at `at` ended the episode whose captions stopped
    /// at `since`.
    Cleared { since: u64, at: u64 },
}

/// Talk without a word out.
#[derive(Debug, Clone, Copy)]
struct Episode {
    /// Where the captions stopped.
    since: u64,
    /// Talk counted so far.
    talk_ns: u64,
    /// Where the last speech counted ends (or the count began).
    mark: u64,
}

pub(super) struct Alarm {
    window_ns: u64,
    speech: SustainedSpeech,
    /// Where the audio heard so far ends (input time).
    heard: u64,
    episode: Option<Episode>,
    /// Where speech was last heard.
    last_speech: Option<u64>,
    active: bool,
    /// The counts when the last word left, to tell what happened since.
    at_last_word: Counters,
}

impl Alarm {
    /// `None` when `window` is zero (off).
    pub(super) fn new(window: gst::ClockTime) -> Option<Alarm> {
        (window.nseconds() > 0).then(|| Alarm {
            window_ns: window.nseconds(),
            speech: SustainedSpeech::default(),
            heard: 0,
            episode: None,
            last_speech: None,
            active: false,
            at_last_word: Counters::default(),
        })
    }

    #[cfg(test)]
    fn is_active(&self) -> bool {
        self.active
    }

    /// Frames heard of audio that starts at `start` (input time).
    pub(super) fn hear(&mut self, start: u64, frames: &[Frame]) -> Option<Change> {
        let mut change = None;
        for frame in frames {
            let at = start + samples_to_ns(frame.ends_at as u64);
            self.heard = self.heard.max(at);
            let counted = self.speech.judge(frame);
            if counted == 0 {
                continue;
            }
            let onset = at.saturating_sub(samples_to_ns(u64::from(counted) * VAD_FRAME as u64));
            change = change.or(self.speech_at(onset, at));
        }
        change
    }

    fn speech_at(&mut self, onset: u64, at: u64) -> Option<Change> {
        let quiet_before = self
            .last_speech
            .is_some_and(|last| onset.saturating_sub(last) >= self.window_ns);
        if quiet_before && !self.active {
            self.episode = None;
        }
        self.last_speech = Some(at);
        let episode = self.episode.get_or_insert(Episode {
            since: onset,
            talk_ns: 0,
            mark: onset,
        });
        let pause = onset.saturating_sub(episode.mark);
        episode.talk_ns += at.saturating_sub(onset.max(episode.mark));
        if pause < PAUSE_NS {
            episode.talk_ns += pause;
        }
        episode.mark = episode.mark.max(at);
        if self.active || episode.talk_ns < self.window_ns {
            return None;
        }
        self.active = true;
        Some(Change::Raised {
            since: episode.since,
            at,
        })
    }

    /// A word from `start` to `end` (input time) left; `counts` are the
    /// element's now.
    pub(super) fn word_left(&mut self, start: u64, end: u64, counts: Counters) -> Option<Change> {
        self.at_last_word = counts;
        let cleared = self
            .episode
            .filter(|_| self.active)
            .map(|e| Change::Cleared {
                since: e.since,
                at: start,
            });
        self.active = false;
        // The count runs from what was heard when the word left; captions
        // stand still from its end on.
        self.episode = Some(Episode {
            since: end,
            talk_ns: 0,
            mark: self.heard.max(end),
        });
        cleared
    }

    /// A flush or a new segment: the input's time starts afresh. Returns
    /// where the captions of the episode on stopped, if one was.
    pub(super) fn reset(&mut self) -> Option<u64> {
        let was = self.episode.filter(|_| self.active).map(|e| e.since);
        self.speech = SustainedSpeech::default();
        self.heard = 0;
        self.episode = None;
        self.last_speech = None;
        self.active = false;
        was
    }

    /// Why the captions stopped, told from what happened since the last
    /// word left; `waiting_ns` is the audio waiting for the model now.
    pub(super) fn reason(&self, now: &Counters, waiting_ns: u64, latency_ns: u64) -> String {
        let then = &self.at_last_word;
        let skipped = samples_to_ns(now.skipped_samples - then.skipped_samples);
        if skipped > 0 || waiting_ns > latency_ns {
            return format!(
                "the machine is overloaded: the model is slower than real time ({} ms of audio \
                 skipped since the last word, {} ms waiting)",
                skipped / 1_000_000,
                waiting_ns / 1_000_000
            );
        }
        let lost =
            (now.reconnects - then.reconnects) + (now.server_failures - then.server_failures);
        if lost > 0 {
            return format!(
                "the server is unreachable or failing ({lost} connections lost or refused since \
                 the last word)"
            );
        }
        match now.stalls - then.stalls {
            0 => "the model is silent over speech".to_owned(),
            n => format!(
                "the model is silent over speech ({n} watchdog restarts since the last word)"
            ),
        }
    }
}

/// The counts that tell why captions stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counters {
    pub skipped_samples: u64,
    pub reconnects: u64,
    pub server_failures: u64,
    pub stalls: u64,
}

impl Counters {
    pub(super) fn of(stats: &Stats) -> Counters {
        Counters {
            skipped_samples: stats.skipped_samples,
            reconnects: stats.reconnects,
            server_failures: stats.servers.iter().map(|s| s.failures).sum(),
            stalls: stats.stalls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME_NS: u64 = 16_000_000;

    /// `n` frames of speech (score 1) or not (score 0), from `start`.
    fn frames(n: usize, voiced: bool) -> Vec<Frame> {
        (1..=n)
            .map(|k| Frame {
                score: if voiced { 1.0 } else { 0.0 },
                ends_at: k * VAD_FRAME,
            })
            .collect()
    }

    fn alarm(window_ms: u64) -> Alarm {
        Alarm::new(gst::ClockTime::from_mseconds(window_ms)).unwrap()
    }

    /// Feeds `secs` of speech or quiet from `from` (ns); the changes.
    fn hear(a: &mut Alarm, from: u64, secs: u64, voiced: bool) -> Vec<Change> {
        let per_second = (1_000_000_000 / FRAME_NS) as usize;
        (0..secs)
            .filter_map(|s| a.hear(from + s * 1_000_000_000, &frames(per_second, voiced)))
            .collect()
    }

    #[test]
    fn speech_without_words_for_the_window_raises_it_and_a_word_clears_it() {
        let mut a = alarm(3000);
        let changes = hear(&mut a, 0, 5, true);
        let [Change::Raised { since, at }] = changes[..] else {
            panic!("{changes:?}");
        };
        assert!(since < 300_000_000, "{since}");
        assert!(at - since >= 3_000_000_000 && at - since < 3_100_000_000);
        assert!(a.is_active());
        let cleared = a.word_left(5_000_000_000, 5_200_000_000, Counters::default());
        assert_eq!(
            cleared,
            Some(Change::Cleared {
                since,
                at: 5_000_000_000
            })
        );
        assert!(!a.is_active());
    }

    #[test]
    fn the_window_counts_from_where_the_last_word_left() {
        let mut a = alarm(3000);
        assert!(hear(&mut a, 0, 3, true).is_empty());
        // A word ending at 1.5 s leaves with 3 s heard: its lag is no
        // outage.
        assert_eq!(
            a.word_left(1_000_000_000, 1_500_000_000, Counters::default()),
            None
        );
        let changes = hear(&mut a, 3_000_000_000, 4, true);
        let [Change::Raised { since, at }] = changes[..] else {
            panic!("{changes:?}");
        };
        assert_eq!(since, 1_500_000_000);
        assert!((5_900_000_000..6_100_000_000).contains(&at), "{at}");
    }

    #[test]
    fn a_pause_longer_than_talk_has_is_not_counted() {
        let mut a = alarm(3000);
        // 2 s of talk, 2 s of quiet, then talk: raised 1 s into it.
        assert!(hear(&mut a, 0, 2, true).is_empty());
        assert!(hear(&mut a, 2_000_000_000, 2, false).is_empty());
        let changes = hear(&mut a, 4_000_000_000, 2, true);
        let [Change::Raised { since, at }] = changes[..] else {
            panic!("{changes:?}");
        };
        assert!(since < 300_000_000, "{since}");
        assert!((4_900_000_000..5_300_000_000).contains(&at), "{at}");
    }

    #[test]
    fn silence_never_raises_it_and_a_long_quiet_starts_the_count_afresh() {
        let mut a = alarm(3000);
        assert!(hear(&mut a, 0, 60, false).is_empty());
        // 1 s of speech nobody captions, 10 s of quiet, then 2 s of speech:
        // no episode of 3 s.
        assert!(hear(&mut a, 60_000_000_000, 1, true).is_empty());
        assert!(hear(&mut a, 61_000_000_000, 10, false).is_empty());
        assert!(hear(&mut a, 71_000_000_000, 2, true).is_empty());
        assert!(!a.is_active());
    }

    #[test]
    fn the_reason_names_what_happened_since_the_last_word() {
        let a = alarm(3000);
        let quiet = Counters::default();
        assert_eq!(
            a.reason(&quiet, 0, 1_500_000_000),
            "the model is silent over speech"
        );
        let skipped = Counters {
            skipped_samples: 16_000,
            ..quiet
        };
        assert!(a
            .reason(&skipped, 0, 1_500_000_000)
            .starts_with("the machine is overloaded"));
        assert!(a
            .reason(&quiet, 2_000_000_000, 1_500_000_000)
            .starts_with("the machine is overloaded"));
        let lost = Counters {
            reconnects: 2,
            ..quiet
        };
        assert!(a
            .reason(&lost, 0, 1_500_000_000)
            .starts_with("the server is unreachable"));
        let restarted = Counters { stalls: 3, ..quiet };
        assert!(a
            .reason(&restarted, 0, 1_500_000_000)
            .contains("(3 watchdog restarts since the last word)"));
    }
}
