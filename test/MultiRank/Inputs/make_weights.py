#!/usr/bin/env python3
"""Writes the unsharded weights of examples/llama_decoder_layer.mlir, each
rank's TP=2 shard of them, and the inputs of a run with T tokens.

usage: make_weights.py OUT_DIR TOKENS
  OUT_DIR/full/<tensor>.npy     unsharded checkpoint
  OUT_DIR/rank{0,1}/<tensor>.npy  rank shards (same tensor names)
  OUT_DIR/x.npy cos.npy sin.npy   inputs
"""
import os
import sys

import numpy as np

out, tokens = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(1234)
p = "model.layers.0."
hidden, head_dim, inter = 64, 16, 128


def w(rows, cols):
    return (rng.uniform(-1, 1, (rows, cols)) / np.sqrt(cols)).astype(np.float32)


full = {
    p + "input_layernorm.weight": (1 + 0.1 * rng.uniform(-1, 1, hidden)).astype(np.float32),
    p + "self_attn.q_proj.weight": w(64, hidden),
    p + "self_attn.k_proj.weight": w(32, hidden),
    p + "self_attn.v_proj.weight": w(32, hidden),
    p + "self_attn.o_proj.weight": w(hidden, 64),
    p + "post_attention_layernorm.weight": (1 + 0.1 * rng.uniform(-1, 1, hidden)).astype(np.float32),
    p + "mlp.gate_proj.weight": w(inter, hidden),
    p + "mlp.up_proj.weight": w(inter, hidden),
    p + "mlp.down_proj.weight": w(hidden, inter),
}

tp = 2
# Column-parallel: rank r holds rows [r * n / tp, (r + 1) * n / tp) of the
# output features; row-parallel: the same range of the input features.
column = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
          "mlp.gate_proj", "mlp.up_proj"}
row = {"self_attn.o_proj", "mlp.down_proj"}


def shard(name, t, r):
    base = name[len(p):-len(".weight")]
    if base in column:
        n = t.shape[0] // tp
        return t[r * n:(r + 1) * n, :]
    if base in row:
        n = t.shape[1] // tp
        return t[:, r * n:(r + 1) * n]
    return t  # norms are replicated


for d in ["full", "rank0", "rank1"]:
    os.makedirs(os.path.join(out, d), exist_ok=True)
for name, t in full.items():
    np.save(os.path.join(out, "full", name + ".npy"), np.ascontiguousarray(t))
    for r in range(tp):
        np.save(os.path.join(out, f"rank{r}", name + ".npy"),
                np.ascontiguousarray(shard(name, t, r)))

x = rng.standard_normal((tokens, hidden)).astype(np.float32)
pos = np.arange(tokens)[:, None] / (10000.0 ** (np.arange(head_dim // 2)[None, :] * 2 / head_dim))
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "cos.npy"), np.cos(pos).astype(np.float32))
np.save(os.path.join(out, "sin.npy"), np.sin(pos).astype(np.float32))
