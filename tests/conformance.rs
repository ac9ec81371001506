// Copyright (C) 2026 The gst-plugin-voxtralrt authors
// SPDX-License-Identifier: MPL-2.0

//! What GStreamer's conformance checks (gst-validate) ask of the
//! transcriber's pads: DISCONT after every SEGMENT and flush, the received
//! EOS and SEGMENT_DONE seqnums going out, buffers inside their segment and
//! in order, and the stock scenarios (play, seeks forward and backward,
//! scrubbing, state changes, pause and resume, segment seeks) finishing.
//! gst-validate itself is not packaged for Debian 12, so a checker on the
//! pads does its work here.

// Every test here runs the local engine (the client build has none).
#![cfg(feature = "local")]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gst::prelude::*;

const SECOND: u64 = 1_000_000_000;

/// A WAV file of `seconds` of a 440 Hz tone, 16 kHz mono S16LE.
fn tone_wav(name: &str, seconds: f32) -> PathBuf {
    let path = common::scratch_dir(name).join("tone.wav");
    common::write_wav(&path, &common::sine(seconds));
    path
}

/// A word as it left the transcriber.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    pts: u64,
    duration: u64,
}

/// What went through the transcriber's pads, and every rule it broke.
#[derive(Debug, Default)]
struct Record {
    violations: Vec<String>,
    /// Seqnums of the EOS and SEGMENT_DONE events that came in.
    eos_in: Vec<gst::Seqnum>,
    segment_done_in: Vec<gst::Seqnum>,
    /// Everything that went out, in order.
    out: Vec<Out>,
    expect_discont: bool,
    segment: Option<gst::FormattedSegment<gst::ClockTime>>,
    last_pts: Option<u64>,
    after_eos: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Out {
    Word(Word),
    Segment(gst::Seqnum),
    SegmentDone(gst::Seqnum),
    Eos(gst::Seqnum),
}

impl Record {
    fn words(&self) -> Vec<Word> {
        self.out
            .iter()
            .filter_map(|o| match o {
                Out::Word(w) => Some(w.clone()),
                _ => None,
            })
            .collect()
    }

    fn on_buffer(&mut self, buffer: &gst::BufferRef) {
        let (Some(pts), Some(duration)) = (buffer.pts(), buffer.duration()) else {
            self.violations
                .push(format!("buffer without PTS or duration: {buffer:?}"));
            return;
        };
        let (pts, duration) = (pts.nseconds(), duration.nseconds());
        if self.after_eos {
            self.violations.push(format!("buffer after EOS at {pts}"));
        }
        if std::mem::take(&mut self.expect_discont)
            && !buffer.flags().contains(gst::BufferFlags::DISCONT)
        {
            self.violations.push(format!(
                "buffer::missing-discont: first buffer after SEGMENT or FLUSH at {pts}"
            ));
        }
        if self.last_pts.is_some_and(|last| pts < last) {
            self.violations
                .push(format!("buffer at {pts} goes back in time"));
        }
        if let Some(segment) = &self.segment {
            let start = segment.start().map_or(0, gst::ClockTime::nseconds);
            let stop = segment.stop().map(gst::ClockTime::nseconds);
            if pts + duration <= start || stop.is_some_and(|stop| pts >= stop) {
                self.violations.push(format!(
                    "buffer {pts}+{duration} outside its segment {segment:?}"
                ));
            }
        }
        self.last_pts = Some(pts);
        let text = String::from_utf8_lossy(&buffer.map_readable().unwrap()).into_owned();
        self.out.push(Out::Word(Word {
            text,
            pts,
            duration,
        }));
    }

    fn on_event_out(&mut self, event: &gst::EventRef) {
        match event.view() {
            gst::EventView::FlushStop(_) => {
                self.expect_discont = true;
                self.last_pts = None;
                self.after_eos = false;
            }
            gst::EventView::Segment(e) => {
                self.expect_discont = true;
                self.last_pts = None;
                self.after_eos = false;
                self.segment = e.segment().downcast_ref::<gst::ClockTime>().cloned();
                self.out.push(Out::Segment(event.seqnum()));
            }
            gst::EventView::SegmentDone(_) => {
                if !self.segment_done_in.contains(&event.seqnum()) {
                    self.violations
                        .push("event::segment-done-has-wrong-seqnum".to_owned());
                }
                self.out.push(Out::SegmentDone(event.seqnum()));
            }
            gst::EventView::Eos(_) => {
                if self.eos_in.last() != Some(&event.seqnum()) {
                    self.violations
                        .push("event::eos-has-wrong-seqnum".to_owned());
                }
                self.after_eos = true;
                self.out.push(Out::Eos(event.seqnum()));
            }
            _ => {}
        }
    }

    fn on_event_in(&mut self, event: &gst::EventRef) {
        match event.type_() {
            gst::EventType::Eos => self.eos_in.push(event.seqnum()),
            gst::EventType::SegmentDone => self.segment_done_in.push(event.seqnum()),
            _ => {}
        }
    }
}

/// Watches both pads of `transcriber`.
fn watch(transcriber: &gst::Element) -> Arc<Mutex<Record>> {
    let record = Arc::new(Mutex::new(Record {
        expect_discont: true,
        ..Record::default()
    }));
    let r = record.clone();
    transcriber.static_pad("sink").unwrap().add_probe(
        gst::PadProbeType::EVENT_DOWNSTREAM,
        move |_, info| {
            if let Some(event) = info.event() {
                r.lock().unwrap().on_event_in(event);
            }
            gst::PadProbeReturn::Ok
        },
    );
    let r = record.clone();
    transcriber.static_pad("src").unwrap().add_probe(
        gst::PadProbeType::BUFFER
            | gst::PadProbeType::EVENT_DOWNSTREAM
            | gst::PadProbeType::EVENT_FLUSH,
        move |_, info| {
            let mut r = r.lock().unwrap();
            if let Some(buffer) = info.buffer() {
                r.on_buffer(buffer);
            } else if let Some(event) = info.event() {
                r.on_event_out(event);
            }
            gst::PadProbeReturn::Ok
        },
    );
    record
}

/// A pipeline under test, with its transcriber watched.
struct Under {
    pipeline: gst::Pipeline,
    record: Arc<Mutex<Record>>,
}

impl Under {
    fn new(source: &str, sink: &str) -> Under {
        common::init_plugin();
        let line = format!(
            "{source} ! voxtralrttranscriber name=tr model-path={} threads=1 ! {sink}",
            common::tiny_model().display()
        );
        let pipeline = gst::parse::launch(&line)
            .unwrap()
            .downcast::<gst::Pipeline>()
            .unwrap();
        let record = watch(&pipeline.by_name("tr").unwrap());
        Under { pipeline, record }
    }

    fn file(seconds: f32, name: &str) -> Under {
        let wav = tone_wav(name, seconds);
        Under::new(
            &format!("filesrc location={} ! wavparse", wav.display()),
            "fakesink name=out sync=true",
        )
    }

    fn live() -> Under {
        Under::new(
            "audiotestsrc is-live=true samplesperbuffer=320 ! audio/x-raw,rate=16000,channels=1",
            "fakesink name=out sync=true",
        )
    }

    /// Sets `state` and waits for it; returns how long that took.
    fn set(&self, state: gst::State) -> Duration {
        let started = Instant::now();
        self.pipeline.set_state(state).expect("state change");
        let (result, now, _) = self.pipeline.state(gst::ClockTime::from_seconds(10));
        assert!(result.is_ok(), "going to {state:?} failed");
        assert_eq!(now, state, "did not reach {state:?} within 10 s");
        started.elapsed()
    }

    fn seek(&self, flags: gst::SeekFlags, start: u64, stop: Option<u64>) -> gst::Seqnum {
        let seek = gst::event::Seek::new(
            1.0,
            flags,
            gst::SeekType::Set,
            gst::ClockTime::from_nseconds(start),
            if stop.is_some() {
                gst::SeekType::Set
            } else {
                gst::SeekType::None
            },
            stop.map(gst::ClockTime::from_nseconds),
        );
        let seqnum = seek.seqnum();
        assert!(self.pipeline.send_event(seek), "seek refused");
        seqnum
    }

    /// Waits for a message of `type_`; panics on an ERROR or after 30 s.
    fn wait_for(&self, type_: gst::MessageType) -> gst::Message {
        let bus = self.pipeline.bus().unwrap();
        let msg = bus
            .timed_pop_filtered(
                gst::ClockTime::from_seconds(30),
                &[type_, gst::MessageType::Error],
            )
            .unwrap_or_else(|| panic!("no {type_:?} within 30 s"));
        if let gst::MessageView::Error(e) = msg.view() {
            panic!("{} ({:?})", e.error(), e.debug());
        }
        msg
    }

    /// Stops the pipeline and checks every rule held.
    fn finish(self) -> Record {
        self.pipeline.set_state(gst::State::Null).unwrap();
        let record = std::mem::take(&mut *self.record.lock().unwrap());
        assert!(
            record.violations.is_empty(),
            "rules broken: {:#?}",
            record.violations
        );
        record
    }
}

// --- the flags and seqnums, each on its own --------------------------------

fn harness() -> gst_check::Harness {
    common::init_plugin();
    let mut h = gst_check::Harness::new_parse(&format!(
        "voxtralrttranscriber model-path={} threads=1",
        common::tiny_model().display()
    ));
    h.set_src_caps_str("audio/x-raw,format=F32LE,rate=16000,channels=1,layout=interleaved");
    h
}

fn f32_buffer(samples: &[f32], pts: u64) -> gst::Buffer {
    let mut buffer = gst::Buffer::from_mut_slice(common::to_f32le(samples));
    {
        let b = buffer.get_mut().unwrap();
        b.set_pts(gst::ClockTime::from_nseconds(pts));
        b.set_duration(gst::ClockTime::from_nseconds(
            samples.len() as u64 * SECOND / 16_000,
        ));
    }
    buffer
}

/// Pulls buffers and events up to and including the first event of `type_`.
fn pull_until(h: &mut gst_check::Harness, type_: gst::EventType) -> (Vec<gst::Buffer>, gst::Event) {
    let mut buffers = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        while let Some(buffer) = h.try_pull() {
            buffers.push(buffer);
        }
        while let Some(event) = h.try_pull_event() {
            if event.type_() == type_ {
                while let Some(buffer) = h.try_pull() {
                    buffers.push(buffer);
                }
                return (buffers, event);
            }
        }
        assert!(Instant::now() < deadline, "no {type_:?} within 30 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_first_buffer_after_a_segment_is_flagged_discont_and_the_others_are_not() {
    let mut h = harness();
    h.push(f32_buffer(&common::sine(3.0), 0)).unwrap();
    h.push_event(gst::event::Eos::new());
    let (buffers, _) = pull_until(&mut h, gst::EventType::Eos);
    assert!(buffers.len() > 5);
    assert!(buffers[0].flags().contains(gst::BufferFlags::DISCONT));
    assert!(buffers[1..]
        .iter()
        .all(|b| !b.flags().contains(gst::BufferFlags::DISCONT)));
}

#[test]
fn the_first_buffer_after_a_flush_is_flagged_discont() {
    for reset_time in [true, false] {
        let mut h = harness();
        h.push(f32_buffer(&common::sine(3.0), 0)).unwrap();
        h.push_event(gst::event::FlushStart::new());
        h.push_event(gst::event::FlushStop::new(reset_time));
        // A flush removes the sticky SEGMENT: data before a new one is an
        // error upstream ("Got data flow before segment event").
        h.push_event(gst::event::Segment::new(&gst::FormattedSegment::<
            gst::ClockTime,
        >::new()));
        // Drop what left before the flush.
        while h.try_pull().is_some() {}
        h.push(f32_buffer(&common::sine(3.0), 0)).unwrap();
        h.push_event(gst::event::Eos::new());
        let (buffers, _) = pull_until(&mut h, gst::EventType::Eos);
        assert!(
            buffers[0].flags().contains(gst::BufferFlags::DISCONT),
            "reset-time {reset_time}: {buffers:?}"
        );
    }
}

#[test]
fn eos_goes_out_with_the_seqnum_it_came_with() {
    let mut h = harness();
    h.push(f32_buffer(&common::sine(2.0), 0)).unwrap();
    let eos = gst::event::Eos::new();
    let seqnum = eos.seqnum();
    h.push_event(eos);
    let (_, out) = pull_until(&mut h, gst::EventType::Eos);
    assert_eq!(out.seqnum(), seqnum);
}

#[test]
fn a_gap_that_goes_on_keeps_its_seqnum() {
    let mut h = harness();
    let gap = gst::event::Gap::builder(gst::ClockTime::ZERO)
        .duration(gst::ClockTime::from_seconds(3))
        .build();
    let seqnum = gap.seqnum();
    h.push_event(gap);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let event = h.try_pull_event();
        match event {
            Some(e) if e.type_() == gst::EventType::Gap && e.seqnum() == seqnum => {
                if let gst::EventView::Gap(g) = e.view() {
                    assert_eq!(g.get().1, Some(gst::ClockTime::from_seconds(3)));
                }
                break;
            }
            _ => {
                assert!(Instant::now() < deadline, "the GAP did not go on");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

#[test]
fn segment_done_hands_on_every_word_first_and_keeps_its_seqnum() {
    let audio = common::sine(3.0);
    // The reference: the same audio ended by EOS.
    let mut h = harness();
    h.push(f32_buffer(&audio, 0)).unwrap();
    h.push_event(gst::event::Eos::new());
    let (expected, _) = pull_until(&mut h, gst::EventType::Eos);

    let mut h = harness();
    h.push(f32_buffer(&audio, 0)).unwrap();
    let done = gst::event::SegmentDone::new(gst::ClockTime::from_seconds(3));
    let seqnum = done.seqnum();
    h.push_event(done);
    let (words, out) = pull_until(&mut h, gst::EventType::SegmentDone);
    assert_eq!(out.seqnum(), seqnum);
    let summary = |b: &[gst::Buffer]| {
        b.iter()
            .map(|b| (common::text_of(b), b.pts(), b.duration()))
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&words), summary(&expected));

    // The next segment carries on.
    let mut segment = gst::FormattedSegment::<gst::ClockTime>::new();
    segment.set_base(gst::ClockTime::from_seconds(3));
    h.push_event(gst::event::Segment::new(&segment));
    h.push(f32_buffer(&audio, 0)).unwrap();
    h.push_event(gst::event::Eos::new());
    let (again, _) = pull_until(&mut h, gst::EventType::Eos);
    assert_eq!(summary(&again), summary(&expected));
    assert!(again[0].flags().contains(gst::BufferFlags::DISCONT));
}

// --- whole pipelines: seeks, segment seeks, state changes ------------------

#[test]
fn play_to_the_end() {
    let under = Under::file(4.0, "play");
    under.set(gst::State::Playing);
    under.wait_for(gst::MessageType::Eos);
    let record = under.finish();
    let words = record.words();
    assert!(words.len() > 10);
    assert!(words.last().unwrap().pts + words.last().unwrap().duration <= 4 * SECOND);
}

/// Seeks while playing: the words after each seek are of the audio after it.
fn seeks_while_playing(name: &str, plan: &[(u64, u64)]) {
    let under = Under::file(8.0, name);
    under.set(gst::State::Playing);
    for &(after_ms, to) in plan {
        std::thread::sleep(Duration::from_millis(after_ms));
        under.seek(gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE, to, None);
    }
    under.wait_for(gst::MessageType::Eos);
    let record = under.finish();
    assert_words_from(&record, plan.last().unwrap().1);
}

/// The words after the last SEGMENT are there, and all from `position` on.
fn assert_words_from(record: &Record, position: u64) {
    let after: Vec<_> = record
        .out
        .iter()
        .rev()
        .take_while(|o| !matches!(o, Out::Segment(_)))
        .filter_map(|o| match o {
            Out::Word(w) => Some(w.clone()),
            _ => None,
        })
        .collect();
    assert!(!after.is_empty(), "no words after the last seek");
    assert!(after.iter().all(|w| w.pts >= position), "{after:?}");
}

#[test]
fn seek_forward() {
    seeks_while_playing("seek-forward", &[(700, 2 * SECOND), (700, 5 * SECOND)]);
}

#[test]
fn seek_backward() {
    seeks_while_playing("seek-backward", &[(1500, SECOND), (700, 0)]);
}

#[test]
fn scrub_forward_seeking() {
    let under = Under::file(6.0, "scrub");
    under.set(gst::State::Paused);
    for step in 1..=10u64 {
        under.seek(
            gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE,
            step * SECOND / 2,
            None,
        );
        under.wait_for(gst::MessageType::AsyncDone);
    }
    under.set(gst::State::Playing);
    under.wait_for(gst::MessageType::Eos);
    let record = under.finish();
    assert_words_from(&record, 5 * SECOND);
}

#[test]
fn pause_resume_on_a_file_and_live() {
    for live in [false, true] {
        let under = if live {
            Under::live()
        } else {
            Under::file(5.0, "pause-resume")
        };
        under.set(gst::State::Playing);
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(700));
            under.set(gst::State::Paused);
            std::thread::sleep(Duration::from_millis(300));
            under.set(gst::State::Playing);
        }
        std::thread::sleep(Duration::from_millis(700));
        let record = under.finish();
        assert!(!record.words().is_empty(), "live {live}: no words");
    }
}

#[test]
fn change_state_intensive() {
    use gst::State::*;
    for live in [false, true] {
        let under = if live {
            Under::live()
        } else {
            Under::file(5.0, "change-state")
        };
        let started = Instant::now();
        for _ in 0..3 {
            for state in [
                Ready, Paused, Ready, Paused, Playing, Paused, Playing, Ready, Null,
            ] {
                under.set(state);
            }
        }
        let spent = started.elapsed();
        under.finish();
        println!("change_state_intensive (live {live}): {spent:?} for 27 changes");
    }
}

#[test]
fn a_live_pipeline_reaches_playing_without_waiting_for_the_first_word() {
    let under = Under::live();
    let mut times = vec![under.set(gst::State::Playing)];
    for _ in 0..3 {
        // Not at once: GStreamer 1.22's basesink, paused before its
        // streaming thread has left the preroll wait that PLAYING ended,
        // believes itself prerolled and then waits on the clock in PAUSED
        // (for the segment's first GAP, the full latency), so the next
        // PLAYING waits for that (traced: 1.54 s, about one run in ten).
        std::thread::sleep(Duration::from_millis(100));
        under.set(gst::State::Paused);
        times.push(under.set(gst::State::Playing));
    }
    under.finish();
    println!("PAUSED->PLAYING on a live source: {times:?}");
    // The first word comes a delay (480 ms) and a decode after the audio:
    // waiting for it is what this must not do.
    for t in &times {
        assert!(*t < Duration::from_millis(400), "{times:?}");
    }
}

#[test]
fn a_segment_seek_gives_the_words_of_the_plain_seek_before_segment_done_and_loops() {
    let (start, stop) = (SECOND, 3 * SECOND);
    // The plain seek to the same range, for reference.
    let plain = Under::file(6.0, "plain-seek");
    plain.set(gst::State::Paused);
    plain.seek(
        gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE,
        start,
        Some(stop),
    );
    plain.set(gst::State::Playing);
    plain.wait_for(gst::MessageType::Eos);
    let expected = plain.finish().words();
    assert!(expected.len() > 5);

    let looped = Under::file(6.0, "segment-seek");
    looped.set(gst::State::Paused);
    let flags = gst::SeekFlags::FLUSH | gst::SeekFlags::ACCURATE | gst::SeekFlags::SEGMENT;
    looped.seek(flags, start, Some(stop));
    looped.set(gst::State::Playing);
    looped.wait_for(gst::MessageType::SegmentDone);
    // The loop: a non-flushing segment seek to the same range.
    looped.seek(
        gst::SeekFlags::ACCURATE | gst::SeekFlags::SEGMENT,
        start,
        Some(stop),
    );
    looped.wait_for(gst::MessageType::SegmentDone);
    // Let the second SEGMENT_DONE reach the end of the text stream.
    let deadline = Instant::now() + Duration::from_secs(10);
    while looped
        .record
        .lock()
        .unwrap()
        .out
        .iter()
        .filter(|o| matches!(o, Out::SegmentDone(_)))
        .count()
        < 2
    {
        assert!(
            Instant::now() < deadline,
            "the second SEGMENT_DONE did not go out"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let record = looped.finish();
    // Each segment's words, up to its SEGMENT_DONE.
    let mut segments = vec![Vec::new()];
    for o in &record.out {
        match o {
            Out::Word(w) => segments.last_mut().unwrap().push(w.clone()),
            Out::SegmentDone(_) => segments.push(Vec::new()),
            _ => {}
        }
    }
    assert_eq!(segments.len(), 3, "{:?}", record.out);
    assert!(segments[2].is_empty(), "words after the last SEGMENT_DONE");
    let texts = |w: &[Word]| w.iter().map(|w| w.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&segments[0]), texts(&expected));
    assert_eq!(segments[0], expected, "same words at the same times");
    assert_eq!(texts(&segments[1]), texts(&expected), "the loop carries on");
    assert!(segments[1].iter().all(|w| w.pts >= start && w.pts < stop));
}

#[test]
fn a_non_flushing_seek_shows_in_the_output_promptly() {
    let under = Under::file(20.0, "non-flushing-seek");
    under.set(gst::State::Playing);
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    let running_at_seek = under.pipeline.current_running_time().unwrap();
    let seqnum = under.seek(gst::SeekFlags::ACCURATE, 10 * SECOND, None);
    // The new SEGMENT, and the first word of the new position.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut segment_after, mut word_after) = (None, None);
    while word_after.is_none() {
        {
            let record = under.record.lock().unwrap();
            let at = record.out.iter().position(|o| *o == Out::Segment(seqnum));
            if let Some(at) = at {
                segment_after.get_or_insert_with(|| started.elapsed());
                if record.out[at..].iter().any(|o| matches!(o, Out::Word(_))) {
                    word_after = Some(started.elapsed());
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "the seek did not show within 10 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let record = under.finish();
    let (segment_after, word_after) = (segment_after.unwrap(), word_after.unwrap());
    let base = record.segment.as_ref().unwrap().base().unwrap();
    println!(
        "non-flushing seek at running time {running_at_seek}: SEGMENT out after \
         {segment_after:?} (base {base}), first word after {word_after:?}"
    );
    assert!(record.words().iter().any(|w| w.pts >= 10 * SECOND));
    // Before: the SEGMENT waited behind 2 s of queued audio played out in
    // real time (1.9 s here).
    assert!(segment_after < Duration::from_secs(1), "{segment_after:?}");
    // The new segment starts in running time after all that upstream had
    // pushed, and a synchronising sink holds its first word until then. Up
    // to the queue, the text's delay and the words on their way, not the
    // file's end: before, while the seek waited for upstream's stream lock,
    // upstream ran free (a busy machine: 6.7 s ahead, then the whole file).
    assert!(
        base < running_at_seek + gst::ClockTime::from_seconds(3),
        "the new segment starts at running time {base}, the seek came at {running_at_seek}"
    );
}

/// gst-inspect-1.0 shows each blurb on a line or two: what the value does
/// and its unit, with the detail left to the guides.
#[test]
fn every_property_blurb_is_at_most_220_characters() {
    common::init_plugin();
    for name in ["voxtralrttranscriber", "voxtralrtsink"] {
        let element = gst::ElementFactory::make(name).build().unwrap();
        // The sink pads' properties too (the transcriber's `speaker`).
        let pads = element.sink_pads();
        let pad_properties = pads.iter().flat_map(|p| p.list_properties());
        for pspec in element.list_properties().into_iter().chain(pad_properties) {
            let blurb = pspec.blurb().unwrap_or_default();
            assert!(
                !blurb.is_empty() && blurb.chars().count() <= 220,
                "{name}.{}: {} characters: {blurb}",
                pspec.name(),
                blurb.chars().count()
            );
        }
    }
}
