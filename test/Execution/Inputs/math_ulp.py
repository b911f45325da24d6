#!/usr/bin/env python3
"""Accuracy of tx.unary's math in units in the last place (ulp).

  math_ulp.py gen DIR             writes DIR/x.npy: [rows, 1024] f32 inputs
  math_ulp.py check FN DIR BOUND  compares DIR/unary_FN.0.npy (what
                                  `tx-run Inputs/math-ulp.mlir -e unary_FN
                                  --inputs DIR/x.npy --output-dir DIR` wrote)
                                  with FN computed in f64 from the same inputs

The inputs sweep every range where the functions change: a dense linear
sweep of [-100, 100], magnitudes from 1e-30 to 1e30 of both signs (a
geometric sweep), the boundaries of exp's range (|x| near 87-89) and the
special values (+-0, +-inf, nan, the largest finite).

The error of one output is |out - ref| / ulp(ref), ref the f64 value and
ulp(ref) the spacing of f32 at ref rounded to f32 (an exactly rounded result
is within 0.5 ulp); for gelu and gelu_tanh, whose 1 + erf (1 + tanh)
cancels for negative x in any f32 formula (libm's too), the unit is the
ulp of max(|ref|, |x|), the scale of the function's terms. Outputs of 0
where |ref| < 2^-120 are counted as flushed, not errors: the polynomial exp
flushes results below 2^-126 to zero, and silu's f32 formula x / (1 +
exp(-x)) is -0 once exp(-x) overflows (x < -88.72) whatever computes exp.
Special values must match exactly in kind (nan, +-inf). Prints

  OK FN: max N.NN ulp at x = X (M values, K flushed)

and exits 1 with FAIL when the maximum exceeds BOUND.
"""
import math
import os
import sys

import numpy as np

TINY = 2.0**-126
COLS = 1024


def inputs():
    lin = np.linspace(-100.0, 100.0, 40 * COLS)
    mags = np.geomspace(1e-30, 1e30, 8 * COLS)
    edge = np.linspace(86.0, 90.0, 4 * COLS)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan,
               np.finfo(np.float32).max, -np.finfo(np.float32).max]
    x = np.concatenate([lin, mags, -mags, edge, -edge, special])
    x = x.astype(np.float32)
    pad = (-len(x)) % COLS
    x = np.concatenate([x, np.zeros(pad, np.float32)])
    return x.reshape(-1, COLS)


def reference(fn, x):
    """fn of the f32 inputs `x`, in f64."""
    x = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if fn == "exp":
            return np.exp(x)
        if fn == "silu":
            return x / (1.0 + np.exp(-x))
        if fn == "gelu":
            erf = np.vectorize(math.erf, otypes=[np.float64])
            return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
        if fn == "gelu_tanh":
            inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)
            return 0.5 * x * (1.0 + np.tanh(inner))
    sys.exit(f"math_ulp.py: unknown function '{fn}'")


def ulp(ref):
    """The spacing of f32 at `ref` rounded to f32 (f64 values)."""
    r = np.abs(ref).astype(np.float32)
    r = np.where(np.isfinite(r), r, np.finfo(np.float32).max)
    with np.errstate(over="ignore"):
        return np.spacing(r).astype(np.float64)


def check(fn, d, bound):
    x = np.load(os.path.join(d, "x.npy"))
    out = np.load(os.path.join(d, f"unary_{fn}.0.npy")).astype(np.float64).ravel()
    x = x.ravel()
    ref = reference(fn, x)
    if out.shape != ref.shape:
        sys.exit(f"FAIL {fn}: {out.shape[0]} outputs for {ref.shape[0]} inputs")

    # Special values: the same kind exactly.
    bad = (np.isnan(ref) != np.isnan(out)) | \
          (np.isinf(ref) & (out != ref))
    # References beyond f32's range are +-inf in f32.
    with np.errstate(over="ignore"):
        ref32 = ref.astype(np.float32).astype(np.float64)
    bad |= np.isfinite(ref) & np.isinf(ref32) & (out != ref32)
    if bad.any():
        i = int(np.argmax(bad))
        print(f"FAIL {fn}: x = {x[i]!r} gives {out[i]!r}, expected {ref[i]!r}")
        return 1

    finite = np.isfinite(ref) & np.isfinite(ref32)
    flushed = finite & (np.abs(ref) < 2.0**-120) & (out == 0)
    measured = finite & ~flushed
    scale = np.abs(ref)
    if fn in ("gelu", "gelu_tanh"):
        scale = np.maximum(scale, np.abs(x))
    err = np.zeros_like(ref)
    err[measured] = (np.abs(out[measured] - ref[measured]) /
                     ulp(scale[measured]))
    i = int(np.argmax(err))
    worst = float(err[i])
    line = (f"{fn}: max {worst:.3f} ulp at x = {float(x[i])!r} "
            f"({int(measured.sum())} values, {int(flushed.sum())} flushed)")
    if worst > bound:
        print(f"FAIL {line} > {bound}")
        return 1
    print(f"OK {line}")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        np.save(os.path.join(sys.argv[2], "x.npy"), inputs())
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
