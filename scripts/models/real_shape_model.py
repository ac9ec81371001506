#!/usr/bin/env python3
"""Write a same-shape stand-in for Voxtral Mini 4B Realtime: random weights.

THIS MODEL TRANSCRIBES NOTHING. Its weights are random; it exists to measure
what the real model costs (load time, memory, real-time factor of the encoder
and the decoder) on machines that cannot download the real weights. Every
hyperparameter and every tensor shape is the real model's, so transcribe.cpp
does the same work per 80 ms token as with the published GGUF.

Usage (normally through scripts/models/make-real-shape-model, which finds or
makes a Python with the packages)::

    python3 scripts/models/real_shape_model.py [--quant q4_k|q8_0] [--seed N] [--out PATH]

Needs the PyPI packages ``gguf`` and ``numpy`` (tests/fixtures/requirements.txt).

What is written
---------------
* The hyperparameter keys and the tokenizer are written by the tiny fixture's
  generator (tests/fixtures/make_tiny_model.py: ``write_hparams`` and
  ``write_tokenizer``), with its dimensions set to the real model's below, so
  the key set stays the one the fixtures (and the loader) use. The written
  keys are read back and checked against REAL.
* Tensors: the loader's catalog (src/arch/voxtral_realtime/weights.cpp in
  transcribe-cpp-sys 0.4.1), 712 tensors. Linear weights and the tied token
  embedding are Q4_K (the bulk of a Q4_K_M file) or Q8_0; ``dec.blocks.*.ada.
  linear_2.weight`` has rows of 32, too short for Q4_K's 256-element blocks,
  and is Q8_0 in both. Conv weights are F16, 1-D tensors F32.
* Quantized blocks are written directly, never as a float matrix: random
  quants with fixed, finite block scales chosen so that each weight has mean 0
  and the standard deviation its role calls for (about 1/sqrt(fan-in)).
  Tensors are written one at a time, in chunks, so peak RSS stays well under
  1 GB.
* Token embedding rows 0..999 (the control tokens, EOS included) are zero,
  the rest std 0.02: with a tied LM head the argmax is then a normal token at
  every step, so the decoder never stops on EOS nor sits on STREAMING_PAD and
  text grows by one word per 80 ms (measuring the full decoder cost).
* Deterministic for a given seed (numpy's PCG64, fixed order and chunking).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover - the wrapper script sees to it
    sys.exit("real_shape_model.py needs the PyPI packages gguf and numpy:\n"
             "  pip install -r tests/fixtures/requirements.txt")

ROOT = Path(__file__).resolve().parents[2]  # scripts/models/ -> the repository
sys.dont_write_bytecode = True  # no __pycache__ in tests/fixtures
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import make_tiny_model as tiny  # noqa: E402  (hparams and tokenizer writers)

DEFAULT_SEED = 20260401

# The real Voxtral Mini 4B Realtime geometry, by the names make_tiny_model's
# writers read (see the field notes, "The real model's shapes").
REAL = {
    "ENC_LAYERS": 32,
    "ENC_D": 1280,
    "ENC_HEADS": 32,
    "ENC_HEAD_DIM": 64,
    "ENC_FFN": 5120,
    "N_MELS": 128,
    "ENC_MAX_POS": 1500,
    "ENC_WINDOW": 750,
    "DOWNSAMPLE": 4,
    "PROJ_IN": 1280 * 4,
    "AUDIO_LEN_PER_TOK": 8,
    "DEC_LAYERS": 26,
    "HIDDEN": 3072,
    "INTERMEDIATE": 9216,
    "DEC_HEADS": 32,
    "DEC_KV_HEADS": 8,
    "DEC_HEAD_DIM": 128,
    "DEC_WINDOW": 8192,
    "DEC_MAX_POS": 131072,
    "NUM_DELAY": 6,
    "ADA_HIDDEN": 32,
    "TIME_THETA": 10000.0,
    "PAD_ID": 32,
    "BOS_ID": 1,
    "EOS_ID": 2,
}
VOCAB = 131072
N_CONTROL = 1000  # token ids below this are special (control, stripped)

# The keys write_hparams must have written with REAL (read back after writing).
EXPECTED_KV = {
    "stt.voxtral_realtime.encoder.n_layers": 32,
    "stt.voxtral_realtime.encoder.d_model": 1280,
    "stt.voxtral_realtime.encoder.n_heads": 32,
    "stt.voxtral_realtime.encoder.n_kv_heads": 32,
    "stt.voxtral_realtime.encoder.head_dim": 64,
    "stt.voxtral_realtime.encoder.ffn_dim": 5120,
    "stt.voxtral_realtime.encoder.num_mel_bins": 128,
    "stt.voxtral_realtime.encoder.sliding_window": 750,
    "stt.voxtral_realtime.encoder.rope_theta": 1.0e6,
    "stt.voxtral_realtime.encoder.rms_norm_eps": 1.0e-5,
    "stt.voxtral_realtime.projector.downsample_factor": 4,
    "stt.voxtral_realtime.projector.input_dim": 5120,
    "stt.voxtral_realtime.decoder.n_layers": 26,
    "stt.voxtral_realtime.decoder.hidden_size": 3072,
    "stt.voxtral_realtime.decoder.intermediate_size": 9216,
    "stt.voxtral_realtime.decoder.n_heads": 32,
    "stt.voxtral_realtime.decoder.n_kv_heads": 8,
    "stt.voxtral_realtime.decoder.head_dim": 128,
    "stt.voxtral_realtime.decoder.sliding_window": 8192,
    "stt.voxtral_realtime.decoder.vocab_size": VOCAB,
    "stt.voxtral_realtime.decoder.rope_theta": 1.0e6,
    "stt.voxtral_realtime.time.embed_dim": 3072,
    "stt.voxtral_realtime.time.ada_hidden": 32,
    "stt.voxtral_realtime.streaming_pad_token_id": 32,
    "stt.frontend.num_mels": 128,
    "tokenizer.ggml.bos_token_id": 1,
    "tokenizer.ggml.eos_token_id": 2,
}

Q = gguf.GGMLQuantizationType
QUANTS = {"q4_k": Q.Q4_K, "q8_0": Q.Q8_0}

# Bytes of output a chunk of rows is generated in (bounds the RSS).
CHUNK_BYTES = 32 << 20

# Q4_K: every 32-weight sub-block gets scale SUB and min SUB (6-bit values);
# w = d*SUB*q - dmin*SUB with q uniform in 0..15 (mean 7.5, std 4.61), so
# dmin = 7.5*d gives mean 0 and d = std / (SUB*4.61). A small SUB keeps d a
# normal f16 down to std 0.005.
Q4K_SUB = 8
Q4K_Q_STD = float(np.sqrt((16 * 16 - 1) / 12.0))
# Q8_0: quants uniform in -127..127 (std 73.6).
Q8_Q_STD = float(np.sqrt((255 * 255 - 1) / 12.0))


def q4k_scales(sc: list[int], mn: list[int]) -> bytes:
    """The 12 bytes of packed 6-bit scales and mins of a Q4_K block
    (ggml's get_scale_min_k4 layout)."""
    b = bytearray(12)
    for j in range(4):
        b[j] = (sc[j] & 63) | ((sc[j + 4] >> 4) << 6)
        b[j + 4] = (mn[j] & 63) | ((mn[j + 4] >> 4) << 6)
        b[j + 8] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4)
    return bytes(b)


def f16_bytes(x: float) -> np.ndarray:
    return np.array([x], dtype=np.float16).view(np.uint8)


class Tensor:
    """One tensor of the catalog: its numpy-order shape (PyTorch order:
    Linear [out, in], Conv1d [out, in, k]), its type and how to fill it."""

    def __init__(self, name, shape, qtype, std=0.0, fill=None, zero_rows=0):
        self.name, self.shape, self.qtype = name, tuple(shape), qtype
        self.std, self.fill, self.zero_rows = std, fill, zero_rows
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        assert shape[-1] % block == 0, (name, shape, qtype)
        self.row_bytes = shape[-1] // block * size
        self.rows = int(np.prod(shape[:-1]))
        self.nbytes = self.rows * self.row_bytes

    def add_info(self, w: gguf.GGUFWriter) -> None:
        if self.qtype in (Q.F32, Q.F16):
            dt = np.float32 if self.qtype == Q.F32 else np.float16
            w.add_tensor_info(self.name, self.shape, np.dtype(dt), self.nbytes)
        else:
            w.add_tensor_info(self.name, (self.rows, self.row_bytes), np.dtype(np.uint8),
                              self.nbytes, raw_dtype=self.qtype)

    def chunks(self, rng: np.random.Generator):
        """The tensor's bytes, a chunk of rows at a time."""
        if self.fill is not None:  # small float tensors
            dt = np.float32 if self.qtype == Q.F32 else np.float16
            yield np.ascontiguousarray(self.fill(rng), dtype=dt).reshape(-1)
            return
        rows_per = max(1, CHUNK_BYTES // self.row_bytes)
        for r0 in range(0, self.rows, rows_per):
            n = min(rows_per, self.rows - r0)
            out = self._blocks(rng, n)
            z = self.zero_rows - r0
            if z > 0:
                out[: min(z, n)] = 0
            yield out

    def _blocks(self, rng: np.random.Generator, n_rows: int) -> np.ndarray:
        block, size = gguf.GGML_QUANT_SIZES[self.qtype]
        nb = n_rows * (self.shape[-1] // block)
        out = np.empty((nb, size), dtype=np.uint8)
        if self.qtype == Q.Q8_0:
            qs = np.frombuffer(rng.bytes(nb * 32), dtype=np.int8).reshape(nb, 32).copy()
            np.maximum(qs, -127, out=qs)  # -128 upsets ggml's sign-trick dot products
            out[:, 0:2] = f16_bytes(self.std / Q8_Q_STD)
            out[:, 2:] = qs.view(np.uint8)
        elif self.qtype == Q.Q4_K:
            d = self.std / (Q4K_SUB * Q4K_Q_STD)
            out[:, 0:2] = f16_bytes(d)
            out[:, 2:4] = f16_bytes(7.5 * d)
            out[:, 4:16] = np.frombuffer(q4k_scales([Q4K_SUB] * 8, [Q4K_SUB] * 8), dtype=np.uint8)
            out[:, 16:] = np.frombuffer(rng.bytes(nb * 128), dtype=np.uint8).reshape(nb, 128)
        else:
            raise AssertionError(self.qtype)
        return out.reshape(n_rows, self.row_bytes)


def catalog(quant) -> list[Tensor]:
    """Every tensor the loader asks for, in the tiny fixture's order (gate
    then up adjacent, so the loader can alias a packed gate_up)."""
    r = REAL
    enc_d, dec_h = r["ENC_D"], r["HIDDEN"]
    enc_qkv = r["ENC_HEADS"] * r["ENC_HEAD_DIM"]
    q_out, kv_out = r["DEC_HEADS"] * r["DEC_HEAD_DIM"], r["DEC_KV_HEADS"] * r["DEC_HEAD_DIM"]
    ts: list[Tensor] = []

    def lin(name, n_out, n_in, std, qtype=quant):
        ts.append(Tensor(name, (n_out, n_in), qtype, std))

    def vec(name, n, fill=None):
        ts.append(Tensor(name, (n,), Q.F32, fill=fill or (lambda rng: np.ones(n))))

    def small(n):
        return lambda rng: rng.standard_normal(n) * 0.02

    def conv(name, c_out, c_in):
        std = 1.0 / np.sqrt(3 * c_in)
        ts.append(Tensor(name, (c_out, c_in, 3), Q.F16,
                         fill=lambda rng: rng.standard_normal((c_out, c_in, 3), dtype=np.float32) * std))

    conv("enc.conv.0.weight", enc_d, r["N_MELS"])
    vec("enc.conv.0.bias", enc_d, small(enc_d))
    conv("enc.conv.1.weight", enc_d, enc_d)
    vec("enc.conv.1.bias", enc_d, small(enc_d))
    vec("enc.final_norm.weight", enc_d)
    for i in range(r["ENC_LAYERS"]):
        b = f"enc.blocks.{i}."
        vec(b + "norm_attn.weight", enc_d)
        lin(b + "attn.q.weight", enc_qkv, enc_d, 1.0 / np.sqrt(enc_d))
        vec(b + "attn.q.bias", enc_qkv, small(enc_qkv))
        lin(b + "attn.k.weight", enc_qkv, enc_d, 1.0 / np.sqrt(enc_d))
        lin(b + "attn.v.weight", enc_qkv, enc_d, 1.0 / np.sqrt(enc_d))
        vec(b + "attn.v.bias", enc_qkv, small(enc_qkv))
        lin(b + "attn.out.weight", enc_d, enc_qkv, 0.5 / np.sqrt(enc_qkv))
        vec(b + "attn.out.bias", enc_d, small(enc_d))
        vec(b + "norm_ffn.weight", enc_d)
        lin(b + "ffn.gate.weight", r["ENC_FFN"], enc_d, 1.0 / np.sqrt(enc_d))
        lin(b + "ffn.up.weight", r["ENC_FFN"], enc_d, 1.0 / np.sqrt(enc_d))
        lin(b + "ffn.down.weight", enc_d, r["ENC_FFN"], 0.5 / np.sqrt(r["ENC_FFN"]))
        vec(b + "ffn.down.bias", enc_d, small(enc_d))

    lin("proj.linear_1.weight", dec_h, r["PROJ_IN"], 1.0 / np.sqrt(r["PROJ_IN"]))
    lin("proj.linear_2.weight", dec_h, dec_h, 1.0 / np.sqrt(dec_h))

    ts.append(Tensor("dec.token_embd.weight", (VOCAB, dec_h), quant, 0.02, zero_rows=N_CONTROL))

    for i in range(r["DEC_LAYERS"]):
        b = f"dec.blocks.{i}."
        vec(b + "norm_attn.weight", dec_h)
        vec(b + "norm_ffn.weight", dec_h)
        lin(b + "attn.q.weight", q_out, dec_h, 1.0 / np.sqrt(dec_h))
        lin(b + "attn.k.weight", kv_out, dec_h, 1.0 / np.sqrt(dec_h))
        lin(b + "attn.v.weight", kv_out, dec_h, 1.0 / np.sqrt(dec_h))
        lin(b + "attn.o.weight", dec_h, q_out, 0.5 / np.sqrt(q_out))
        lin(b + "ffn.gate.weight", r["INTERMEDIATE"], dec_h, 1.0 / np.sqrt(dec_h))
        lin(b + "ffn.up.weight", r["INTERMEDIATE"], dec_h, 1.0 / np.sqrt(dec_h))
        lin(b + "ffn.down.weight", dec_h, r["INTERMEDIATE"], 0.5 / np.sqrt(r["INTERMEDIATE"]))
        lin(b + "ada.linear_1.weight", r["ADA_HIDDEN"], dec_h, 0.05)
        # Rows of 32: too short for Q4_K's 256-weight super-blocks.
        lin(b + "ada.linear_2.weight", dec_h, r["ADA_HIDDEN"], 0.01, qtype=Q.Q8_0)

    vec("dec.output_norm.weight", dec_h)
    half = dec_h // 2
    vec("dec.time_embed.inv_freq", half,
        lambda rng: 1.0 / (r["TIME_THETA"] ** (np.arange(half, dtype=np.float64) * 2.0 / dec_h)))
    return ts


def vocabulary() -> tuple[list[str], list[str]]:
    """Control tokens 0..999 (BOS 1, EOS 2, [STREAMING_PAD] 32), then
    byte-level GPT-2 pieces: a leading space ("Ġ") and ASCII letters, all
    distinct. Each token is a word of its own: random weights with a tied
    head tend to repeat one token, and a repeated piece without a space would
    be one endless word, which the element could never emit before EOS."""
    control = ["<unk>", "<s>", "</s>"] + [f"<SPECIAL_{i}>" for i in range(3, N_CONTROL)]
    control[REAL["PAD_ID"]] = "[STREAMING_PAD]"
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = []
    for k in range(VOCAB - N_CONTROL):
        s, n = "", k
        while True:
            s = letters[n % 26] + s
            n = n // 26 - 1
            if n < 0:
                break
        words.append("Ġ" + s)
    return control, words


def check_kv(path: Path, n_tensors: int) -> None:
    """Read the written hparams back: the tiny writer must have used REAL."""
    reader = gguf.GGUFReader(path)
    expected = dict(EXPECTED_KV)
    expected["stt.voxtral_realtime.encoder.n_layers"] = REAL["ENC_LAYERS"]
    expected["stt.voxtral_realtime.decoder.n_layers"] = REAL["DEC_LAYERS"]
    for key, want in expected.items():
        field = reader.get_field(key)
        if field is None:
            sys.exit(f"{path}: key {key} missing")
        got = field.contents()
        if (abs(got - want) > 1e-6 * abs(want)) if isinstance(want, float) else got != want:
            sys.exit(f"{path}: {key} = {got!r}, want {want!r}")
    n = len(reader.tensors)
    if n != n_tensors:
        sys.exit(f"{path}: {n} tensors, want {n_tensors}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quant", choices=sorted(QUANTS), default="q4_k")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--layers", metavar="ENC[,DEC]",
                    help="fewer layers (encoder, decoder; one number for both), every "
                         "layer still of the real shape: a model this machine runs "
                         "just too slowly or just fast enough (default 32,26)")
    args = ap.parse_args()
    suffix = ""
    if args.layers:
        enc, _, dec = args.layers.partition(",")
        REAL["ENC_LAYERS"], REAL["DEC_LAYERS"] = int(enc), int(dec or enc)
        if not (1 <= REAL["ENC_LAYERS"] <= 32 and 1 <= REAL["DEC_LAYERS"] <= 26):
            sys.exit("--layers: 1 to 32 encoder layers, 1 to 26 decoder layers")
        suffix = f"-layers{REAL['ENC_LAYERS']}-{REAL['DEC_LAYERS']}"
    out = args.out or ROOT / "target" / "real-shape" / f"voxtral-real-shape-{args.quant}{suffix}.gguf"
    quant = QUANTS[args.quant]

    print("NOTE: a SAME-SHAPE STAND-IN with RANDOM weights. It transcribes NOTHING "
          "(its text is random words); it exists to measure what the real "
          "Voxtral Mini 4B Realtime costs: load time, memory, real-time factor.")

    # Tiny's writers read its module globals: give them the real geometry.
    for k, v in REAL.items():
        setattr(tiny, k, v)

    tensors = catalog(quant)
    total = sum(gguf.GGUFWriter.ggml_pad(t.nbytes, gguf.GGUF_DEFAULT_ALIGNMENT) for t in tensors)
    out.parent.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(out.parent).free
    if free < total + (64 << 20):
        sys.exit(f"{out.parent}: {free / 2**30:.2f} GiB free, the model needs {total / 2**30:.2f} GiB")
    print(f"writing {out} ({args.quant}, seed {args.seed}): {len(tensors)} tensors, "
          f"{total / 2**30:.2f} GiB")

    t0 = time.monotonic()
    part = out.with_name(out.name + ".part")
    w = gguf.GGUFWriter(part, tiny.ARCH)
    w.add_string("general.name", f"voxtral-realtime same-shape stand-in ({args.quant}, random)")
    # The wrapper's path before scripts/models/, kept: a file written after
    # the move is byte for byte the one written before.
    w.add_string("general.description",
                 "Random weights in the real Voxtral Mini 4B Realtime shapes: transcribes "
                 "nothing, exists to measure cost. Written by scripts/make-real-shape-model.")
    w.add_string("stt.variant", "voxtral-rt-real-shape-random")
    tiny.write_hparams(w, VOCAB)
    tiny.write_tokenizer(w, *vocabulary())
    for t in tensors:
        t.add_info(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()

    # The tensor data, streamed (GGUFWriter.write_tensor_data wants a whole
    # tensor at once): each tensor starts aligned and is padded after.
    fout = w.fout[0]
    w.write_padding(fout, fout.tell())
    rng = np.random.default_rng(args.seed)
    done = 0
    for i, t in enumerate(tensors):
        written = 0
        for chunk in t.chunks(rng):
            chunk.tofile(fout)
            written += chunk.nbytes
        assert written == t.nbytes, (t.name, written, t.nbytes)
        w.write_padding(fout, t.nbytes)
        done += t.nbytes
        if i % 50 == 0 or i == len(tensors) - 1:
            print(f"  {i + 1}/{len(tensors)} tensors, {done / 2**30:.2f} GiB, "
                  f"{time.monotonic() - t0:.0f} s", flush=True)
    w.close()
    check_kv(part, len(tensors))
    os.replace(part, out)

    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"wrote {out}: {out.stat().st_size / 2**30:.2f} GiB in {time.monotonic() - t0:.1f} s, "
          f"peak RSS {peak_mib:.0f} MiB")
    print("Random weights: it transcribes nothing. Use it to measure cost, e.g.\n"
          f"  scripts/bench/voxtralrt --model {out} --threads 2 --audio-secs 10 --reps 1 --sections 1")


if __name__ == "__main__":
    main()
