#!/usr/bin/env python3
"""Runs a modeling file in PyTorch, and compares tx's outputs with it.

usage: torch_ref.py run MODELING CONFIG DIR [--entry C] [--layer-idx N]
                       [--prefix P] [--tokens T] [--seed S]
                       [--mask causal|none] [--checkpoint f32|bf16]
                       [--compute f32|bf16]
       torch_ref.py compare DIR OUT.npy [--rtol R] [--perturb]
                            [--expected FILE]

`run` imports MODELING as Python, builds the entry class on CONFIG (a
SimpleNamespace of config.json) with random weights, calls forward on
random inputs chosen by parameter name as tx.frontend maps them
(hidden_states [1, T, hidden]; position_embeddings (cos, sin), each
[1, T, head_dim] with the halves repeated, as HF's rotary module gives
them; attention_mask the additive causal mask, or None with --mask none)
and writes, for tx-run:
DIR/x.npy, DIR/cos.npy, DIR/sin.npy (cos/sin as [T, head_dim/2]),
DIR/weights/<prefix><name>.npy, DIR/model.safetensors (the same tensors)
and DIR/expected.npy (and, for a container argument such as
shared_kv_states, DIR/<argument>.<index>.<slot>.npy: what it holds after
forward, as tx-run --output-dir writes it). With --checkpoint bf16 the
weights and inputs are rounded to bf16 by torch and the checkpoint holds
torch's bf16 bits; torch then runs on those values in f32 (--compute f32)
or in bf16. `compare` checks max|tx - torch| <= R * max|torch|
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


ATTRIBUTE_MAP = {"hidden_size": "n_embd", "num_attention_heads": "n_head",
                 "num_hidden_layers": "n_layer", "max_position_embeddings": "n_positions"}


def transformers_stub():
    """The few names of `transformers` HF modeling files import (it is not
    installed here): ACT2FN and the attention registry."""
    if importlib.util.find_spec("transformers") is not None:
        return
    from torch import nn
    act2fn = {"silu": nn.SiLU(), "swish": nn.SiLU(), "relu": nn.ReLU(), "gelu": nn.GELU(),
              "gelu_pytorch_tanh": nn.GELU(approximate="tanh"),
              "gelu_new": nn.GELU(approximate="tanh")}
    import torch

    class Conv1D(nn.Module):
        """transformers.pytorch_utils.Conv1D (GPT-2): x @ weight + bias, the
        weight [nx, nf]."""

        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)

    names = {"transformers.activations": {"ACT2FN": act2fn},
             "transformers.modeling_utils": {"ALL_ATTENTION_FUNCTIONS": {}},
             "transformers.pytorch_utils": {"Conv1D": Conv1D}}
    sys.modules["transformers"] = types.ModuleType("transformers")
    for name, attrs in names.items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m


def kind_of(name):
    return FORWARD_ARGS.get(name)


def bf16_args(v):
    import torch
    if isinstance(v, tuple):
        return tuple(bf16_args(x) for x in v)
    return v.to(torch.bfloat16) if hasattr(v, "to") else v


def f32_args(v):
    if isinstance(v, tuple):
        return tuple(f32_args(x) for x in v)
    return v.float() if hasattr(v, "float") else v


def run(a):
    import torch
    transformers_stub()
    torch.manual_seed(a.seed)
    with open(a.config) as f:
        # HF sets _attn_implementation at run time (tx.frontend's default too).
        cfg = types.SimpleNamespace(**dict({"_attn_implementation": "eager"}, **json.load(f)))
    # HF's attribute_map (GPT-2's config.json has n_embd for hidden_size, ...).
    for key, alias in ATTRIBUTE_MAP.items():
        if not hasattr(cfg, key) and hasattr(cfg, alias):
            setattr(cfg, key, getattr(cfg, alias))
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
    # Partial rotary (as HF's rotary modules read the config): cos/sin cover
    # the rotated features only.
    fraction = next((getattr(cfg, k) for k in ("partial_rotary_factor", "rotary_pct")
                     if getattr(cfg, k, None) is not None), 1.0)
    rot = int(head_dim * fraction)
    inv = 1.0 / (10000.0 ** (torch.arange(0, rot, 2).float() / rot))
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
            call[name] = mask if a.mask == "causal" else None
        elif kind == "container":
            call[name] = {}
    if a.checkpoint == "bf16":
        # A bf16 checkpoint: the weights and inputs rounded to bf16 by torch;
        # the model runs on exactly those values, in f32 or (--compute bf16)
        # in bf16.
        model.to(torch.bfloat16)
        x, cos_h, sin_h = (t.to(torch.bfloat16) for t in (x, cos_h, sin_h))
        for name, v in list(call.items()):
            if kind_of(name) in ("activation", "rope", "cos", "sin", "mask"):
                call[name] = bf16_args(v)
        if a.compute == "f32":
            model.float()
            call = {n: f32_args(v) for n, v in call.items()}
    with torch.no_grad():
        out = model(**call)
    while isinstance(out, (tuple, list)):
        out = out[0]
    os.makedirs(os.path.join(a.dir, "weights"), exist_ok=True)
    np.save(os.path.join(a.dir, "x.npy"), x[0].float().numpy())
    np.save(os.path.join(a.dir, "cos.npy"), cos_h.float().numpy())
    np.save(os.path.join(a.dir, "sin.npy"), sin_h.float().numpy())
    np.save(os.path.join(a.dir, "expected.npy"), out[0].float().numpy())
    save_containers(a.dir, call)
    state = {a.prefix + k: v for k, v in model.state_dict().items()}
    tensors = {k: v.float().numpy() for k, v in state.items()}
    for k, v in tensors.items():
        np.save(os.path.join(a.dir, "weights", k + ".npy"), v)
    try:
        from tx.safetensors import BF16, save_file
        if a.checkpoint == "bf16":
            # torch's own bf16 bits, as torch's safetensors writer stores them.
            tensors = {k: BF16(v.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
                       for k, v in state.items()}
        save_file(tensors, os.path.join(a.dir, "model.safetensors"))
    except ImportError:
        pass
    print("torch: %s forward on %d tokens, %d weight tensors, output %s"
          % (a.entry, T, len(tensors), "x".join(map(str, out[0].shape))))


def save_containers(d, call):
    """What each container argument holds after forward, as tx-run's
    --output-dir writes it: DIR/<argument>.<index>.<slot>.npy, in tx's
    token-major layout (batch dropped; [1, heads, T, d] -> [T, heads, d])."""
    for name, v in call.items():
        if kind_of(name) != "container":
            continue
        for index, values in v.items():
            if not isinstance(values, (tuple, list)):
                values = (values,)
            for slot, t in enumerate(values):
                t = t[0]
                if t.dim() == 3:
                    t = t.transpose(0, 1)
                np.save(os.path.join(d, "%s.%s.%d.npy" % (name, index, slot)),
                        t.float().contiguous().numpy())


def compare(a):
    ref = np.load(os.path.join(a.dir, a.expected)).astype(np.float64)
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
r.add_argument("--mask", choices=["causal", "none"], default="causal",
               help="attention_mask: the additive causal mask, or None")
r.add_argument("--checkpoint", choices=["f32", "bf16"], default="f32",
               help="dtype of model.safetensors (bf16: weights and inputs rounded by torch)")
r.add_argument("--compute", choices=["f32", "bf16"], default="f32",
               help="dtype torch computes in (with --checkpoint bf16)")
c = sub.add_parser("compare")
c.add_argument("dir")
c.add_argument("out")
c.add_argument("--rtol", type=float, default=1e-5)
c.add_argument("--perturb", action="store_true")
c.add_argument("--expected", default="expected.npy",
               help="the file of DIR to compare with (e.g. a container "
                    "value, shared_kv_states.3.0.npy)")
a = p.parse_args()
run(a) if a.cmd == "run" else compare(a)
