"""Writes a tiny random-weight checkpoint of the Voxtral Mini 4B Realtime
architecture in Mistral's native layout (params.json, tekken.json,
consolidated.safetensors), which vLLM serves with --load-format mistral.

Every structural part of the real model is kept: the causal RoPE Whisper-style
encoder with a 750-frame sliding window, 4x downsampling into the adapter, the
Ministral decoder with delay-conditioned adaptive RMS norm and tied
embeddings, and the 12.5 Hz streaming tokenizer with a 480 ms delay. Only the
sizes shrink (about 2 M parameters, 4 MB), so the text is noise: use it for the
protocol, batching and step timing, not for words.

usage: make_tiny_checkpoint.py OUT_DIR
"""
import base64
import json
import pathlib
import sys

import torch
from safetensors.torch import save_file

SPECIAL_TOKENS = 1000  # ids below 1000 are control tokens, as in the real model
BYTE_TOKENS = 256
VOCAB = SPECIAL_TOKENS + BYTE_TOKENS

DECODER = dict(dim=256, layers=2, heads=4, kv_heads=1, head_dim=64, ffn=512, ada=32)
ENCODER = dict(dim=128, layers=2, heads=2, head_dim=64, ffn=256, mels=128)
DOWNSAMPLE = 4
DELAY_MS = 480

# The control tokens mistral_common looks up by name (the rest are unnamed).
NAMED_SPECIAL = dict(enumerate([
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]",
    "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
    "[ARGS]", "[CALL_ID]",
]))
NAMED_SPECIAL.update({
    24: "[AUDIO]", 25: "[BEGIN_AUDIO]", 26: "[OUTPUT_AUDIO]", 27: "[TRANSCRIBE]",
    28: "[THINK]", 29: "[/THINK]", 32: "[STREAMING_PAD]", 33: "[STREAMING_WORD]",
    34: "[REPEAT_AUDIO_TEXT]", 35: "[NEXT_AUDIO_TEXT]",
})
# The tekken pre-tokenizer pattern of Mistral's v13 tokenizers.
PRETOKENIZER = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def params():
    d, e = DECODER, ENCODER
    encoder_args = {
        "audio_encoding_args": {
            "sampling_rate": 16000, "frame_rate": 12.5, "num_mel_bins": e["mels"],
            "hop_length": 160, "window_size": 400, "chunk_length_s": None,
            "global_log_mel_max": 1.5, "transcription_format": "streaming",
        },
        "dim": e["dim"], "n_layers": e["layers"], "head_dim": e["head_dim"],
        "hidden_dim": e["ffn"], "n_heads": e["heads"], "n_kv_heads": e["heads"],
        "vocab_size": VOCAB, "max_source_positions": None, "use_biases": True,
        "use_cache": False, "rope_theta": 1e6, "causal": True, "norm_eps": 1e-5,
        "pos_embed": "rope", "ffn_type": "swiglu", "norm_type": "rms_norm",
        "sliding_window": 750,
    }
    return {
        "dim": d["dim"], "n_layers": d["layers"], "head_dim": d["head_dim"],
        "hidden_dim": d["ffn"], "n_heads": d["heads"], "n_kv_heads": d["kv_heads"],
        "use_biases": False, "causal": True, "rope_theta": 1e6, "norm_eps": 1e-5,
        "vocab_size": VOCAB, "model_parallel": 1, "tied_embeddings": True,
        "sliding_window": 8192, "model_max_length": 131072,
        # Without it vLLM first tries to read a Hugging Face config (+30 s).
        "max_position_embeddings": 131072,
        "multimodal": {"whisper_model_args": {
            "encoder_args": encoder_args,
            "downsample_args": {"downsample_factor": DOWNSAMPLE},
        }},
        "ada_rms_norm_t_cond": True, "ada_rms_norm_t_cond_dim": d["ada"],
    }


def tekken():
    special = [
        {"rank": r, "token_str": NAMED_SPECIAL.get(r, f"<SPECIAL_{r}>"), "is_control": True}
        for r in range(SPECIAL_TOKENS)
    ]
    vocab = [
        {"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(),
         "token_str": bytes([b]).decode("latin-1")}
        for b in range(BYTE_TOKENS)
    ]
    return {
        "config": {
            "pattern": PRETOKENIZER, "num_vocab_tokens": BYTE_TOKENS,
            "default_vocab_size": VOCAB, "default_num_special_tokens": SPECIAL_TOKENS,
            "version": "v13",
        },
        "vocab": vocab,
        "special_tokens": special,
        "audio": {
            "sampling_rate": 16000, "frame_rate": 12.5,
            "audio_encoding_config": {"num_mel_bins": ENCODER["mels"], "hop_length": 160, "window_size": 400},
            "chunk_length_s": None, "transcription_format": "streaming",
            "transcription_delay_ms": DELAY_MS,
            "streaming_look_ahead_ms": 2.5, "streaming_look_back_ms": 52.5,
            "streaming_n_left_pad_tokens": 32,
        },
    }


def weights():
    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return (torch.randn(*shape, generator=gen) * 0.02).to(torch.bfloat16)

    def ones(n):
        return torch.ones(n, dtype=torch.bfloat16)

    d, e = DECODER, ENCODER
    w = {"tok_embeddings.weight": rand(VOCAB, d["dim"]), "norm.weight": ones(d["dim"])}
    for i in range(d["layers"]):
        p = f"layers.{i}."
        q, kv = d["heads"] * d["head_dim"], d["kv_heads"] * d["head_dim"]
        w.update({
            p + "attention.wq.weight": rand(q, d["dim"]),
            p + "attention.wk.weight": rand(kv, d["dim"]),
            p + "attention.wv.weight": rand(kv, d["dim"]),
            p + "attention.wo.weight": rand(d["dim"], q),
            p + "attention_norm.weight": ones(d["dim"]),
            p + "ffn_norm.weight": ones(d["dim"]),
            p + "feed_forward.w1.weight": rand(d["ffn"], d["dim"]),
            p + "feed_forward.w2.weight": rand(d["dim"], d["ffn"]),
            p + "feed_forward.w3.weight": rand(d["ffn"], d["dim"]),
            p + "ada_rms_norm_t_cond.0.weight": rand(d["ada"], d["dim"]),
            p + "ada_rms_norm_t_cond.2.weight": rand(d["dim"], d["ada"]),
        })
    enc = "mm_streams_embeddings.embedding_module.whisper_encoder."
    w.update({
        enc + "conv_layers.0.conv.weight": rand(e["dim"], e["mels"], 3),
        enc + "conv_layers.0.conv.bias": rand(e["dim"]),
        enc + "conv_layers.1.conv.weight": rand(e["dim"], e["dim"], 3),
        enc + "conv_layers.1.conv.bias": rand(e["dim"]),
        enc + "transformer.norm.weight": ones(e["dim"]),
    })
    width = e["heads"] * e["head_dim"]
    for i in range(e["layers"]):
        p = f"{enc}transformer.layers.{i}."
        w.update({
            p + "attention.wq.weight": rand(width, e["dim"]),
            p + "attention.wq.bias": rand(width),
            p + "attention.wk.weight": rand(width, e["dim"]),  # the real model has no k bias
            p + "attention.wv.weight": rand(width, e["dim"]),
            p + "attention.wv.bias": rand(width),
            p + "attention.wo.weight": rand(e["dim"], width),
            p + "attention.wo.bias": rand(e["dim"]),
            p + "attention_norm.weight": ones(e["dim"]),
            p + "ffn_norm.weight": ones(e["dim"]),
            p + "feed_forward.w1.weight": rand(e["ffn"], e["dim"]),
            p + "feed_forward.w2.weight": rand(e["dim"], e["ffn"]),
            p + "feed_forward.w2.bias": rand(e["dim"]),
            p + "feed_forward.w3.weight": rand(e["ffn"], e["dim"]),
        })
    adapter = "mm_streams_embeddings.embedding_module.audio_language_projection."
    w[adapter + "0.weight"] = rand(d["dim"], e["dim"] * DOWNSAMPLE)
    w[adapter + "2.weight"] = rand(d["dim"], d["dim"])
    return w


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "params.json").write_text(json.dumps(params(), indent=2))
    (out / "tekken.json").write_text(json.dumps(tekken()))
    w = weights()
    save_file(w, str(out / "consolidated.safetensors"), metadata={"format": "pt"})
    print(f"wrote {out}: {len(w)} tensors, {sum(t.numel() for t in w.values()) / 1e6:.2f} M parameters")


if __name__ == "__main__":
    main()
