#!/usr/bin/env python3
"""Runs a modeling file in PyTorch, and compares tx's outputs with it.

usage: torch_ref.py run MODELING CONFIG DIR [--entry C] [--layer-idx N]
                       [--prefix P] [--tokens T] [--seed S]
       torch_ref.py compare DIR OUT.npy [--rtol R] [--perturb]

`run` imports MODELING as Python, builds the entry class on CONFIG (a
SimpleNamespace of config.json) with random weights, calls forward on
random inputs chosen by parameter name as tx.frontend maps them
(hidden_states [1, T, hidden]; position_embeddings (cos, sin), each
[1, T, head_dim] with the halves repeated, as HF's rotary module gives
them; attention_mask the additive causal mask) and writes, for tx-run:
DIR/x.npy, DIR/cos.npy, DIR/sin.npy (cos/sin as [T, head_dim/2]),
DIR/weights/<prefix><name>.npy, DIR/model.safetensors (the same tensors)
and DIR/expected.npy. `compare` checks max|tx - torch| <= R * max|torch|
(R = 1e-5) and prints the error; --perturb adds 1e-4 * max|torch| to one
element of tx's output first (to show the check fails)."""
import argparse
import importlib.util
import json
import math
import os
import sys
import types

import numpy as np

FORWARD_ARGS = {
    "hidden_states": "activation", "x": "activation", "hidden": "activation",
    "h": "activation", "inputs_embeds": "activation",
    "position_embeddings": "rope", "cos": "cos", "sin": "sin",
    "attention_mask": "mask", "mask": "mask", "causal_mask": "mask",
    "shared_kv_states": "container",
}


def run(a):
    import torch
    torch.manual_seed(a.seed)
    with open(a.config) as f:
        cfg = types.SimpleNamespace(**json.load(f))
    spec = importlib.util.spec_from_file_location("modeling", a.modeling)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = getattr(mod, a.entry)
    import inspect
    kwargs = {}
    for name in list(inspect.signature(cls.__init__).parameters)[1:]:
        if name in ("config", "args", "cfg", "params", "model_args"):
            kwargs[name] = cfg
        elif name in ("layer_idx", "layer_id", "layer_index"):
            kwargs[name] = a.layer_idx
    model = cls(**kwargs).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or ".weight" not in name and "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    T = a.tokens
    hidden = getattr(cfg, "hidden_size", None) or getattr(cfg, "dim")
    heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_heads")
    head_dim = getattr(cfg, "head_dim", hidden // heads)
    x = torch.randn(1, T, hidden)
    inv = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    ang = torch.arange(T).float()[:, None] * inv[None, :]
    cos_h, sin_h = ang.cos(), ang.sin()
    cos = torch.cat([cos_h, cos_h], -1)[None]
    sin = torch.cat([sin_h, sin_h], -1)[None]
    mask = torch.full((T, T), float("-inf")).triu(1)[None, None]
    call = {}
    for name in list(inspect.signature(model.forward).parameters):
        kind = FORWARD_ARGS.get(name)
        if kind == "activation":
            call[name] = x
        elif kind == "rope":
            call[name] = (cos, sin)
        elif kind in ("cos", "sin"):
            call[name] = cos if kind == "cos" else sin
        elif kind == "mask":
            call[name] = mask
        elif kind == "container":
            call[name] = {}
    with torch.no_grad():
        out = model(**call)
    while isinstance(out, (tuple, list)):
        out = out[0]
    os.makedirs(os.path.join(a.dir, "weights"), exist_ok=True)
    np.save(os.path.join(a.dir, "x.npy"), x[0].numpy())
    np.save(os.path.join(a.dir, "cos.npy"), cos_h.numpy())
    np.save(os.path.join(a.dir, "sin.npy"), sin_h.numpy())
    np.save(os.path.join(a.dir, "expected.npy"), out[0].numpy())
    tensors = {a.prefix + k: v.numpy() for k, v in model.state_dict().items()}
    for k, v in tensors.items():
        np.save(os.path.join(a.dir, "weights", k + ".npy"), v)
    try:
        from tx.safetensors import save_file
        save_file(tensors, os.path.join(a.dir, "model.safetensors"))
    except ImportError:
        pass
    print("torch: %s forward on %d tokens, %d weight tensors, output %s"
          % (a.entry, T, len(tensors), "x".join(map(str, out[0].shape))))


def compare(a):
    ref = np.load(os.path.join(a.dir, "expected.npy")).astype(np.float64)
    got = np.load(a.out).astype(np.float64)
    if a.perturb:
        got.flat[got.size // 2] += 1e-4 * np.abs(ref).max()
    if ref.shape != got.shape:
        sys.exit("FAIL: shape %s, torch gives %s" % (got.shape, ref.shape))
    err = np.abs(got - ref).max() / np.abs(ref).max()
    ok = err <= a.rtol
    print("%s: max error %.2e of max |torch| (tolerance %.0e)"
          % ("OK" if ok else "FAIL", err, a.rtol))
    sys.exit(0 if ok else 1)


p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="cmd", required=True)
r = sub.add_parser("run")
r.add_argument("modeling")
r.add_argument("config")
r.add_argument("dir")
r.add_argument("--entry", required=True)
r.add_argument("--layer-idx", type=int, default=0)
r.add_argument("--prefix", default="")
r.add_argument("--tokens", type=int, default=7)
r.add_argument("--seed", type=int, default=0)
c = sub.add_parser("compare")
c.add_argument("dir")
c.add_argument("out")
c.add_argument("--rtol", type=float, default=1e-5)
c.add_argument("--perturb", action="store_true")
a = p.parse_args()
run(a) if a.cmd == "run" else compare(a)
