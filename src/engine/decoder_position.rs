// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! Where the model's decoder stands in a stream, seen through the library's
//! abort polls.
//!
//! transcribe.cpp stops decoding a Voxtral Realtime stream for good when the
//! model writes its end-of-stream token, and says nothing about it: no
//! status, state or counter changes (0.4.1). What does change is how often
//! the library polls the abort callback: once on entering a feed, once for
//! the convolution stem and once per encoder batch of up to 512 frames when
//! new audio tokens are ready, once for the prompt, and once per decoder
//! step. The token count follows from the samples fed, so a feed that polls
//! less than that was cut short by the end token, and the polls say which
//! token it was.
//!
//! If the polls ever disagree with this model of the library (another
//! version, another model geometry), the watch goes blind for the stream
//! rather than guess, and says so once.

use crate::voxtral::FRAME_SAMPLES;

/// Silence the library puts before the audio: 32 tokens.
const LEFT_PAD_SAMPLES: u64 = 32 * FRAME_SAMPLES;
/// Mel window and hop, in samples.
const MEL_WINDOW: u64 = 400;
const MEL_HOP: u64 = 160;
/// Mel frames per audio token.
const MELS_PER_TOKEN: u64 = 8;
/// Encoder frames per audio token, and per encoder batch.
const ENCODER_FRAMES_PER_TOKEN: u64 = 4;
const ENCODER_BATCH: u64 = 512;
/// Tokens of the prompt before the delay: BOS and the left padding.
const PROMPT_TOKENS_BEFORE_DELAY: u64 = 1 + 32;
/// Silent tokens `finalize` adds after the audio (rounded up to a whole
/// token) beyond the prompt's: one and ten more.
const FINAL_PADDING_TOKENS: u64 = 1 + 10;

/// What a feed showed about the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It decoded every token the audio made ready.
    Decoding,
    /// It stopped: the token with this index (0 = the first token after the
    /// prompt) was its end token, and nothing after it was decoded.
    Ended { token: u64 },
    /// The polls do not match the library as known; nothing can be said.
    Blind,
}

#[derive(Debug, Clone)]
pub struct DecoderProgress {
    prompt_tokens: u64,
    fed: u64,
    /// Audio tokens the library has encoded (none before the first feed,
    /// which encodes the left padding too).
    ready: u64,
    decoder_polls: u64,
    blind: bool,
    ended: bool,
}

impl DecoderProgress {
    pub fn new(delay_tokens: u64) -> DecoderProgress {
        DecoderProgress {
            prompt_tokens: PROMPT_TOKENS_BEFORE_DELAY + delay_tokens,
            fed: 0,
            ready: 0,
            decoder_polls: 0,
            blind: false,
            ended: false,
        }
    }

    /// Stops following the polls (a test hook: the stream then behaves as
    /// with a library it does not know).
    pub fn ignore_polls(&mut self) {
        self.blind = true;
    }

    /// Tokens the decoder has written, if it keeps up (the prompt's, then
    /// one per decoded frame): also the number of frames of the stream's
    /// audio it has decoded, since token `k` is about frame `k`.
    pub fn tokens_due(&self) -> u64 {
        self.decoder_polls_for(self.ready)
    }

    /// False once the polls disagreed with the library's known behaviour.
    pub fn can_see_the_end(&self) -> bool {
        !self.blind
    }

    /// Takes the polls of one feed of `samples` samples.
    pub fn after_feed(&mut self, samples: u64, polls: u64) -> Verdict {
        self.fed += samples;
        self.judge(tokens_ready(self.fed), polls)
    }

    /// Takes the polls of `finalize`, which pads the audio to whole tokens
    /// and adds silence for the delay and some more.
    pub fn after_finalize(&mut self, polls: u64) -> Verdict {
        let padded = self.fed.div_ceil(FRAME_SAMPLES) + FINAL_PADDING_TOKENS;
        self.judge(self.prompt_tokens - 1 + padded, polls)
    }

    fn judge(&mut self, ready: u64, polls: u64) -> Verdict {
        let ready_before = std::mem::replace(&mut self.ready, ready);
        if self.blind || ready < ready_before {
            // Fewer tokens than before: fed after finalize, which the
            // library refuses; nothing to follow.
            return self.go_blind();
        }
        if self.ended {
            return Verdict::Ended {
                token: self.decoder_polls - 1,
            };
        }
        let expected = self.decoder_polls_for(ready) - self.decoder_polls_for(ready_before);
        let Some(decoder) = polls.checked_sub(other_polls(ready - ready_before)) else {
            return self.go_blind();
        };
        if decoder > expected {
            return self.go_blind();
        }
        self.decoder_polls += decoder;
        if decoder == expected {
            return Verdict::Decoding;
        }
        // The prompt poll cannot be an end token: the library only checks
        // the tokens of decoder steps.
        if self.decoder_polls < 2 {
            return self.go_blind();
        }
        self.ended = true;
        Verdict::Ended {
            token: self.decoder_polls - 1,
        }
    }

    /// Decoder polls of a healthy stream once `ready` tokens are ready: the
    /// prompt, then one step per token after it.
    fn decoder_polls_for(&self, ready: u64) -> u64 {
        if ready < self.prompt_tokens {
            0
        } else {
            1 + ready - self.prompt_tokens
        }
    }

    fn go_blind(&mut self) -> Verdict {
        self.blind = true;
        Verdict::Blind
    }
}

/// Audio tokens (left padding included) whose mel frames are complete once
/// `fed` samples are in.
fn tokens_ready(fed: u64) -> u64 {
    let mel_frames = (LEFT_PAD_SAMPLES + fed - MEL_WINDOW) / MEL_HOP + 1;
    mel_frames / MELS_PER_TOKEN
}

/// Polls of a feed outside the decoder, when it made `new_tokens` ready.
fn other_polls(new_tokens: u64) -> u64 {
    let entry = 1;
    if new_tokens == 0 {
        return entry;
    }
    let encoder_frames = new_tokens * ENCODER_FRAMES_PER_TOKEN;
    entry + 1 + encoder_frames.div_ceil(ENCODER_BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_ready_1520_samples_after_its_frame_starts() {
        let before = tokens_ready(5 * FRAME_SAMPLES + 1519);
        assert_eq!(tokens_ready(5 * FRAME_SAMPLES + 1520), before + 1);
        assert_eq!(tokens_ready(0), 31);
    }

    /// The polls a healthy library makes for a feed taking the stream from
    /// `before` to `after` samples.
    fn healthy_polls(progress: &DecoderProgress, before: u64, after: u64) -> u64 {
        let a = if before == 0 { 0 } else { tokens_ready(before) };
        let b = tokens_ready(after);
        other_polls(b - a) + progress.decoder_polls_for(b) - progress.decoder_polls_for(a)
    }

    #[test]
    fn the_frames_due_are_those_whose_token_has_its_look_ahead() {
        // Frame k's token needs the delay, the frame and 240 samples more.
        let delay = 6 * FRAME_SAMPLES;
        for frames in 1..50 {
            let mut progress = DecoderProgress::new(6);
            let fed = delay + frames * FRAME_SAMPLES + 240;
            progress.after_feed(fed - 1, 0);
            assert_eq!(progress.tokens_due(), frames - 1);
            progress.after_feed(1, 0);
            assert_eq!(progress.tokens_due(), frames);
        }
    }

    #[test]
    fn healthy_polls_keep_it_decoding() {
        let mut progress = DecoderProgress::new(6);
        for step in 0..100 {
            let polls = healthy_polls(&progress, step * 2560, (step + 1) * 2560);
            assert_eq!(progress.after_feed(2560, polls), Verdict::Decoding);
        }
        assert!(progress.can_see_the_end());
    }

    #[test]
    fn fewer_decoder_polls_name_the_end_token() {
        let mut progress = DecoderProgress::new(6);
        let mut fed = 0;
        for _ in 0..10 {
            let polls = healthy_polls(&progress, fed, fed + 2560);
            progress.after_feed(2560, polls);
            fed += 2560;
        }
        let steps_so_far = progress.decoder_polls - 1;
        // One of the next feed's two steps ran; it was the end token.
        let polls = healthy_polls(&progress, fed, fed + 2560) - 1;
        assert_eq!(
            progress.after_feed(2560, polls),
            Verdict::Ended {
                token: steps_so_far + 1
            }
        );
        // It stays ended, whatever comes.
        assert_eq!(
            progress.after_feed(2560, 3),
            Verdict::Ended {
                token: steps_so_far + 1
            }
        );
    }

    #[test]
    fn finalize_decodes_the_padding_after_the_audio() {
        let mut progress = DecoderProgress::new(6);
        let polls = healthy_polls(&progress, 0, 16_000);
        assert_eq!(progress.after_feed(16_000, polls), Verdict::Decoding);
        let steps_so_far = progress.decoder_polls - 1;
        // 16000 samples round up to 13 tokens; 6 + 1 + 10 silent ones follow.
        let ready = tokens_ready(16_000);
        let final_tokens = 32 + 13 + 6 + 1 + 10;
        let healthy = other_polls(final_tokens - ready) + final_tokens - ready;
        assert_eq!(progress.clone().after_finalize(healthy), Verdict::Decoding);
        assert_eq!(
            progress.after_finalize(healthy - 5),
            Verdict::Ended {
                token: steps_so_far + (final_tokens - ready) - 5
            }
        );
    }

    #[test]
    fn any_sequence_of_feeds_and_polls_gives_a_verdict() {
        // A small deterministic generator; the point is that no sequence
        // panics or names a token beyond what was fed.
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 33) % n
        };
        for _ in 0..2000 {
            let mut progress = DecoderProgress::new(next(31));
            for _ in 0..next(40) {
                let verdict = if next(10) == 0 {
                    progress.after_finalize(next(200))
                } else {
                    progress.after_feed(next(40_000), next(200))
                };
                if let Verdict::Ended { token } = verdict {
                    assert!(
                        token + progress.prompt_tokens <= progress.ready,
                        "{progress:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn polls_the_library_cannot_make_blind_it() {
        let mut too_many = DecoderProgress::new(6);
        assert_eq!(too_many.after_feed(2560, 40), Verdict::Blind);
        assert!(!too_many.can_see_the_end());
        let mut too_few = DecoderProgress::new(6);
        assert_eq!(too_few.after_feed(2560, 0), Verdict::Blind);
        let mut no_prompt = DecoderProgress::new(0);
        // Enough audio for the prompt, but no decoder poll at all.
        assert_eq!(no_prompt.after_feed(16_000, 3), Verdict::Blind);
    }
}
