#!/usr/bin/env python3
"""Compares two .npy files element by element.

usage: compare_npy.py A.npy B.npy [--tolerance=T]
Prints the shapes and the largest |a - b| / (1 + |a|); exits non-zero when
the shapes differ or that error exceeds T (default 1e-5).
"""
import sys

import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
tolerance = 1e-5
for arg in sys.argv[3:]:
    if arg.startswith("--tolerance="):
        tolerance = float(arg.split("=", 1)[1])
    else:
        sys.exit(f"compare_npy.py: unknown argument '{arg}'")
if a.shape != b.shape:
    sys.exit(f"compare_npy.py: shapes differ: {a.shape} vs {b.shape}")
a64, b64 = a.astype(np.float64), b.astype(np.float64)
err = float(np.max(np.abs(a64 - b64) / (1 + np.abs(a64)))) if a.size else 0.0
verdict = "match" if err <= tolerance else "MISMATCH"
print(f"compare_npy.py: shape {'x'.join(map(str, a.shape))}: "
      f"largest error {err:.3g}: {verdict}")
sys.exit(0 if err <= tolerance else 1)
