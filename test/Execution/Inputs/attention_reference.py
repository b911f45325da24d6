#!/usr/bin/env python3
"""numpy references for attention-variants.test (Inputs/attention-variants.mlir):
tx.attention with a sliding window and soft-capping, and with a value
head_dim of its own (MLA), computed in f64 with
the masks written out as HF builds them (masking_utils: causal `kv <= q`,
sliding window `kv > q - window`, queries at positions S - T ... S - 1) and
Gemma 2's soft-capping `c * tanh(x / c)` of the scaled scores before the
mask.

usage: attention_reference.py FUNCTION DIR
DIR holds what `tx-run --output-dir DIR --dump-inputs` wrote. f32 functions
must match to 1e-5 of the output's largest magnitude, *_bf16 ones (inputs
rounded as the runner rounds them) to one bf16 ulp of it."""
import sys

import numpy as np

from rounding import check_relative, dumped, format_of

fn, d = sys.argv[1], sys.argv[2]
rounding, ulp = format_of(fn)


def attention(q, k, v, scale, causal, window=None, softcap=None):
    t, hq, _ = q.shape
    s, hkv, _ = k.shape
    g = hq // hkv
    out = np.zeros((t, hq, v.shape[2]), q.dtype)  # v_head_dim may differ
    pos = np.arange(t)[:, None] + (s - t)  # query positions
    key = np.arange(s)[None, :]
    visible = np.ones((t, s), bool)
    if causal:
        visible &= key <= pos
    if window is not None:
        visible &= key > pos - window
    for h in range(hq):
        kh = h // g
        sc = q[:, h, :] @ k[:, kh, :].T * scale
        if softcap is not None:
            sc = softcap * np.tanh(sc / softcap)
        sc = np.where(visible, sc, -np.inf)
        m = sc.max(axis=-1, keepdims=True)
        p = np.where(np.isfinite(m), np.exp(sc - np.where(np.isfinite(m), m, 0)), 0)
        denom = p.sum(axis=-1, keepdims=True)
        out[:, h, :] = np.where(denom > 0, (p @ v[:, kh, :]) / np.where(denom > 0, denom, 1), 0)
    return out


def reference(ins):
    q, k, v = ins
    if fn == "window":
        return [attention(q, k, v, 0.35, True, window=3)]
    if fn == "window1":
        return [attention(q, k, v, 0.35, True, window=1)]
    if fn == "softcap":
        return [attention(q, k, v, 0.9, True, softcap=1.5),
                attention(q, k, v, 0.9, False, softcap=1.5)]
    if fn == "window_softcap":
        return [attention(q, k, v, 0.9, True, window=4, softcap=1.5)]
    if fn == "window_bf16":
        return [attention(q, k, v, 0.9, True, window=3, softcap=1.5)]
    if fn in ("mla", "mla_bf16"):
        return [attention(q, k, v, 0.3, True)]
    sys.exit(f"attention_reference.py: no reference for '{fn}'")


ins = [rounding(a) for a in dumped(d, fn + ".input%d.npy")]
got = dumped(d, fn + ".%d.npy")
check_relative(fn, reference(ins), got, ulp if ulp is not None else 1e-5)
