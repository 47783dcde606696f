#!/usr/bin/env python3
"""Writes a tiny Qwen2-architecture GGUF model with random weights, for the `real_server` tests.

No trained weights can be downloaded here. llama.cpp's own gguf-py writes the file, and the vocabulary (tokens,
merges, special ids and chat template) is copied from the vocabulary file llama.cpp ships
(models/ggml-vocab-qwen2.gguf). The weights come from a fixed seed, so the file is the same on every machine.
The model's text is noise: the tests use it for the server's protocol, not for its answers.

Usage: PYTHONPATH=<llama.cpp>/gguf-py python3 make_model.py VOCAB.gguf OUT.gguf
"""
import sys

import numpy as np
import gguf

N_EMBD, N_LAYER, N_HEAD, N_HEAD_KV, N_FF, N_CTX = 64, 2, 4, 2, 128, 32768
SEED = 20261207


def field_value(reader, name):
    """A scalar, string or array field of the vocabulary file, as Python values."""
    f = reader.fields[name]
    kind = f.types[0]
    if kind == gguf.GGUFValueType.ARRAY:
        sub = f.types[-1]
        if sub == gguf.GGUFValueType.STRING:
            return [bytes(f.parts[i]).decode("utf-8") for i in f.data]
        return [int(f.parts[i][0]) for i in f.data]
    if kind == gguf.GGUFValueType.STRING:
        return bytes(f.parts[f.data[0]]).decode("utf-8")
    return f.parts[f.data[0]][0].item()


def copy_vocabulary(reader, w):
    w.add_tokenizer_model(field_value(reader, "tokenizer.ggml.model"))
    w.add_tokenizer_pre(field_value(reader, "tokenizer.ggml.pre"))
    w.add_token_list(field_value(reader, "tokenizer.ggml.tokens"))
    w.add_token_types(field_value(reader, "tokenizer.ggml.token_type"))
    w.add_token_merges(field_value(reader, "tokenizer.ggml.merges"))
    w.add_eos_token_id(field_value(reader, "tokenizer.ggml.eos_token_id"))
    w.add_bos_token_id(field_value(reader, "tokenizer.ggml.bos_token_id"))
    w.add_pad_token_id(field_value(reader, "tokenizer.ggml.padding_token_id"))
    w.add_chat_template(field_value(reader, "tokenizer.chat_template"))
    return len(reader.fields["tokenizer.ggml.tokens"].data)


def add_weights(w, n_vocab, rng):
    def t(name, *shape, scale=0.02):
        # gguf-py takes numpy's row-major shape, the reverse of ggml's {ne0, ne1}
        w.add_tensor(name, (rng.standard_normal(shape) * scale).astype(np.float32))

    def ones(name, n):
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    n_kv = N_EMBD // N_HEAD * N_HEAD_KV
    t("token_embd.weight", n_vocab, N_EMBD)
    ones("output_norm.weight", N_EMBD)
    for i in range(N_LAYER):
        ones(f"blk.{i}.attn_norm.weight", N_EMBD)
        t(f"blk.{i}.attn_q.weight", N_EMBD, N_EMBD)
        t(f"blk.{i}.attn_k.weight", n_kv, N_EMBD)
        t(f"blk.{i}.attn_v.weight", n_kv, N_EMBD)
        t(f"blk.{i}.attn_q.bias", N_EMBD)
        t(f"blk.{i}.attn_k.bias", n_kv)
        t(f"blk.{i}.attn_v.bias", n_kv)
        t(f"blk.{i}.attn_output.weight", N_EMBD, N_EMBD)
        ones(f"blk.{i}.ffn_norm.weight", N_EMBD)
        t(f"blk.{i}.ffn_gate.weight", N_FF, N_EMBD)
        t(f"blk.{i}.ffn_up.weight", N_FF, N_EMBD)
        t(f"blk.{i}.ffn_down.weight", N_EMBD, N_FF)


def main(vocab_path, out_path):
    reader = gguf.GGUFReader(vocab_path)
    w = gguf.GGUFWriter(out_path, "qwen2")
    w.add_name("advplan tiny random qwen2")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD_KV)
    w.add_rope_freq_base(1000000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    n_vocab = copy_vocabulary(reader, w)
    add_weights(w, n_vocab, np.random.default_rng(SEED))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_model.py VOCAB.gguf OUT.gguf")
    main(sys.argv[1], sys.argv[2])
