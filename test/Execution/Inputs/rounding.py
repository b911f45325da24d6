"""For the numpy references (reference.py, norms_reference.py,
attention_reference.py, rotary_reference.py): the 16-bit formats the runner rounds to at its
boundary (values rounded as the runner rounds them, in f64, and one unit in
the last place relative to a value), and the arrays tx-run dumped."""
import os

import numpy as np


def to_bf16(a):
    """Rounds to the nearest bf16 (ties to even), returned as f64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def to_f16(a):
    return np.asarray(a, np.float32).astype(np.float16).astype(np.float64)


def format_of(function):
    """(rounding, ulp) of a function named *_bf16 / *_f16: 2^-7 for bf16's
    8-bit significand, 2^-10 for f16; (identity, None) for f32 ones."""
    if function.endswith("_bf16"):
        return to_bf16, 2.0**-7
    if function.endswith("_f16"):
        return to_f16, 2.0**-10
    return (lambda a: a), None


def dumped(d, pattern):
    """The arrays `tx-run --output-dir d` wrote as pattern % 0, 1, ... (as f64)."""
    out, i = [], 0
    while os.path.exists(os.path.join(d, pattern % i)):
        out.append(np.load(os.path.join(d, pattern % i)).astype(np.float64))
        i += 1
    return out


def check_relative(fn, ref, got, tol):
    """Exits with FAIL unless every output of `got` has the shape of its
    reference and is within `tol` of the reference's largest magnitude;
    prints OK with the worst error."""
    import sys
    if len(ref) != len(got):
        sys.exit(f"{fn}: {len(got)} outputs, reference has {len(ref)}")
    worst = 0.0
    for i, (r, g) in enumerate(zip(ref, got)):
        if r.shape != g.shape:
            sys.exit(f"{fn}: output {i} has shape {g.shape}, reference {r.shape}")
        err = np.max(np.abs(r - g)) / np.max(np.abs(r))
        if not err <= tol:
            sys.exit(f"FAIL {fn}: output {i} off by {err:.3g} of its largest magnitude "
                     f"(tolerance {tol:.3g})")
        worst = max(worst, err)
    print(f"OK {fn}: {len(got)} outputs, worst error {worst:.3g} of max")
