#!/usr/bin/env python3
"""Write a same-layout stand-in for NVIDIA's Streaming Sortformer 4spk v2.1.

THIS MODEL DIARIZES NOTHING. Its weights are random: the speaker labels it
gives are noise. It exists so that transcribe.cpp's ``sortformer`` family can
be loaded and run where the real weights cannot be downloaded: to test the
plumbing (``--tiny``) and to measure what the real model costs (the default,
every dimension the real model's).

Usage (normally through scripts/models/make-sortformer-model, which finds or
makes a Python with the packages)::

    python3 scripts/models/sortformer_model.py [--tiny] [--dtype f16|f32|q8_0]
                                               [--seed N] [--out PATH]

Needs the PyPI packages ``gguf`` and ``numpy`` (tests/fixtures/requirements.txt);
with those exact versions the output is byte-for-byte reproducible for a seed.

What the loader reads (transcribe-cpp-sys 0.4.1)
-------------------------------------------------
* ``general.architecture = "sortformer"`` (src/arch/sortformer/model.cpp,
  ``arch.name``); ``stt.variant`` is optional.
* Hyperparameters (src/arch/sortformer/weights.cpp, read_sortformer_hparams):
  ``stt.sortformer.*`` and ``stt.frontend.*``, integers as u32, dither and
  pre_emphasis as f32, the rest strings; ``stt.sortformer.transformer.pre_ln``
  is an optional bool and must be false.
* Tensors: the FastConformer (NEST) encoder under ``enc.`` (names from
  src/arch/sortformer/model.cpp, load_conformer_weights, shapes from the
  parakeet loader it mirrors, src/arch/parakeet/weights.cpp); the projection,
  the post-LN Transformer and the heads under ``diar.`` and ``tf.``
  (src/arch/sortformer/weights.cpp, build_sortformer_weights). The sortformer
  loader checks the shapes of the ``diar.``/``tf.`` tensors only; the encoder's
  must still be right for the graph to build, so they follow parakeet's
  checked shapes.

The real geometry (the published model: 117M parameters, 971 tensors):
FastConformer 17 layers, d_model 512, 8 heads, d_ff 2048, conv kernel 9,
dw-striding subsampling x8 with 256 channels, 128 mel bins; projection
512 -> 192; Transformer 18 layers, d_model 192, 8 heads, d_ff 768; 4 speakers;
80 ms frames. The frontend keys are NeMo's (n_fft 512, window 400, hop 160,
hann, normalize "none", pre-emphasis 0.97, dither 0). The streaming defaults
the real file ships (``stt.sortformer.stream.*``, used by the DEFAULT preset)
are not known here; these are the values transcribe.cpp falls back on
(SortformerStreamParams: chunk 188, FIFO 0, speaker cache 188, update period
188). The named presets override them, and the measurements use those.

Weights: linear weights N(0, 1/fan_in) (so activations keep their scale),
norm weights 1 and biases 0, BatchNorm as identity (mean 0, var 1), other
biases and pos_bias_u/v small. Linear weights and pointwise-conv kernels are
F16 by default (the published F16 GGUF is 237 MB), or F32 / Q8_0 (Q8_0 for
linears only: conv kernels stay F16, as the loader allows F32/F16 there); the
small conv kernels and every 1-D tensor are F32.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover - the wrapper script sees to it
    sys.exit("sortformer_model.py needs the PyPI packages gguf and numpy:\n"
             "  pip install -r tests/fixtures/requirements.txt")

ROOT = Path(__file__).resolve().parents[2]  # scripts/models/ -> the repository
ARCH = "sortformer"
DEFAULT_SEED = 20260433

Q = gguf.GGMLQuantizationType
DTYPES = {"f16": Q.F16, "f32": Q.F32, "q8_0": Q.Q8_0}

# Dimensions by the names the loader's keys use.
REAL = {
    "max_speakers": 4,
    "enc_n_layers": 17,
    "enc_d_model": 512,
    "enc_n_heads": 8,
    "enc_d_ff": 2048,
    "enc_conv_kernel": 9,
    "enc_subsampling_factor": 8,
    "enc_subsampling_channels": 256,
    "num_mels": 128,
    "tf_n_layers": 18,
    "tf_d_model": 192,
    "tf_n_heads": 8,
    "tf_d_ff": 768,
}

# For plumbing tests: every loop and kernel of the real model, tiny widths.
# Subsampling, mel bins (and so the 80 ms frame) stay the real model's where
# the frontend or the frame geometry depend on them.
TINY = {
    "max_speakers": 4,
    "enc_n_layers": 2,
    "enc_d_model": 32,
    "enc_n_heads": 2,
    "enc_d_ff": 64,
    "enc_conv_kernel": 9,
    "enc_subsampling_factor": 8,
    "enc_subsampling_channels": 8,
    "num_mels": 32,
    "tf_n_layers": 2,
    "tf_d_model": 16,
    "tf_n_heads": 2,
    "tf_d_ff": 32,
}

SAMPLE_RATE = 16000
HOP = 160


def pre_encode_freq(num_mels: int) -> int:
    """Mel bins left after the three k=3, s=2, pad=1 convs of the
    non-causal dw-striding subsampling (128 -> 64 -> 32 -> 16)."""
    f = num_mels
    for _ in range(3):
        f = (f + 2 - 3) // 2 + 1
    return f


def write_hparams(w: gguf.GGUFWriter, g: dict) -> None:
    u32 = w.add_uint32
    u32("stt.sortformer.max_speakers", g["max_speakers"])
    u32("stt.sortformer.frame_hop", HOP * g["enc_subsampling_factor"])
    u32("stt.sortformer.encoder.n_layers", g["enc_n_layers"])
    u32("stt.sortformer.encoder.d_model", g["enc_d_model"])
    u32("stt.sortformer.encoder.n_heads", g["enc_n_heads"])
    u32("stt.sortformer.encoder.d_ff", g["enc_d_ff"])
    u32("stt.sortformer.encoder.conv_kernel", g["enc_conv_kernel"])
    u32("stt.sortformer.encoder.subsampling_factor", g["enc_subsampling_factor"])
    u32("stt.sortformer.encoder.subsampling_channels", g["enc_subsampling_channels"])
    u32("stt.sortformer.encoder.feat_in", g["num_mels"])
    u32("stt.sortformer.encoder.pos_emb_max_len", 5000)
    w.add_string("stt.sortformer.encoder.conv_norm_type", "batch_norm")
    u32("stt.sortformer.transformer.n_layers", g["tf_n_layers"])
    u32("stt.sortformer.transformer.d_model", g["tf_d_model"])
    u32("stt.sortformer.transformer.n_heads", g["tf_n_heads"])
    u32("stt.sortformer.transformer.d_ff", g["tf_d_ff"])
    w.add_string("stt.sortformer.transformer.activation", "relu")
    w.add_bool("stt.sortformer.transformer.pre_ln", False)
    u32("stt.sortformer.stream.chunk_len", 188)
    u32("stt.sortformer.stream.spkcache_len", 188)
    u32("stt.sortformer.stream.fifo_len", 0)
    u32("stt.sortformer.stream.spkcache_update_period", 188)
    u32("stt.frontend.sample_rate", SAMPLE_RATE)
    u32("stt.frontend.num_mels", g["num_mels"])
    u32("stt.frontend.n_fft", 512)
    u32("stt.frontend.win_length", 400)
    u32("stt.frontend.hop_length", HOP)
    w.add_string("stt.frontend.window", "hann")
    w.add_string("stt.frontend.normalize", "none")
    w.add_float32("stt.frontend.dither", 0.0)
    w.add_float32("stt.frontend.pre_emphasis", 0.97)


class Tensor:
    """One tensor: numpy-order shape (PyTorch order, the reverse of ggml's
    ne), its GGUF type and how to draw it."""

    def __init__(self, name: str, shape: tuple, qtype, kind: str, fan_in: int = 1):
        self.name, self.shape, self.qtype, self.kind, self.fan_in = name, shape, qtype, kind, fan_in
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        assert shape[-1] % block == 0, (name, shape, qtype)
        self.nbytes = int(np.prod(shape[:-1])) * (shape[-1] // block) * size

    def values(self, rng: np.random.Generator) -> np.ndarray:
        n = int(np.prod(self.shape))
        if self.kind == "ones":
            x = np.ones(n, dtype=np.float32)
        elif self.kind == "zeros":
            x = np.zeros(n, dtype=np.float32)
        elif self.kind == "small":
            x = rng.standard_normal(n, dtype=np.float32) * np.float32(0.02)
        else:  # "weight": N(0, 1/fan_in)
            x = rng.standard_normal(n, dtype=np.float32) * np.float32(1.0 / np.sqrt(self.fan_in))
        return x.reshape(self.shape)

    def encode(self, rng: np.random.Generator) -> np.ndarray:
        x = self.values(rng)
        if self.qtype == Q.F32:
            return x
        if self.qtype == Q.F16:
            return x.astype(np.float16)
        return gguf.quants.quantize(x, self.qtype)

    def add_info(self, w: gguf.GGUFWriter) -> None:
        if self.qtype in (Q.F32, Q.F16):
            dt = np.float32 if self.qtype == Q.F32 else np.float16
            w.add_tensor_info(self.name, self.shape, np.dtype(dt), self.nbytes)
        else:
            block, size = gguf.GGML_QUANT_SIZES[self.qtype]
            byte_shape = (*self.shape[:-1], self.shape[-1] // block * size)
            w.add_tensor_info(self.name, byte_shape, np.dtype(np.uint8), self.nbytes,
                              raw_dtype=self.qtype)


def catalog(g: dict, lin_type) -> list[Tensor]:
    """Every tensor the loader asks for, encoder first."""
    conv_pw = Q.F32 if lin_type == Q.F32 else Q.F16  # conv kernels: F32/F16 only
    ts: list[Tensor] = []

    def vec(name, n, kind="zeros"):
        ts.append(Tensor(name, (n,), Q.F32, kind))

    def lin(name, n_out, n_in, qtype=lin_type):
        ts.append(Tensor(name, (n_out, n_in), qtype, "weight", n_in))

    def norm(prefix, n):
        vec(prefix + ".weight", n, "ones")
        vec(prefix + ".bias", n)

    # FastConformer pre-encode (dw_striding): conv0 1 -> C (3x3, s2), then
    # twice depthwise 3x3 s2 + pointwise 1x1; out: C*F' -> d_model.
    c, d, dff = g["enc_subsampling_channels"], g["enc_d_model"], g["enc_d_ff"]
    ts.append(Tensor("enc.pre_encode.conv.0.weight", (c, 1, 3, 3), Q.F32, "weight", 9))
    vec("enc.pre_encode.conv.0.bias", c, "small")
    for dw, pw in ((2, 3), (5, 6)):
        ts.append(Tensor(f"enc.pre_encode.conv.{dw}.weight", (c, 1, 3, 3), Q.F32, "weight", 9))
        vec(f"enc.pre_encode.conv.{dw}.bias", c, "small")
        ts.append(Tensor(f"enc.pre_encode.conv.{pw}.weight", (c, c, 1, 1), conv_pw, "weight", c))
        vec(f"enc.pre_encode.conv.{pw}.bias", c, "small")
    lin("enc.pre_encode.out.weight", d, c * pre_encode_freq(g["num_mels"]))
    vec("enc.pre_encode.out.bias", d, "small")

    heads = g["enc_n_heads"]
    k = g["enc_conv_kernel"]
    for i in range(g["enc_n_layers"]):
        b = f"enc.blocks.{i}."
        norm(b + "norm_ff1", d)
        lin(b + "ff1.linear1.weight", dff, d)
        vec(b + "ff1.linear1.bias", dff, "small")
        lin(b + "ff1.linear2.weight", d, dff)
        vec(b + "ff1.linear2.bias", d, "small")
        norm(b + "norm_attn", d)
        for p in ("linear_q", "linear_k", "linear_v", "linear_out"):
            lin(b + f"attn.{p}.weight", d, d)
            vec(b + f"attn.{p}.bias", d, "small")
        lin(b + "attn.linear_pos.weight", d, d)
        ts.append(Tensor(b + "attn.pos_bias_u", (heads, d // heads), Q.F32, "small"))
        ts.append(Tensor(b + "attn.pos_bias_v", (heads, d // heads), Q.F32, "small"))
        norm(b + "norm_conv", d)
        ts.append(Tensor(b + "conv.pointwise1.weight", (2 * d, d, 1), conv_pw, "weight", d))
        vec(b + "conv.pointwise1.bias", 2 * d, "small")
        ts.append(Tensor(b + "conv.depthwise.weight", (d, 1, k), Q.F32, "weight", k))
        vec(b + "conv.depthwise.bias", d, "small")
        ts.append(Tensor(b + "conv.pointwise2.weight", (d, d, 1), conv_pw, "weight", d))
        vec(b + "conv.pointwise2.bias", d, "small")
        vec(b + "conv.bn.weight", d, "ones")
        vec(b + "conv.bn.bias", d)
        vec(b + "conv.bn.running_mean", d)
        vec(b + "conv.bn.running_var", d, "ones")
        norm(b + "norm_ff2", d)
        lin(b + "ff2.linear1.weight", dff, d)
        vec(b + "ff2.linear1.bias", dff, "small")
        lin(b + "ff2.linear2.weight", d, dff)
        vec(b + "ff2.linear2.bias", d, "small")
        norm(b + "norm_out", d)

    t, tff, spk = g["tf_d_model"], g["tf_d_ff"], g["max_speakers"]
    lin("diar.encoder_proj.weight", t, d)
    vec("diar.encoder_proj.bias", t, "small")
    for i in range(g["tf_n_layers"]):
        b = f"tf.blocks.{i}."
        norm(b + "norm_1", t)
        for p in ("q", "k", "v", "out"):
            lin(b + f"attn.{p}.weight", t, t)
            vec(b + f"attn.{p}.bias", t, "small")
        norm(b + "norm_2", t)
        lin(b + "ff.in.weight", tff, t)
        vec(b + "ff.in.bias", tff, "small")
        lin(b + "ff.out.weight", t, tff)
        vec(b + "ff.out.bias", t, "small")
    lin("diar.fc1.weight", t, t)
    vec("diar.fc1.bias", t, "small")
    # The heads are tiny (rows of 4); F32 whatever the dtype.
    lin("diar.single_spk_head.weight", spk, t, Q.F32)
    vec("diar.single_spk_head.bias", spk, "small")
    lin("diar.spk_head.weight", spk, 2 * t, Q.F32)
    vec("diar.spk_head.bias", spk, "small")
    return ts


def expected_tensors(g: dict) -> int:
    return 12 + 39 * g["enc_n_layers"] + 16 * g["tf_n_layers"] + 8


def check(path: Path, g: dict) -> None:
    """Read the file back: architecture, a few keys, the tensor count."""
    r = gguf.GGUFReader(path)
    want = {
        "general.architecture": ARCH,
        "stt.sortformer.encoder.n_layers": g["enc_n_layers"],
        "stt.sortformer.encoder.d_model": g["enc_d_model"],
        "stt.sortformer.transformer.n_layers": g["tf_n_layers"],
        "stt.sortformer.transformer.d_model": g["tf_d_model"],
        "stt.sortformer.frame_hop": HOP * g["enc_subsampling_factor"],
        "stt.frontend.num_mels": g["num_mels"],
    }
    for key, value in want.items():
        field = r.get_field(key)
        if field is None or field.contents() != value:
            sys.exit(f"{path}: {key} = {None if field is None else field.contents()!r}, "
                     f"want {value!r}")
    if len(r.tensors) != expected_tensors(g):
        sys.exit(f"{path}: {len(r.tensors)} tensors, want {expected_tensors(g)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiny", action="store_true",
                    help="tiny widths for plumbing tests (a few hundred KiB)")
    ap.add_argument("--dtype", choices=sorted(DTYPES), default="f16",
                    help="linear weights (default f16)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    g = TINY if args.tiny else REAL
    label = "tiny" if args.tiny else "real-shape"
    out = args.out or ROOT / "target" / "real-shape" / f"sortformer-{label}-{args.dtype}.gguf"
    tensors = catalog(g, DTYPES[args.dtype])
    assert len(tensors) == expected_tensors(g), len(tensors)
    n_params = sum(int(np.prod(t.shape)) for t in tensors)
    print(f"NOTE: RANDOM weights in the {label} Sortformer layout: it diarizes NOTHING "
          f"(its speaker labels are noise); it exists to test plumbing and measure cost.")
    print(f"writing {out}: {len(tensors)} tensors, {n_params:,} parameters, "
          f"{args.dtype} linears, seed {args.seed}")

    t0 = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    w = gguf.GGUFWriter(part, ARCH)
    w.add_string("general.name", f"sortformer {label} stand-in ({args.dtype}, random)")
    # The wrapper's path before scripts/models/, kept: the fixture's sha256
    # (tests/fixtures/README-sortformer-tiny.md) stays the same.
    w.add_string("general.description",
                 "Random weights in the Streaming Sortformer 4spk v2.1 layout: diarizes "
                 "nothing. Written by scripts/make-sortformer-model.")
    w.add_string("stt.variant", f"sortformer-{label}-random")
    write_hparams(w, g)
    for t in tensors:
        t.add_info(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()

    # Tensor data one tensor at a time (GGUFWriter would hold them all).
    fout = w.fout[0]
    w.write_padding(fout, fout.tell())
    rng = np.random.default_rng(args.seed)
    for t in tensors:
        data = np.ascontiguousarray(t.encode(rng))
        assert data.nbytes == t.nbytes, (t.name, data.nbytes, t.nbytes)
        data.tofile(fout)
        w.write_padding(fout, t.nbytes)
    w.close()
    check(part, g)
    os.replace(part, out)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size = out.stat().st_size
    print(f"wrote {out}: {size / 2**20:.1f} MiB in {time.monotonic() - t0:.1f} s, "
          f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
