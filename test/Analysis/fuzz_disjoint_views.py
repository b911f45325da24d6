#!/usr/bin/env python3
"""Checks TxAliasAnalysis's NoAlias and MustAlias answers on random view chains.

Each function allocates a 4x6x8 buffer and takes random chains of views of
it (`tx.slice` on any dimension, `tx.transpose` by any permutation, static
`memref.subview`s, `tx.alias`), views of views included. The script knows
which elements of the buffer every view shows; it asks
`tx-opt -tx-test-print-modref=tx-alias=true` for the alias answer of every
pair and fails on a NoAlias for two views that share an element (the
fusion would then miss a write) or a MustAlias for two views that do not
show the same elements.

Usage: fuzz_disjoint_views.py --seed N --count K --tx-opt PATH [--keep FILE]
Prints `N NoAlias answers, M MustAlias answers, W wrong`; exit status 1 when
W > 0.
"""
import argparse
import itertools
import random
import re
import subprocess
import sys

ROOT = [4, 6, 8]


def row_major(shape):
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return strides


def memref(shape, strides=None, offset=None):
    dims = "x".join(map(str, shape))
    if strides is None:
        return f"memref<{dims}xf32>"
    return (f"memref<{dims}xf32, strided<[{', '.join(map(str, strides))}], "
            f"offset: {offset}>>")


class View:
    """A view: its SSA name, type, shape, strides, offset, and for each of
    its dimensions the root dimension it walks and the root indices."""

    def __init__(self, name, ty, shape, strides, offset, idx, dims):
        self.name, self.ty, self.shape = name, ty, shape
        self.strides, self.offset, self.idx, self.dims = strides, offset, idx, dims

    def elements(self):
        out = set()
        for combo in itertools.product(*self.idx):
            t = [0] * len(ROOT)
            for i, v in enumerate(combo):
                t[self.dims[i]] = v
            out.add(tuple(t))
        return out


def function(rng, fname):
    lines = []
    root = View("r", memref(ROOT), ROOT, row_major(ROOT), 0,
                [list(range(s)) for s in ROOT], list(range(len(ROOT))))
    views = [root]
    for _ in range(rng.randint(3, 9)):
        src = rng.choice(views)
        name = f"v{len(views)}"
        tag = f'{{test.name = "{name}"}}'
        kind = rng.choice(["slice", "slice", "transpose", "subview", "alias"])
        rank = len(src.shape)
        if kind == "slice":
            d = rng.randrange(rank)
            if src.shape[d] < 2:
                continue
            size = rng.randint(1, src.shape[d] - 1)
            off = rng.randint(0, src.shape[d] - size)
            shape = list(src.shape)
            shape[d] = size
            offset = src.offset + off * src.strides[d]
            idx = list(src.idx)
            idx[d] = src.idx[d][off:off + size]
            ty = memref(shape, src.strides, offset)
            lines.append(f"%{name} = tx.slice %{src.name} dim {d} offset {off} size {size} "
                         f"{tag} : {src.ty} -> {ty}")
            views.append(View(name, ty, shape, src.strides, offset, idx, src.dims))
        elif kind == "transpose":
            perm = list(range(rank))
            rng.shuffle(perm)
            shape = [src.shape[p] for p in perm]
            strides = [src.strides[p] for p in perm]
            ty = memref(shape, strides, src.offset)
            lines.append(f"%{name} = tx.transpose %{src.name} [{', '.join(map(str, perm))}] "
                         f"{tag} : {src.ty} -> {ty}")
            views.append(View(name, ty, shape, strides, src.offset,
                              [src.idx[p] for p in perm], [src.dims[p] for p in perm]))
        elif kind == "subview":
            offs, sizes = [], []
            for d in range(rank):
                size = rng.randint(1, src.shape[d])
                offs.append(rng.randint(0, src.shape[d] - size))
                sizes.append(size)
            offset = src.offset + sum(o * s for o, s in zip(offs, src.strides))
            ty = memref(sizes, src.strides, offset)
            lines.append(f"%{name} = memref.subview %{src.name}[{', '.join(map(str, offs))}] "
                         f"[{', '.join(map(str, sizes))}] [{', '.join(['1'] * rank)}] "
                         f"{tag} : {src.ty} to {ty}")
            views.append(View(name, ty, sizes, src.strides, offset,
                              [src.idx[d][offs[d]:offs[d] + sizes[d]] for d in range(rank)],
                              src.dims))
        else:
            lines.append(f"%{name} = tx.alias %{src.name} {tag} : {src.ty}")
            views.append(View(name, src.ty, src.shape, src.strides, src.offset,
                              src.idx, src.dims))
    text = [f"func.func @{fname}() {{",
            f'  %r = memref.alloc() {{test.name = "r"}} : {root.ty}']
    text += ["  " + l for l in lines]
    text += ["  return", "}"]
    return "\n".join(text), {v.name: v for v in views}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--tx-opt", required=True)
    ap.add_argument("--keep", help="write the module here")
    args = ap.parse_args()
    rng = random.Random(f"views-{args.seed}")
    funcs, truth = [], {}
    for i in range(args.count):
        text, views = function(rng, f"f{i}")
        funcs.append(text)
        truth[f"f{i}"] = views
    module = "\n".join(funcs) + "\n"
    if args.keep:
        with open(args.keep, "w") as f:
            f.write(module)
    # One thread: the test pass prints from each function as it runs.
    out = subprocess.run([args.tx_opt, "-", "-tx-test-print-modref=tx-alias=true",
                          "--mlir-disable-threading", "-o", "/dev/null"],
                         input=module, capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        return 2
    no = must = wrong = 0
    for line in out.stdout.splitlines():
        m = re.fullmatch(r"(\w+) alias (\w+) (\w+): (\w+)", line)
        if not m:
            continue
        f, a, b, result = m.groups()
        va, vb = truth[f][a], truth[f][b]
        ea, eb = va.elements(), vb.elements()
        if result == "NoAlias":
            no += 1
            if ea & eb:
                wrong += 1
                print(f"WRONG @{f}: %{a} and %{b} share elements but NoAlias")
        elif result == "MustAlias":
            must += 1
            same = ea == eb and va.idx == vb.idx and va.dims == vb.dims
            if not same:
                wrong += 1
                print(f"WRONG @{f}: %{a} and %{b} differ but MustAlias")
    print(f"{no} NoAlias answers, {must} MustAlias answers, {wrong} wrong")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
