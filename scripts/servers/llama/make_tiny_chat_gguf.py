"""Writes a tiny Llama-architecture chat model as one GGUF file (weights, a
SentencePiece-style vocabulary with byte fallback, a chat template) that
llama.cpp's llama-server and llama-cpp-python serve on
/v1/chat/completions, for the translation tests against real servers.

Its weights are made, not random, so that its answer is known. The one
layer is zeroed (attention and MLP add nothing to the residual stream), so
the next token depends on the last one alone: a token's embedding is the
one-hot vector of the token that follows it, and the output matrix maps
each of those vectors back to its token. Greedy decoding then walks a
fixed chain from the prompt's last token (the ':' of "assistant :"):

  --answer tiny  "hola mundo", then the end of the answer
  --answer long  "hola mundo 1 2 3 ... N" (--count N, default 500), then
                 the end: an answer that streams for a while

Any text tokenizes (bytes the vocabulary has no piece for fall back to
<0xXX> tokens), and any prompt gets the same answer: the protocol is the
server's own, the translation means nothing (the chat double of the tests
checks content).

usage: make_tiny_chat_gguf.py [--answer tiny|long] [--count N] OUT.gguf
"""
import argparse
import pathlib

import gguf
import numpy as np

SPECIAL = ["<unk>", "<s>", "</s>"]
HEADS = 2
FFN = 32
CONTEXT = 32768
CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }} : {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant :{% endif %}"
)
SPACE = "\u2581"  # SentencePiece's mark of a word start


def answer_words(answer, count):
    words = ["hola", "mundo"]
    if answer == "long":
        words += [str(i) for i in range(1, count + 1)]
    return [SPACE + w for w in words]


def vocabulary(words):
    """Tokens, their types: the special ones, the 256 bytes, the words."""
    t = gguf.TokenType
    tokens = [(s, t.CONTROL) for s in SPECIAL]
    tokens[0] = ("<unk>", t.UNKNOWN)
    tokens += [(f"<0x{b:02X}>", t.BYTE) for b in range(256)]
    tokens += [(w, t.NORMAL) for w in words]
    return tokens


def successors(tokens, words):
    """The token after each token: the next word of the answer, the end
    after its last, the first word after any other token."""
    index = {name: i for i, (name, _) in enumerate(tokens)}
    chain = [index[w] for w in words] + [index["</s>"]]
    following = np.full(len(tokens), chain[0])
    for a, b in zip(chain, chain[1:]):
        following[a] = b
    return following


def weights(n_vocab, following):
    """Embedding: one-hot of the successor's place among the answer's
    tokens; output: each place back to its token."""
    targets = sorted(set(following.tolist()))
    place = {tok: i for i, tok in enumerate(targets)}
    dim = -(-len(targets) // 32) * 32
    embed = np.zeros((n_vocab, dim), np.float32)
    output = np.zeros((n_vocab, dim), np.float32)
    for tok in range(n_vocab):
        embed[tok, place[int(following[tok])]] = 1.0
    for tok, i in place.items():
        output[tok, i] = 1.0
    zeros = lambda *shape: np.zeros(shape, np.float32)  # noqa: E731
    ones = lambda n: np.ones(n, np.float32)  # noqa: E731
    return dim, {
        "token_embd.weight": embed,
        "blk.0.attn_norm.weight": ones(dim),
        "blk.0.attn_q.weight": zeros(dim, dim),
        "blk.0.attn_k.weight": zeros(dim, dim),
        "blk.0.attn_v.weight": zeros(dim, dim),
        "blk.0.attn_output.weight": zeros(dim, dim),
        "blk.0.ffn_norm.weight": ones(dim),
        "blk.0.ffn_gate.weight": zeros(FFN, dim),
        "blk.0.ffn_up.weight": zeros(FFN, dim),
        "blk.0.ffn_down.weight": zeros(dim, FFN),
        "output_norm.weight": ones(dim),
        "output.weight": output,
    }


def check_greedy_chain(tensors, following):
    """The forward pass the server will run, for a single token: each
    token's logits must peak at its successor, and by a margin."""
    logits = tensors["token_embd.weight"] @ tensors["output.weight"].T
    best = logits.argmax(axis=1)
    assert (best == following).all(), "the greedy chain is broken"
    top2 = np.sort(logits, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] >= 1.0).all()


def write(path, answer, count):
    words = answer_words(answer, count)
    tokens = vocabulary(words)
    following = successors(tokens, words)
    dim, tensors = weights(len(tokens), following)
    check_greedy_chain(tensors, following)

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"tiny-translator-{answer}")
    w.add_context_length(CONTEXT)
    w.add_embedding_length(dim)
    w.add_block_count(1)
    w.add_feed_forward_length(FFN)
    w.add_head_count(HEADS)
    w.add_head_count_kv(HEADS)
    w.add_rope_dimension_count(dim // HEADS)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("llama")
    w.add_token_list([name for name, _ in tokens])
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types([int(kind) for _, kind in tokens])
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)
    for name, tensor in tensors.items():
        w.add_tensor(name, tensor)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"wrote {path}: {len(tokens)} tokens, dimension {dim}, answer "
          f"'{' '.join(x.lstrip(SPACE) for x in words[:4])}{' ...' if len(words) > 4 else ''}'")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer", choices=["tiny", "long"], default="tiny")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".part")
    write(tmp, args.answer, args.count)
    tmp.rename(args.out)


if __name__ == "__main__":
    main()
