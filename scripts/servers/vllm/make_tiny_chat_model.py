"""Writes a tiny chat model in Hugging Face's layout (config.json,
model.safetensors, tokenizer.json with a chat template) that vLLM serves on
/v1/chat/completions, for the translation tests against a real server.

Its weights are made, not random, so that its answer is known: the one layer
is zeroed (attention and MLP add nothing to the residual stream), the
embeddings are the identity and lm_head a successor table, so greedy decoding
goes from the prompt's last token (the ':' of "assistant :") to "hola", then
"mundo", then the end of sequence. Every prompt gets the answer "hola mundo",
streamed in several chunks or whole: the protocol is vLLM's own, the
translation means nothing (the chat double of the tests checks content).

usage: make_tiny_chat_model.py OUT_DIR
"""
import json
import pathlib
import sys

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, models, pre_tokenizers

DIM = 128  # the identity embedding needs a dimension per token
FFN = 256
HEADS = 2
SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]
WORDS = ["system", "user", "assistant", ":", "hola", "mundo"]
# Successor of each token under greedy decoding; any token not named goes to
# "hola", so whatever the prompt ends with, the answer is "hola mundo".
NEXT = {"hola": "mundo", "mundo": "</s>"}
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant :{% endif %}"
)


def vocabulary():
    names = SPECIAL + WORDS
    names += [f"<unused{i}>" for i in range(DIM - len(names))]
    return {name: i for i, name in enumerate(names)}


def weights(vocab):
    zeros = torch.zeros
    ones = torch.ones
    successor = zeros(DIM, DIM)
    for name, i in vocab.items():
        successor[vocab[NEXT.get(name, "hola")], i] = 1.0
    return {
        "model.embed_tokens.weight": torch.eye(DIM),
        "model.layers.0.input_layernorm.weight": ones(DIM),
        "model.layers.0.self_attn.q_proj.weight": zeros(DIM, DIM),
        "model.layers.0.self_attn.k_proj.weight": zeros(DIM, DIM),
        "model.layers.0.self_attn.v_proj.weight": zeros(DIM, DIM),
        "model.layers.0.self_attn.o_proj.weight": zeros(DIM, DIM),
        "model.layers.0.post_attention_layernorm.weight": ones(DIM),
        "model.layers.0.mlp.gate_proj.weight": zeros(FFN, DIM),
        "model.layers.0.mlp.up_proj.weight": zeros(FFN, DIM),
        "model.layers.0.mlp.down_proj.weight": zeros(DIM, FFN),
        "model.norm.weight": ones(DIM),
        "lm_head.weight": successor,
    }


def config(vocab):
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": DIM,
        "intermediate_size": FFN,
        "num_hidden_layers": 1,
        "num_attention_heads": HEADS,
        "num_key_value_heads": HEADS,
        "head_dim": DIM // HEADS,
        "hidden_act": "silu",
        "vocab_size": DIM,
        "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "bos_token_id": vocab["<s>"],
        "eos_token_id": vocab["</s>"],
        "pad_token_id": vocab["<pad>"],
        "torch_dtype": "bfloat16",
    }


def tokenizer(vocab, out):
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
        "model_max_length": 2048,
        "chat_template": CHAT_TEMPLATE,
    }, indent=1))


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    tensors = {k: v.to(torch.bfloat16).contiguous() for k, v in weights(vocab).items()}
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config(vocab), indent=1))
    (out / "generation_config.json").write_text(json.dumps({
        "bos_token_id": vocab["<s>"], "eos_token_id": vocab["</s>"],
    }))
    tokenizer(vocab, out)
    print(f"wrote the tiny chat model to {out}")


if __name__ == "__main__":
    main()
