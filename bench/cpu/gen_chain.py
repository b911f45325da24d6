#!/usr/bin/env python3
"""Writes a tx module whose forward is a chain of N ops, to measure how
compile time grows with the number of ops:

  python3 bench/cpu/gen_chain.py 3000 > /tmp/chain.mlir
  tx-opt /tmp/chain.mlir -tx-to-cpu -mlir-timing -o /dev/null

--kind=elementwise (default): alternating tx.binary add / tx.unary silu on a
?x64 f32 activation. --kind=linear: N 64 -> 64 projections in a row.
"""
import sys


def main():
    n, kind = 1000, "elementwise"
    for arg in sys.argv[1:]:
        if arg.startswith("--kind="):
            kind = arg.split("=", 1)[1]
        else:
            n = int(arg)
    if kind not in ("elementwise", "linear"):
        sys.exit(f"gen_chain.py: unknown kind '{kind}'")
    m = "memref<?x64xf32>"
    print("module attributes {tx.config = #tx.config<tp_size = 1>} {")
    if kind == "linear":
        for i in range(n):
            print(f"  tx.layer @p{i} : 64 -> 64, f32")
    print(f"  func.func @forward(%x: {m}) -> {m} {{")
    x = "%x"
    for i in range(n):
        if kind == "linear":
            print(f"    %v{i} = tx.linear @p{i}({x}) : {m} -> {m}")
        elif i % 2 == 0:
            print(f"    %v{i} = tx.binary add {x}, %x : {m}, {m} -> {m}")
        else:
            print(f"    %v{i} = tx.unary silu {x} : {m} -> {m}")
        x = f"%v{i}"
    print(f"    return {x} : {m}")
    print("  }")
    print("}")


if __name__ == "__main__":
    main()
