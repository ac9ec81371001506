"""scripts/bench/benchlib.py: what the Python benchmarks of scripts/bench/ share.

Imported, not run: ``import benchlib`` in a script of this folder (Python
puts the script's folder first on its path). Importing it sets
GST_PLUGIN_PATH to the plugin that scripts/setup builds (target/release)
unless it is set already, and SOX_OPTS to ``-R``: sox seeds its dither and
noise at random unless told, so the audio a bench makes with espeak-ng and
sox would differ in its last bits from run to run, and the random-weight
stand-ins' words with it.

- ``ROOT``, ``fixture(name)``, ``real_shape(quant)``: the repository, a test
  model of tests/fixtures/, a same-shape model of target/real-shape/
  (scripts/models/make-real-shape-model);
- ``Gst`` (``from benchlib import Gst``), ``gst()``: GStreamer's Python
  bindings (python3-gi), Gst 1.0, imported on first use (not initialised);
- ``cpu()``, ``children_cpu()``: the CPU seconds (user and system) of this
  process, and of its children that have ended;
- ``pct(values, q)``: the ``q`` quantile (0 to 1) of ``values``, nearest rank;
  NaN for none;
- ``sample_speech(seconds)``: examples/data/sample.wav's samples (S16LE,
  16 kHz, mono), looped to ``seconds``;
- ``play(pipeline, timeout_s, prog)``: a pipeline played to EOS, the
  ``stats`` of its element ``t`` and the CPU seconds it took;
- ``run(cmd)``, ``wall()``: a command run quietly (a failure ends the run);
  seconds on a monotonic clock;
- ``child(script, *args, env=None)``: ``script --child ARGS`` in a Python
  process of its own (in ``env``), the JSON of its last line of output back.
"""

import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("GST_PLUGIN_PATH", os.path.join(ROOT, "target", "release"))
os.environ.setdefault("SOX_OPTS", "-R")

RATE = 16000


def fixture(name):
    """A test model of tests/fixtures/ (voxtral-rt-tiny.gguf, ...)."""
    return os.path.join(ROOT, "tests", "fixtures", name)


def real_shape(quant="q4_k"):
    """The same-shape model that scripts/models/make-real-shape-model writes."""
    return os.path.join(ROOT, "target", "real-shape", f"voxtral-real-shape-{quant}.gguf")


def gst():
    """GStreamer's Python bindings, Gst 1.0 (not initialised)."""
    import gi

    gi.require_version("Gst", "1.0")
    from gi.repository import Gst

    return Gst


def __getattr__(name):
    # `from benchlib import Gst`: the bindings only where a script uses them.
    if name == "Gst":
        return gst()
    raise AttributeError(f"module 'benchlib' has no attribute '{name}'")


def cpu():
    """The CPU seconds (user and system) of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def children_cpu():
    """The CPU seconds (user and system) of this process's ended children."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def pct(values, q):
    """The q quantile (0 to 1) of values, nearest rank; NaN when empty."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))] if values else float("nan")


def play(pipeline, timeout_s, prog):
    """Plays `pipeline` to EOS (at most `timeout_s` s): the `stats` of its
    element named t, and the CPU seconds this process spent meanwhile. Any
    other end stops the run: "PROG: the run did not end cleanly: MESSAGE"."""
    Gst = gst()
    started = cpu()
    pipeline.set_state(Gst.State.PLAYING)
    msg = pipeline.get_bus().timed_pop_filtered(timeout_s * Gst.SECOND, Gst.MessageType.EOS | Gst.MessageType.ERROR)
    spent = cpu() - started
    stats = pipeline.get_by_name("t").get_property("stats")
    pipeline.set_state(Gst.State.NULL)
    if msg is None or msg.type != Gst.MessageType.EOS:
        sys.exit(f"{prog}: the run did not end cleanly: {msg}")
    return stats, spent


def sample_speech(seconds):
    """examples/data/sample.wav's samples (S16LE bytes), looped to `seconds`."""
    out = subprocess.run(
        ["sox", os.path.join(ROOT, "examples", "data", "sample.wav"),
         "-t", "raw", "-r", "16000", "-c", "1", "-e", "signed", "-b", "16", "-"],
        capture_output=True, check=True,
    ).stdout
    need = int(seconds * RATE) * 2
    return (out * (need // len(out) + 1))[:need]


def run(cmd):
    """Runs the command `cmd` (a list), quietly; a failure ends the run."""
    subprocess.run(cmd, check=True, capture_output=True)


def wall():
    """Seconds on a monotonic clock."""
    return time.monotonic()


def child(script, *args, env=None):
    """Runs `script --child ARGS` with this Python (in `env`, or this
    environment); the JSON of the last line it prints. A failed child ends
    the run with its stderr's end."""
    out = subprocess.run([sys.executable, script, "--child", *args],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"child failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])
