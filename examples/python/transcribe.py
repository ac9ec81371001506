#!/usr/bin/env python3
# Copyright (C) 2026 The gst-plugin-voxtralrt authors
# SPDX-License-Identifier: MPL-2.0
"""Transcribe an audio file with the voxtralrtsink element, from Python.

Prints every word (or line) the sink posts on the bus as a
`voxtralrt-transcript` element message, with its times in seconds:

    pts: the buffer timestamp, duration: how long it is spoken,
    running: running-time .. running-time-end (the pipeline clock's time line),
    stream: stream-time .. stream-time-end (the position in the file).

The plugin is found through GST_PLUGIN_PATH (or GStreamer's plugin directory
after `meson install`):

    GST_PLUGIN_PATH=$PWD/target/release python3 examples/python/transcribe.py

Needs PyGObject with GStreamer's introspection data (Debian: python3-gi
gir1.2-gstreamer-1.0, installed by scripts/setup). Exits with status 1 and the
error on an ERROR message (a missing model file, an undecodable input).
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_AUDIO = os.path.join(REPO, "examples", "data", "sample.wav")
TEST_MODEL = os.path.join(REPO, "tests", "fixtures", "voxtral-rt-tiny.gguf")

try:
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst
except (ImportError, ValueError) as e:
    # Debian's python3-gi is in the system Python's dist-packages: a python3
    # from pyenv or a virtualenv does not see it.
    sys.exit(
        f"transcribe.py: cannot import GStreamer's Python bindings ({e}).\n"
        "Install the Debian packages python3-gi and gir1.2-gstreamer-1.0 "
        "(scripts/setup does) and run this with the system Python, /usr/bin/python3."
    )


def parse_args():
    parser = argparse.ArgumentParser(
        description="Transcribe an audio file with voxtralrtsink and print the "
        "words with their times (seconds)."
    )
    parser.add_argument(
        "audio",
        nargs="?",
        default=DEFAULT_AUDIO,
        help="any audio file GStreamer can decode (default: examples/data/sample.wav)",
    )
    parser.add_argument(
        "--model",
        default=os.environ.get("VOXTRAL_MODEL") or TEST_MODEL,
        help="Voxtral Mini 4B Realtime GGUF (default: $VOXTRAL_MODEL, else the "
        "synthetic test model tests/fixtures/voxtral-rt-tiny.gguf, which is not a "
        "speech model)",
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="CPU threads for the model (default 0 = all)"
    )
    parser.add_argument(
        "--output",
        choices=["words", "lines"],
        default="words",
        help="one message per word or per caption line (default: words)",
    )
    return parser.parse_args()


def seconds(ns):
    return f"{ns / Gst.SECOND:.3f}"


def print_transcript(s):
    """One line per voxtralrt-transcript message: its times, then the text."""
    final = "final" if s.get_value("is-final") else "partial"
    print(
        f"pts {seconds(s.get_value('pts'))} "
        f"duration {seconds(s.get_value('duration'))}  "
        f"running {seconds(s.get_value('running-time'))}..{seconds(s.get_value('running-time-end'))}  "
        f"stream {seconds(s.get_value('stream-time'))}..{seconds(s.get_value('stream-time-end'))}  "
        f"{final}  {s.get_value('text')}",
        flush=True,
    )


def main():
    args = parse_args()
    Gst.init(None)

    if Gst.ElementFactory.find("voxtralrtsink") is None:
        sys.exit(
            "transcribe.py: GStreamer has no voxtralrtsink element: build the plugin "
            "(scripts/setup) and point GST_PLUGIN_PATH at it, e.g.\n"
            f"  GST_PLUGIN_PATH={os.path.join(REPO, 'target', 'release')} {sys.argv[0]}"
        )

    # Paths are set as properties after parsing, so spaces or quotes in them
    # need no escaping in the launch line.
    pipeline = Gst.parse_launch(
        "filesrc name=src ! decodebin ! audioconvert ! audioresample ! "
        "voxtralrtsink name=sink"
    )
    pipeline.get_by_name("src").set_property("location", args.audio)
    sink = pipeline.get_by_name("sink")
    sink.set_property("model-path", args.model)
    sink.set_property("threads", args.threads)
    Gst.util_set_object_arg(sink, "output", args.output)

    bus = pipeline.get_bus()
    status = 0
    # Loading the model happens on NULL -> READY: a missing file is an ERROR
    # message, and set_state() returns FAILURE; the message says why.
    pipeline.set_state(Gst.State.PLAYING)
    while True:
        msg = bus.timed_pop_filtered(
            Gst.CLOCK_TIME_NONE,
            Gst.MessageType.ELEMENT | Gst.MessageType.EOS | Gst.MessageType.ERROR,
        )
        if msg.type == Gst.MessageType.ELEMENT:
            s = msg.get_structure()
            if s is not None and s.get_name() == "voxtralrt-transcript":
                print_transcript(s)
        elif msg.type == Gst.MessageType.EOS:
            break
        elif msg.type == Gst.MessageType.ERROR:
            err, debug = msg.parse_error()
            print(f"transcribe.py: error from {msg.src.get_name()}: {err.message}", file=sys.stderr)
            if debug:
                print(f"  ({debug})", file=sys.stderr)
            status = 1
            break
    pipeline.set_state(Gst.State.NULL)
    return status


if __name__ == "__main__":
    sys.exit(main())
