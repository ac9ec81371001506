#!/usr/bin/env python3
# Copyright (C) 2026 The gst-plugin-voxtralrt authors
# SPDX-License-Identifier: MPL-2.0
"""Reads a caption file with a third-party reader and prints, as one JSON
object, what a viewer would see and every problem the reader reported.

    read_captions.py READER KIND FILE

READER: ttconv, pycaption or imschrm; KIND: scc, ttml, srt or vtt (imschrm:
ttml).
Output: {"captions": [{"begin": s, "end": s or null, "text": "..."}],
         "problems": ["..."]}
Problems are the reader's log records at WARNING and above, Python
warnings (but two that bs4 raises on any TTML pycaption reads, see below),
errors it raised, and (imschrm) the hypothetical render model's errors and
warnings. Rows and lines of a caption are joined with "\\n".
Run with the readers' venv (scripts/setup makes it; see tests/readers/).
"""

import io
import json
import logging
import sys
import warnings
import xml.etree.ElementTree as et


class Problems(logging.Handler):
    """Every log record at WARNING or above, from any logger."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(f"{record.name}: {record.levelname}: {record.getMessage()}")


def isd_text(element):
    """The text an ISD element shows, line breaks as newlines."""
    from ttconv import model

    if isinstance(element, model.Text):
        return element.get_text()
    if isinstance(element, model.Br):
        return "\n"
    parts = [isd_text(child) for child in element]
    text = "".join(parts)
    if isinstance(element, model.P):
        text = text.strip() + "\n"
    return text


def ttconv_model(kind, content):
    if kind == "scc":
        import ttconv.scc.reader

        return ttconv.scc.reader.to_model(content)
    if kind == "srt":
        import ttconv.srt.reader

        return ttconv.srt.reader.to_model(io.StringIO(content))
    if kind == "vtt":
        import ttconv.vtt.reader

        return ttconv.vtt.reader.to_model(io.StringIO(content))
    import ttconv.imsc.reader

    return ttconv.imsc.reader.to_model(et.ElementTree(et.fromstring(content)))


def ttconv_captions(kind, content):
    """What is on screen between each of the document's significant times."""
    from ttconv.isd import ISD

    doc = ttconv_model(kind, content)
    times = ISD.significant_times(doc)
    offsets = list(times)
    captions = []
    for i, begin in enumerate(offsets):
        isd = ISD.from_model(doc, begin, times)
        text = "\n".join(
            line.strip()
            for region in isd
            for line in isd_text(region).strip().split("\n")
            if line.strip()
        )
        end = float(offsets[i + 1]) if i + 1 < len(offsets) else None
        if not text:
            continue
        if captions and captions[-1]["text"] == text and captions[-1]["end"] == float(begin):
            captions[-1]["end"] = end
            continue
        captions.append({"begin": float(begin), "end": end, "text": text})
    return captions


def pycaption_captions(kind, content):
    from pycaption import DFXPReader, SCCReader, SRTReader, WebVTTReader

    reader = {"scc": SCCReader, "srt": SRTReader, "vtt": WebVTTReader}.get(kind, DFXPReader)()
    caption_set = reader.read(content)
    captions = []
    for lang in caption_set.get_languages():
        for caption in caption_set.get_captions(lang):
            text = "\n".join(l.strip() for l in caption.get_text().split("\n") if l.strip())
            captions.append(
                {
                    "begin": caption.start / 1e6,
                    "end": None if caption.end is None else caption.end / 1e6,
                    "text": text,
                }
            )
    return captions


def imschrm_check(content, problems):
    """Runs the IMSC hypothetical render model over the document."""
    import imschrm.doc_sequence
    import imschrm.hrm

    class Handler(imschrm.hrm.EventHandler):
        def error(self, msg, doc_index, time_offset, available_time, stats):
            problems.append(f"imschrm: ERROR: {msg} at {float(time_offset):.3f}s")

        def warn(self, msg, doc_index, time_offset, available_time, stats):
            problems.append(f"imschrm: WARNING: {msg} at {float(time_offset):.3f}s")

    imschrm.hrm.validate(imschrm.doc_sequence.iter_isd(iter([(0, None, content)])), Handler())
    return ttconv_captions("ttml", content)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    reader, kind, path = sys.argv[1:]
    with open(path, encoding="utf-8") as f:
        content = f.read()

    handler = Problems()
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.WARNING)
    problems = []
    captions = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Not about the file: pycaption's DFXPReader parses every document
        # with BeautifulSoup's HTML parser through a deprecated bs4 call, so
        # bs4 warns about both on any TTML, pycaption's own DFXP included.
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message="It looks like you're using an HTML parser")
        try:
            if reader == "ttconv":
                captions = ttconv_captions(kind, content)
            elif reader == "pycaption":
                captions = pycaption_captions(kind, content)
            elif reader == "imschrm":
                captions = imschrm_check(content, problems)
            else:
                sys.exit(f"unknown reader {reader!r}: ttconv, pycaption or imschrm")
        except Exception as e:  # the reader refused the file: a problem to report
            problems.append(f"{reader} raised {type(e).__name__}: {e}")
    problems += handler.messages
    problems += [f"{w.category.__name__}: {w.message}" for w in caught]
    json.dump({"captions": captions, "problems": problems}, sys.stdout, ensure_ascii=False)
    print()


if __name__ == "__main__":
    main()
