#!/usr/bin/env python3
"""Independent numpy references for the execution tests.

usage: reference.py FUNCTION DIR [--scaled-tolerance=T]
DIR holds what `tx-run --output-dir DIR --dump-inputs --dump-weights DIR/w`
wrote: FUNCTION.input<i>.npy, FUNCTION.<i>.npy and w/<tensor>.npy. Exits
non-zero (printing the worst error) when an output differs from the
reference by more than the tolerance: relative 1e-3 per element by default,
or, with --scaled-tolerance=T, T times the output's largest magnitude (for
whole 16-bit models, whose every intermediate is rounded).

Functions named *_bf16 / *_f16 take 16-bit inputs and weights (dumped as the
f32 values the runner rounded): the reference rounds them the same way
(nearest even), computes in f64 and rounds its result once, and an output
must be within one unit in the last place of it -- what an f32-accumulated
GEMM gives, and a 16-bit accumulation does not.
"""
import math
import os
import sys

import numpy as np

from rounding import format_of

fn, d = sys.argv[1], sys.argv[2]
scaled = None
for arg in sys.argv[3:]:
    if arg.startswith("--scaled-tolerance="):
        scaled = float(arg.split("=", 1)[1])
    else:
        sys.exit(f"reference.py: unknown argument '{arg}'")


# The 16-bit format of the function's tensors (rounding.py).
rounding, ulp = format_of(fn)


def load(name):
    return rounding(np.load(os.path.join(d, name)).astype(np.float64))


def inputs():
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"{fn}.input{i}.npy")):
        out.append(load(f"{fn}.input{i}.npy"))
        i += 1
    return out


def outputs():
    out, i = [], 0
    while os.path.exists(os.path.join(d, f"{fn}.{i}.npy")):
        out.append(np.load(os.path.join(d, f"{fn}.{i}.npy")).astype(np.float64))
        i += 1
    return out


def w(name):
    return load(os.path.join("w", name + ".npy"))


def rmsnorm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rotary(x, cos, sin):
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    c, s = cos[:, None, :], sin[:, None, :]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)


def attention(q, k, v, scale, causal):
    t, hq, _ = q.shape
    s, hkv, _ = k.shape
    g = hq // hkv
    out = np.zeros_like(q)
    for h in range(hq):
        kh = h // g
        sc = q[:, h, :] @ k[:, kh, :].T * scale
        if causal:
            mask = np.arange(s)[None, :] > np.arange(t)[:, None] + (s - t)
            sc = np.where(mask, -np.inf, sc)
        m = sc.max(axis=-1, keepdims=True)
        p = np.where(np.isfinite(m), np.exp(sc - np.where(np.isfinite(m), m, 0)), 0)
        denom = p.sum(axis=-1, keepdims=True)
        out[:, h, :] = np.where(denom > 0, (p @ v[:, kh, :]) / np.where(denom > 0, denom, 1), 0)
    return out


def linear(x, name, bias=False):
    y = x @ w(name + ".weight").T
    return y + w(name + ".bias") if bias else y


silu = lambda x: x / (1 + np.exp(-x))
erf = np.vectorize(math.erf)
gelu = lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2)))
gelu_tanh = lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def llama(x, cos, sin, prefix="model.layers.0."):
    t = x.shape[0]
    h = rmsnorm(x, w(prefix + "input_layernorm.weight"), 1e-6)
    q = linear(h, prefix + "self_attn.q_proj").reshape(t, 4, 16)
    k = linear(h, prefix + "self_attn.k_proj").reshape(t, 2, 16)
    v = linear(h, prefix + "self_attn.v_proj").reshape(t, 2, 16)
    a = attention(rotary(q, cos, sin), rotary(k, cos, sin), v, 0.25, True)
    o = linear(a.reshape(t, 64), prefix + "self_attn.o_proj")
    res = o + x
    h2 = rmsnorm(res, w(prefix + "post_attention_layernorm.weight"), 1e-6)
    m = silu(linear(h2, prefix + "mlp.gate_proj")) * linear(h2, prefix + "mlp.up_proj")
    return [linear(m, prefix + "mlp.down_proj") + res]


def reference(ins):
    if fn == "linear_bias":
        return [linear(ins[0], "lb", bias=True)]
    if fn == "linear_3d":
        return [linear(ins[0], "l")]
    if fn == "linear_strided":
        return [linear(ins[0][:, 1:5, :], "l")]
    if fn == "linear_slice":
        return [linear(ins[0][:, 8:24], "l")]
    if fn == "rmsnorm":
        return [rmsnorm(ins[0], w("w16"), 1e-5)]
    if fn == "rmsnorm_heads":
        t = ins[0].shape[0]
        return [rmsnorm(ins[0][:, 8:24].reshape(t, 2, 8), w("w8"), 1e-6)]
    if fn == "add_rmsnorm":
        r = ins[0] + ins[1]
        return [rmsnorm(r, w("w16"), 1e-6), r]
    if fn == "rotary":
        return [rotary(*ins)]
    if fn == "attention_gqa":
        return [attention(*ins, 0.35, True)]
    if fn == "attention_mqa":
        return [attention(*ins, 0.5, False), attention(*ins, 0.5, True)]
    if fn == "unary":
        x = ins[0]
        return [silu(x), gelu(x), gelu_tanh(x), np.maximum(x, 0), -x, np.exp(x)]
    if fn == "binary":
        x, y, b = ins
        return [x + b, x - y, x * 2.5, x / y]
    if fn == "views":
        v = ins[0].reshape(-1, 4, 4)
        return [v, v.transpose(1, 0, 2), v[:, :, 1:3], -v]
    if fn == "inplace":
        x, y = ins
        x = x.copy()
        y = y.copy()
        x[:, :4] *= 2
        x = silu(x)
        y[:, 4:] = x[:, :4]
        return [x, x + y]
    if fn == "collectives_guards":
        return [ins[0], ins[0]]
    if fn == "forward":  # examples/llama_decoder_layer.mlir
        return llama(*ins)
    if fn in ("linear_bf16", "linear_f16"):  # Inputs/half.mlir
        return [rounding(linear(ins[0], "half", bias=fn == "linear_bf16"))]
    sys.exit(f"reference.py: no reference for '{fn}'")


ref = reference(inputs())
got = outputs()
if len(ref) != len(got):
    sys.exit(f"{fn}: {len(got)} outputs, reference has {len(ref)}")
for i, (r, g) in enumerate(zip(ref, got)):
    if r.shape != g.shape:
        sys.exit(f"{fn}: output {i} has shape {g.shape}, reference {r.shape}")
    if not r.size:
        continue
    if ulp is not None and scaled is None:
        # One ulp of the reference's value (of the smallest normal at 0).
        err = np.max(np.abs(r - g) / (ulp * np.maximum(np.abs(r), 2.0**-14)))
        if not err <= 1.0:
            sys.exit(f"{fn}: output {i} differs from the reference by {err} ulp")
        continue
    if scaled is not None:
        err = np.max(np.abs(r - g)) / np.max(np.abs(r))
        tol = scaled
    else:
        err = np.max(np.abs(r - g) / (1e-3 + np.abs(r)))
        tol = 1e-3
    if not err < tol:
        sys.exit(f"{fn}: output {i} differs from the reference: max error {err} (tolerance {tol})")
print(f"OK {fn}: {len(ref)} outputs match numpy")
