#!/usr/bin/env python3
"""Programs whose projections all run under conditions (hunt 5).

Every sibling projection of a group sits in a conditional region (two
`scf.if`s on one condition, nested `scf.if`s, the cases of an
`scf.index_switch` with a default that calls nothing, an `scf.if` inside
an `scf.execute_region`), so the nearest common dominator of the calls is
a block where none of them is guaranteed to run. The condition is the one
a model would test before projecting: `x.shape[-1] == 32` on an input with
a dynamic feature dimension (`memref<?x?xf32>`). Under `tx-difftest
--tokens=N` every dynamic dimension is N: with N = 32 the projections run,
with any other N the unfused program returns its fallback buffers. A
rewrite that merges the calls into one projection placed above the
conditions runs it unconditionally, and its in_features runtime check
fails (an error) where the original never called a layer.

Every result is returned. Branch-local writes to the input (after the
calls, or in branches without calls) make some groups refused.

Usage: gen_hunt5.py --seed N --count K --out DIR
Run:   tx-difftest --tokens=4 DIR/*.mlir   (and --tokens=32: all match)
"""
import argparse
import os
import random

H = 32
W = 8


def linear(name, dst, x="%x"):
    return (f"{dst} = tx.linear @{name}({x}) : memref<?x?xf32> -> "
            f"memref<?x{W}xf32>")


def fallback(dst, val, ind):
    return [f"{ind}{dst} = memref.alloc(%t) : memref<?x{W}xf32>",
            f"{ind}linalg.fill ins({val} : f32) outs({dst} : memref<?x{W}xf32>)"]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.n = 0

    def fresh(self, p="%v"):
        self.n += 1
        return f"{p}{self.n}"

    def guarded(self, layer, cond, ind, write):
        """scf.if cond -> call layer, else a constant buffer."""
        res, r, z = self.fresh("%r"), self.fresh("%p"), self.fresh("%z")
        lines = [f"{ind}{res} = scf.if {cond} -> memref<?x{W}xf32> {{",
                 f"{ind}  {linear(layer, r)}"]
        if write:
            lines.append(f"{ind}  tx.binary_into mul %x, %c into %x : "
                         f"memref<?x?xf32>, f32, memref<?x?xf32>")
        lines.append(f"{ind}  scf.yield {r} : memref<?x{W}xf32>")
        lines.append(f"{ind}}} else {{")
        lines += fallback(z, "%cz", ind + "  ")
        lines += [f"{ind}  scf.yield {z} : memref<?x{W}xf32>", f"{ind}}}"]
        return res, lines

    def program(self, layers):
        rng = self.rng
        body, results = [], []
        shape = rng.choice(["ifs", "nested", "switch", "region", "mixed"])
        write = rng.random() < 0.25
        if shape == "ifs":
            for l in layers:
                r, ls = self.guarded(l, "%ok", "    ", write and rng.random() < .5)
                body += ls
                results.append(r)
        elif shape == "nested":
            # outer if on %ok2 (always true), inner ifs on %ok.
            outs = [self.fresh("%o") for _ in layers]
            ty = ", ".join([f"memref<?x{W}xf32>"] * len(layers))
            body.append(f"    {', '.join(outs)} = scf.if %ok2 -> ({ty}) {{")
            inner = []
            for l in layers:
                r, ls = self.guarded(l, "%ok", "      ", write)
                body += ls
                inner.append(r)
            body.append(f"      scf.yield {', '.join(inner)} : {ty}")
            body.append("    } else {")
            zs = []
            for _ in layers:
                z = self.fresh("%z")
                body += fallback(z, "%co", "      ")
                zs.append(z)
            body.append(f"      scf.yield {', '.join(zs)} : {ty}")
            body.append("    }")
            results += outs
        elif shape == "switch":
            # case i calls layer i; default (the feature count is not H)
            # calls nothing.
            n = len(layers)
            body.append(f"    %sel = arith.select %ok, %c0, %cbig : index")
            outs = [self.fresh("%o") for _ in layers]
            ty = ", ".join([f"memref<?x{W}xf32>"] * n)
            body.append(f"    {', '.join(outs)} = scf.index_switch %sel -> {ty}")
            for ci, l in enumerate(layers):
                body.append(f"    case {ci} {{")
                vals = []
                for j, l2 in enumerate(layers):
                    if j == ci or ci == 0:
                        r = self.fresh("%p")
                        body.append("      " + linear(l2, r))
                    else:
                        r = self.fresh("%z")
                        body += fallback(r, "%cz", "      ")
                    vals.append(r)
                body.append(f"      scf.yield {', '.join(vals)} : {ty}")
                body.append("    }")
            body.append("    default {")
            zs = []
            for _ in layers:
                z = self.fresh("%z")
                body += fallback(z, "%co", "      ")
                zs.append(z)
            if write:
                body.append("      tx.binary_into mul %x, %c into %x : "
                            "memref<?x?xf32>, f32, memref<?x?xf32>")
            body.append(f"      scf.yield {', '.join(zs)} : {ty}")
            body.append("    }")
            # only case 0 calls all layers; other cases call one each, so
            # layers are called more than once there: keep case 0 only.
            results += outs
        elif shape == "region":
            outs = [self.fresh("%o") for _ in layers]
            ty = ", ".join([f"memref<?x{W}xf32>"] * len(layers))
            body.append(f"    {', '.join(outs)} = scf.execute_region -> ({ty}) {{")
            inner = []
            for l in layers:
                r, ls = self.guarded(l, "%ok", "      ", write)
                body += ls
                inner.append(r)
            body.append(f"      scf.yield {', '.join(inner)} : {ty}")
            body.append("    }")
            results += outs
        else:
            # first call guarded by %ok, later ones by %ok3 = %ok && %ok2
            conds = ["%ok"] + ["%ok3"] * (len(layers) - 1)
            rng.shuffle(conds)
            for l, cnd in zip(layers, conds):
                r, ls = self.guarded(l, cnd, "    ", False)
                body += ls
                results.append(r)
        return shape, body, results


def emit(rng, idx):
    g = Gen(rng)
    kind = rng.choice(["qkv", "qk", "merged"])
    layers = {"qkv": ["q_proj", "k_proj", "v_proj"], "qk": ["q_proj", "k_proj"],
              "merged": ["a_proj", "b_proj", "c_proj"][:rng.choice([2, 3])]}[kind]
    shape, body, results = g.program(layers)
    if shape == "switch":
        # One call of each layer: case 0 calls all of them; drop the others.
        text = []
        skip = False
        for line in body:
            s = line.strip()
            if s.startswith("case ") and s != "case 0 {":
                skip = True
            if not skip:
                text.append(line)
            if skip and line == "    }":
                skip = False
        body = text
    rty = ", ".join([f"memref<?x{W}xf32>"] * len(results))
    out = ["module attributes {tx.config = #tx.config<tp_size = 1>} {"]
    for l in layers:
        out.append(f"  tx.layer @{l} : {H} -> {W}, f32")
    out.append(f"  func.func @forward(%x: memref<?x?xf32>, %c: f32) -> ({rty}) {{")
    out += ["    %c0 = arith.constant 0 : index",
            "    %c1 = arith.constant 1 : index",
            f"    %cH = arith.constant {H} : index",
            "    %cbig = arith.constant 1000 : index",
            "    %cz = arith.constant 0.0 : f32",
            "    %co = arith.constant 1.0 : f32",
            "    %t = memref.dim %x, %c0 : memref<?x?xf32>",
            "    %d = memref.dim %x, %c1 : memref<?x?xf32>",
            "    %ok = arith.cmpi eq, %d, %cH : index",
            "    %ok2 = arith.cmpi sge, %t, %c0 : index",
            "    %ok3 = arith.andi %ok, %ok2 : i1"]
    out += body
    out.append(f"    return {', '.join(results)} : {rty}")
    out += ["  }", "}"]
    return f"// shape: {shape}\n" + "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    for i in range(a.count):
        with open(os.path.join(a.out, f"hunt5_{a.seed}_{i}.mlir"), "w") as f:
            f.write(emit(rng, i))


if __name__ == "__main__":
    main()
