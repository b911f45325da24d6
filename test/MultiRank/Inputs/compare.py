#!/usr/bin/env python3
"""Compares every rank's output with the unsharded reference.

usage: compare.py REF.npy RTOL ATOL OUT.npy...
Prints the largest absolute difference; exits 1 when any element of any
output differs by more than ATOL + RTOL * |ref|.
"""
import sys

import numpy as np

ref = np.load(sys.argv[1])
rtol, atol = float(sys.argv[2]), float(sys.argv[3])
ok = True
for path in sys.argv[4:]:
    got = np.load(path)
    if got.shape != ref.shape:
        print(f"FAIL {path}: shape {got.shape}, expected {ref.shape}")
        ok = False
        continue
    diff = float(np.max(np.abs(got - ref)))
    close = np.allclose(got, ref, rtol=rtol, atol=atol)
    print(f"{'OK' if close else 'FAIL'} max abs diff {diff:.3g}")
    ok &= close
sys.exit(0 if ok else 1)
