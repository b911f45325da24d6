#!/usr/bin/env python3
"""numpy references for norms.test (Inputs/norms.mlir).

usage: norms_reference.py FUNCTION DIR
DIR holds what `tx-run --output-dir DIR --dump-inputs --dump-weights DIR/w`
wrote. f32 functions must match the f64 reference to 1e-5 of the output's
largest magnitude; *_bf16 / *_f16 ones (inputs and weights rounded as the
runner rounds them, the norm computed in f32 and rounded once) to one unit
in the last place of the rounded reference."""
import os
import sys

import numpy as np

from rounding import dumped, format_of

fn, d = sys.argv[1], sys.argv[2]


# The 16-bit format of the function's tensors (rounding.py).
rounding, ulp = format_of(fn)


def load(name):
    return rounding(np.load(os.path.join(d, name)).astype(np.float64))


def w(name):
    return load(os.path.join("w", name + ".npy"))


def layernorm(x, weight, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * weight
    return y + bias if bias is not None else y


def rmsnorm(x, weight, eps, offset):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (offset + weight)


def reference(ins):
    x = ins[0]
    if fn in ("layernorm", "layernorm_dynamic", "layernorm_bf16"):
        return [layernorm(x, w("w"), w("b"), 1e-5)]
    if fn in ("layernorm_nobias", "layernorm_nobias_f16"):
        return [layernorm(x, w("w"), None, 1e-3)]
    if fn == "layernorm_heads":
        return [layernorm(x[:, 8:24].reshape(-1, 2, 8), w("w8"), w("b8"), 1e-5)]
    if fn in ("layernorm_noaffine", "layernorm_noaffine_dynamic", "layernorm_noaffine_bf16"):
        return [layernorm(x, 1.0, None, 1e-5)]
    if fn in ("rmsnorm_noweight", "rmsnorm_noweight_dynamic"):
        return [rmsnorm(x, 1.0, 1e-6, 0.0)]
    if fn == "add_rmsnorm_noweight":
        s = x + ins[1]
        return [rmsnorm(s, 1.0, 1e-6, 0.0), s]
    if fn in ("rmsnorm_offset", "rmsnorm_offset_bf16"):
        return [rmsnorm(x, w("w"), 1e-6, 1.0)]
    if fn == "add_rmsnorm_offset":
        s = x + ins[1]
        return [rmsnorm(s, w("w"), 1e-6, 1.0), s]
    sys.exit(f"norms_reference.py: no reference for '{fn}'")


ins = [rounding(a) for a in dumped(d, fn + ".input%d.npy")]
got = dumped(d, fn + ".%d.npy")
ref = reference(ins)
if len(ref) != len(got):
    sys.exit(f"{fn}: {len(got)} outputs, reference has {len(ref)}")
worst = 0.0
for i, (r, g) in enumerate(zip(ref, got)):
    if r.shape != g.shape:
        sys.exit(f"{fn}: output {i} has shape {g.shape}, reference {r.shape}")
    if ulp is not None:
        r = rounding(r)
        err = np.max(np.abs(r - g) / (ulp * np.maximum(np.abs(r), 2.0**-14)))
        if not err <= 1.0:
            sys.exit(f"FAIL {fn}: output {i} differs from the reference by {err} ulp")
    else:
        err = np.max(np.abs(r - g)) / np.max(np.abs(r))
        if not err <= 1e-5:
            sys.exit(f"FAIL {fn}: output {i} off by {err:.3g} of its largest magnitude")
    worst = max(worst, err)
print(f"OK {fn}: {len(got)} outputs, worst error {worst:.3g}"
      + (" ulp" if ulp is not None else " of max"))
