#!/usr/bin/env python3
"""Consumers of the merged output (hunt 12): what fusion's slices feed.

The older generators vary what happens to a group's *input* (writes,
aliases, guards, loops) and use the results in simple ways. This one keeps
the group itself simple (one input, 2-4 projections in the entry block,
mixed widths, bias or not, f32/bf16/f16) and varies what the *results*
(tx.slice views of the merged output after tx-fusion) are used for, and
the rank and layout of the group:
  rotary       two projections give a rotary's cos and sin (strided cos/sin,
               NeoX or interleaved);
  normweight   rank-1 projections (one embedding vector) give an rmsnorm's
               weight, or a broadcast rhs of tx.binary / tx.binary_into;
  residual     a result is add_rmsnorm's input or residual;
  collective   results go through all_reduce / all_gather / reduce_scatter
               of group 1;
  attention    q/k/v-like results viewed per head (a value head_dim of its
               own), into tx.attention (causal, window, softcap);
  views        result views merging the token dimension (static tokens),
               tx.view to a dynamic out-features type, memref.subview /
               linalg.fill / memref.store on results (the copy path);
  chain2d      a second-level projection reads a rank-2 result.
Each program returns every result it computes, so tx-difftest compares all.

Two classes failed before they were fixed (each its own --features switch,
off by default so that the plain programs stay as they were):
  ln-weight    rank-1 projections used as tx.layernorm's weight and bias:
               after fusion the two slices (or a slice and a param) differ
               in layout and LayerNormOp::verify (bias type == weight type)
               failed: tx-fusion errored. The rewrite now verifies every
               retyped user and takes the contiguous copy where one fails.
  rank3-chain  a rank-3 [2, T, K] group with dynamic T, and a second-level
               projection reading one result: the slice cannot be collapsed
               to 2-D, and the linalg.generic contraction summed in another
               order than the matmul path (bf16/f16 outputs rounded
               differently; f32 not bit-exact). The input is now copied
               contiguous and multiplied by the same matmul.

Usage: gen_hunt12.py --seed N --count K --out DIR [--features F1,F2|all]
Run:   tx-difftest --tokens=T DIR/*.mlir  for T in 1, 4, 17 (static
       programs have 4 tokens; with another T their dynamic inputs still
       run). Every program matches bit for bit (--tolerance=0); the
       programs of a --features class carry a `// hunt12-feature:` line.
"""
import argparse
import os
import random

EXTRA = ["ln-weight", "rank3-chain"]
KINDS = ["rotary", "normweight", "residual", "collective", "attention",
         "views", "chain2d"]


class Gen:
    def __init__(self, rng, features):
        self.rng = rng
        self.feat = set(features)
        self.n = 0
        self.layers = []
        self.body = []
        self.args = []
        self.rets = []
        self.params = []

    def fresh(self, p="v"):
        self.n += 1
        return f"%{p}{self.n}"

    def layer(self, name, k, n, dt, bias):
        self.layers.append(f"  tx.layer @{name} : {k} -> {n}, {dt}"
                           + (" bias" if bias else ""))

    def emit(self, s):
        self.body.append("    " + s)

    def ret(self, v, t):
        self.rets.append((v, t))

    def arg(self, name, t):
        self.args.append((name, t))
        return name

    # -- classes -----------------------------------------------------------
    def rotary(self, dt):
        r = self.rng
        half = r.choice([4, 8])
        heads = r.choice([1, 2])
        p = self.arg("%pos", f"memref<?x16x{dt}>")
        x = self.arg("%xr", f"memref<?x{heads}x{2 * half}x{dt}>")
        bias = r.random() < 0.3
        names = ["rc_proj", "rs_proj"]
        if r.random() < 0.5:
            names.reverse()
        for nm in names:
            self.layer(nm, 16, half, dt, bias)
        vals = {}
        for nm in names:
            v = self.fresh("r")
            self.emit(f"{v} = tx.linear @{nm}({p}) : memref<?x16x{dt}> -> memref<?x{half}x{dt}>")
            vals[nm] = v
        il = " interleaved" if r.random() < 0.5 else ""
        t3 = f"memref<?x{heads}x{2 * half}x{dt}>"
        o = self.fresh("rot")
        self.emit(f"{o} = tx.rotary {x}, {vals['rc_proj']}, {vals['rs_proj']}{il} : {t3}, "
                  f"memref<?x{half}x{dt}>, memref<?x{half}x{dt}> -> {t3}")
        self.ret(o, t3)

    def normweight(self, dt, ln=False):
        r = self.rng
        w = 32
        e = self.arg("%emb" + ("l" if ln else ""), f"memref<16x{dt}>")
        x = self.arg("%xn" + ("l" if ln else ""), f"memref<?x{w}x{dt}>")
        pre = "ln" if ln else "nw"
        names = [f"{pre}_w_proj", f"{pre}_b_proj"]
        for nm in names:
            self.layer(nm, 16, w, dt, False)
        v = []
        for nm in names:
            o = self.fresh("w")
            self.emit(f"{o} = tx.linear @{nm}({e}) : memref<16x{dt}> -> memref<{w}x{dt}>")
            v.append(o)
        tx = f"memref<?x{w}x{dt}>"
        tw = f"memref<{w}x{dt}>"
        if ln:
            o = self.fresh("ln")
            if r.random() < 0.5:
                self.emit(f"{o} = tx.layernorm {x}, {v[0]}, {v[1]} eps 1.0e-05 : {tx}, {tw}, {tw} -> {tx}")
            else:
                self.params.append(f"  tx.param @ln_bias : {tw}")
                pb = self.fresh("pb")
                self.emit(f"{pb} = tx.get_param @ln_bias : {tw}")
                self.emit(f"{o} = tx.layernorm {x}, {v[0]}, {pb} eps 1.0e-05 : {tx}, {tw}, {tw} -> {tx}")
                self.ret(v[1], tw)
            self.ret(o, tx)
            return
        k = r.choice(["rms", "bin", "into"])
        o = self.fresh("n")
        if k == "rms":
            off = " offset 1.0" if r.random() < 0.5 else ""
            self.emit(f"{o} = tx.rmsnorm {x}, {v[0]} eps 1.0e-06{off} : {tx}, {tw} -> {tx}")
            self.ret(o, tx)
            self.ret(v[1], tw)
        elif k == "bin":
            self.emit(f"{o} = tx.binary mul {x}, {v[0]} : {tx}, {tw} -> {tx}")
            o2 = self.fresh("n")
            self.emit(f"{o2} = tx.binary add {v[1]}, {v[0]} : {tw}, {tw} -> {tw}")
            self.ret(o, tx)
            self.ret(o2, tw)
        else:
            c = self.fresh("c")
            self.emit(f"{c} = tx.unary neg {x} : {tx} -> {tx}")
            self.emit(f"tx.binary_into add {c}, {v[1]} into {c} : {tx}, {tw}, {tx}")
            self.emit(f"tx.binary_into mul {v[0]}, {v[1]} into {v[0]} : {tw}, {tw}, {tw}")
            self.ret(c, tx)
            self.ret(v[0], tw)

    def group2d(self, dt, prefix, widths, k=32, bias=None, inp=None):
        """Projections of one rank-2 input; returns [(value, width)]."""
        r = self.rng
        x = inp or self.arg(f"%x{prefix}", f"memref<?x{k}x{dt}>")
        bias = (r.random() < 0.3) if bias is None else bias
        out = []
        for i, w in enumerate(widths):
            nm = f"{prefix}{i}_proj"
            self.layer(nm, k, w, dt, bias)
            v = self.fresh(prefix)
            self.emit(f"{v} = tx.linear @{nm}({x}) : memref<?x{k}x{dt}> -> memref<?x{w}x{dt}>")
            out.append((v, w))
        return out

    def residual(self, dt):
        (a, w), (b, _) = self.group2d(dt, "res", [32, 32])
        t = f"memref<?x{w}x{dt}>"
        y, rr = self.fresh("y"), self.fresh("rr")
        if self.rng.random() < 0.5:
            a, b = b, a
        self.emit(f"{y}, {rr} = tx.add_rmsnorm {a}, {b} eps 1.0e-06 : {t}, {t} -> {t}, {t}")
        self.ret(y, t)
        self.ret(rr, t)
        self.ret(b, t)

    def collective(self, dt):
        res = self.group2d(dt, "col", [self.rng.choice([8, 16]) for _ in range(3)])
        ops = ["all_reduce {v} group 1", "all_gather {v} dim 0 group 1",
               "reduce_scatter {v} dim 0 group 1"]
        for (v, w), op in zip(res, ops):
            t = f"memref<?x{w}x{dt}>"
            o = self.fresh("cl")
            self.emit(f"{o} = tx.{op.format(v=v)} : {t} -> {t}")
            self.ret(o, t)

    def attention(self, dt):
        r = self.rng
        d, dv, qh, kh = r.choice([8, 16]), r.choice([4, 8, 16]), 4, r.choice([1, 2, 4])
        res = self.group2d(dt, "att", [qh * d, kh * d, kh * dv], k=32)
        (q, _), (k, _), (v, _) = res
        tq, tk, tv = (f"memref<?x{qh}x{d}x{dt}>", f"memref<?x{kh}x{d}x{dt}>",
                      f"memref<?x{kh}x{dv}x{dt}>")
        q3, k3, v3 = self.fresh("q3"), self.fresh("k3"), self.fresh("v3")
        self.emit(f"{q3} = tx.view {q} : memref<?x{qh * d}x{dt}> -> {tq}")
        self.emit(f"{k3} = tx.view {k} : memref<?x{kh * d}x{dt}> -> {tk}")
        self.emit(f"{v3} = tx.view {v} : memref<?x{kh * dv}x{dt}> -> {tv}")
        extra = r.choice(["", " causal", " causal window 2", " causal softcap 5.0"])
        o = self.fresh("ao")
        to = f"memref<?x{qh}x{dv}x{dt}>"
        self.emit(f"{o} = tx.attention {q3}, {k3}, {v3} scale 0.25{extra} : {tq}, {tk}, {tv} -> {to}")
        self.ret(o, to)

    def views(self, dt):
        r = self.rng
        k = r.choice(["flat", "dynout", "memref"])
        if k == "flat":
            x = self.arg("%xs", f"memref<4x16x{dt}>")
            for i in range(2):
                self.layer(f"fl{i}_proj", 16, 32, dt, False)
            a, b = self.fresh("fa"), self.fresh("fb")
            self.emit(f"{a} = tx.linear @fl0_proj({x}) : memref<4x16x{dt}> -> memref<4x32x{dt}>")
            self.emit(f"{b} = tx.linear @fl1_proj({x}) : memref<4x16x{dt}> -> memref<4x32x{dt}>")
            f, g = self.fresh("ff"), self.fresh("fg")
            self.emit(f"{f} = tx.view {a} : memref<4x32x{dt}> -> memref<128x{dt}>")
            self.emit(f"{g} = tx.view {b} : memref<4x32x{dt}> -> memref<8x16x{dt}>")
            n = self.fresh("fn")
            self.emit(f"{n} = tx.unary neg {f} : memref<128x{dt}> -> memref<128x{dt}>")
            self.emit(f"tx.unary_into neg {g} into {g} : memref<8x16x{dt}>, memref<8x16x{dt}>")
            self.ret(n, f"memref<128x{dt}>")
            self.ret(b, f"memref<4x32x{dt}>")
        elif k == "dynout":
            x = self.arg("%xd", f"memref<?x16x{dt}>")
            for i, w in enumerate([32, 24]):
                self.layer(f"dy{i}_proj", 16, w, dt, False)
            a, b = self.fresh("da"), self.fresh("db")
            self.emit(f"{a} = tx.linear @dy0_proj({x}) : memref<?x16x{dt}> -> memref<?x?x{dt}>")
            self.emit(f"{b} = tx.linear @dy1_proj({x}) : memref<?x16x{dt}> -> memref<?x?x{dt}>")
            n = self.fresh("dn")
            self.emit(f"{n} = tx.unary neg {a} : memref<?x?x{dt}> -> memref<?x?x{dt}>")
            self.ret(n, f"memref<?x?x{dt}>")
            self.ret(b, f"memref<?x?x{dt}>")
        else:
            res = self.group2d(dt, "mr", [32, 32], k=16)
            (a, _), (b, _) = res
            c0, cf = self.fresh("c0"), self.fresh("cf")
            self.emit(f"{c0} = arith.constant 0 : index")
            self.emit(f"{cf} = arith.constant 2.5 : {dt}")
            s = self.fresh("sv")
            self.emit(f"{s} = memref.subview {a}[0, 0] [1, 16] [1, 1] : memref<?x32x{dt}> to memref<1x16x{dt}, strided<[32, 1]>>")
            self.emit(f"linalg.fill ins({cf} : {dt}) outs({s} : memref<1x16x{dt}, strided<[32, 1]>>)")
            self.emit(f"memref.store {cf}, {b}[{c0}, {c0}] : memref<?x32x{dt}>")
            self.ret(a, f"memref<?x32x{dt}>")
            self.ret(b, f"memref<?x32x{dt}>")

    def chain2d(self, dt):
        res = self.group2d(dt, "ch", [64, 24], k=16)
        (a, w), _ = res
        self.layer("ch_down_proj", w, 16, dt, self.rng.random() < 0.5)
        d = self.fresh("cd")
        self.emit(f"{d} = tx.linear @ch_down_proj({a}) : memref<?x{w}x{dt}> -> memref<?x16x{dt}>")
        self.ret(d, f"memref<?x16x{dt}>")
        self.ret(res[1][0], f"memref<?x{res[1][1]}x{dt}>")

    def rank3(self, dt):
        x = self.arg("%x3", f"memref<2x?x16x{dt}>")
        self.layer("r3a_proj", 16, 256, dt, False)
        self.layer("r3b_proj", 16, 24, dt, False)
        self.layer("r3d_proj", 256, 64, dt, self.rng.random() < 0.5)
        a, b, d = self.fresh("ta"), self.fresh("tb"), self.fresh("td")
        self.emit(f"{a} = tx.linear @r3a_proj({x}) : memref<2x?x16x{dt}> -> memref<2x?x256x{dt}>")
        self.emit(f"{b} = tx.linear @r3b_proj({x}) : memref<2x?x16x{dt}> -> memref<2x?x24x{dt}>")
        self.emit(f"{d} = tx.linear @r3d_proj({a}) : memref<2x?x256x{dt}> -> memref<2x?x64x{dt}>")
        self.ret(d, f"memref<2x?x64x{dt}>")
        self.ret(b, f"memref<2x?x24x{dt}>")

    def program(self):
        r = self.rng
        dt = r.choice(["f32", "f32", "bf16", "f16"])
        kinds = r.sample(KINDS, r.choice([1, 2, 3]))
        flagged = []
        if "ln-weight" in self.feat and r.random() < 0.5:
            flagged.append("ln-weight")
        if "rank3-chain" in self.feat and r.random() < 0.5:
            flagged.append("rank3-chain")
            dt = r.choice(["bf16", "f16"])
        for k in kinds:
            getattr(self, k)(dt)
        if "ln-weight" in flagged:
            self.normweight(dt, ln=True)
        if "rank3-chain" in flagged:
            self.rank3(dt)
        args = ", ".join(f"{n}: {t}" for n, t in self.args)
        rt = ", ".join(t for _, t in self.rets)
        rv = ", ".join(v for v, _ in self.rets)
        out = [f"// hunt12 kinds: {' '.join(kinds)} dtype: {dt}"]
        out += [f"// hunt12-feature: {f}" for f in flagged]
        out.append("module attributes {tx.config = #tx.config<tp_size = 1>} {")
        out += self.layers + self.params
        out.append(f"  func.func @forward({args}) -> ({rt}) {{")
        out += self.body
        out.append(f"    return {rv} : {rt}")
        out += ["  }", "}"]
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--out", required=True)
    ap.add_argument("--features", default="",
                    help="comma-separated failing classes to include "
                         f"({', '.join(EXTRA)}) or 'all'")
    a = ap.parse_args()
    feats = EXTRA if a.features == "all" else [f for f in a.features.split(",") if f]
    for f in feats:
        if f not in EXTRA:
            ap.error(f"unknown feature '{f}' (expected {', '.join(EXTRA)} or all)")
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random(a.seed * 100003 + i)
        text = Gen(rng, feats).program()
        with open(os.path.join(a.out, f"h12_{a.seed}_{i}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
