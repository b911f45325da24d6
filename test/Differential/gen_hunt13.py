#!/usr/bin/env python3
"""CPU execution path (hunt 13): programs whose numbers must not depend on
the tx-to-cpu options (threads, outline-layers, vectorize, math) or on the
token count at which the GEMM kernels switch (few-token kernel below 112
rows, packed GEMM from 112).

Classes (--features, default all):
  gemm     chains of tx.linear with K / N around the kernels' multiples
           (K % 16 for the few-token kernel, N % 32 for the packed tile),
           f32 / bf16 / f16, bias or not, the input a strided column slice
           of a wider argument or a tx.view of a 3-D one, static tokens
           sometimes; every projection returned.
  layers   3-5 "decoder layers" (norm, projection(s), activation,
           residual) that are identical except for a random perturbation
           of one layer (bias, eps, activation, an operand swapped, a
           weight tied to another layer's, a layer's param also read
           after the layers, an in-place write into its residual, a
           static vs dynamic view): tx-outline-identical-layers must
           outline exactly the provably identical ones.
  static   static-shape ops with odd sizes above the tiling threshold
           (tileLargeStaticOps): elementwise, norms, rotary, attention
           with static tokens (a reduction over tiled keys).

Usage: gen_hunt13.py --seed N --count K --out DIR [--features F1,F2|all]
Run, for T in 1 5 111 112 113 129 257 (static programs ignore T):
  tx-difftest --tolerance=0 --tokens=T --rewrite=canonicalize \
    --lowering='tx-to-cpu{threads=2}' --reference-lowering=tx-to-cpu DIR/*.mlir
  tx-difftest --tolerance=0 --tokens=T --rewrite=canonicalize \
    --reference-lowering='tx-to-cpu{outline-layers=false}' DIR/*.mlir
  tx-difftest --tolerance=1e-4 --tokens=T --rewrite=canonicalize \
    --reference-lowering='tx-to-cpu{vectorize=false}' DIR/*.mlir
(bf16/f16 programs carry `// hunt13-half` and want --tolerance=2e-2 in the
last comparison: a 16-bit result may round to a neighbour).
"""
import argparse
import os
import random

ALL = ["gemm", "layers", "static"]


def mt(shape, dt, layout=None):
    s = "x".join("?" if d is None else str(d) for d in shape)
    t = "memref<%sx%s" % (s, dt)
    if layout:
        t += ", " + layout
    return t + ">"


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.n = 0
        self.decls = []
        self.body = []
        self.args = []
        self.rets = []

    def v(self, p="v"):
        self.n += 1
        return "%%%s%d" % (p, self.n)

    def emit(self, s):
        self.body.append("    " + s)

    def arg(self, ty):
        name = "%%a%d" % len(self.args)
        self.args.append((name, ty))
        return name

    def module(self, header=""):
        sig = ", ".join("%s: %s" % a for a in self.args)
        rt = ", ".join(t for _, t in self.rets)
        out = [header, "module {"] + ["  " + d for d in self.decls]
        out.append("  func.func @forward(%s) -> (%s) {" % (sig, rt))
        out += self.body
        out.append("    return %s : %s" % (", ".join(v for v, _ in self.rets), rt))
        out += ["  }", "}"]
        return "\n".join(out) + "\n"


def gen_gemm(rng):
    g = Gen(rng)
    dt = rng.choice(["f32", "f32", "bf16", "f16"])
    static_t = rng.random() < 0.2
    T = rng.choice([1, 4, 111, 112, 113, 128]) if static_t else None
    ks = [16, 32, 48, 64, 80, 96, 128, 160, 256, 272, 24, 40, 33, 100, 17]
    K = rng.choice(ks)
    form = rng.choice(["plain", "plain", "slice", "view3"])
    if form == "slice":
        off = rng.choice([0, 1, 8, 16])
        extra = rng.choice([1, 16, 32])
        W = K + off + extra
        a = g.arg(mt([T, W], dt))
        x = g.v("s")
        lay = "strided<[%d, 1], offset: %d>" % (W, off) if off else "strided<[%d, 1]>" % W
        xt = mt([T, K], dt, lay)
        g.emit("%s = tx.slice %s dim 1 offset %d size %d : %s -> %s" % (x, a, off, K, mt([T, W], dt), xt))
    elif form == "view3" and K % 2 == 0:
        a = g.arg(mt([T, 2, K // 2], dt))
        x = g.v("w")
        xt = mt([T, K], dt)
        g.emit("%s = tx.view %s : %s -> %s" % (x, a, mt([T, 2, K // 2], dt), xt))
    else:
        x = g.arg(mt([T, K], dt))
        xt = mt([T, K], dt)
    cur, curt, curk = x, xt, K
    for i in range(rng.randint(1, 3)):
        N = rng.choice([1, 7, 16, 31, 32, 33, 64, 96, 100, 128, 257, 288, 320, 520])
        bias = " bias" if rng.random() < 0.4 else ""
        g.decls.append("tx.layer @l%d : %d -> %d, %s%s" % (i, curk, N, dt, bias))
        y = g.v("y")
        yt = mt([T, N], dt)
        g.emit("%s = tx.linear @l%d(%s) : %s -> %s" % (y, i, cur, curt, yt))
        g.rets.append((y, yt))
        # Sometimes a second projection of the same input (shared input).
        if rng.random() < 0.3:
            N2 = rng.choice([16, 48, 112, 130])
            g.decls.append("tx.layer @m%d : %d -> %d, %s" % (i, curk, N2, dt))
            z = g.v("z")
            g.emit("%s = tx.linear @m%d(%s) : %s -> %s" % (z, i, cur, curt, mt([T, N2], dt)))
            g.rets.append((z, mt([T, N2], dt)))
        cur, curt, curk = y, yt, N
        if rng.random() < 0.3:
            a2 = g.v("u")
            g.emit("%s = tx.unary silu %s : %s -> %s" % (a2, cur, curt, curt))
            cur = a2
    hdr = "// hunt13-half" if dt != "f32" else ""
    return g.module(hdr)


def gen_layers(rng):
    g = Gen(rng)
    H = rng.choice([16, 32, 48, 64])
    F = rng.choice([16, 32, 64, 96])
    dt = "f32"
    nl = rng.randint(3, 5)
    x = g.arg(mt([None, H], dt))
    extra = g.arg(mt([None, H], dt)) if rng.random() < 0.5 else None
    pert_layer = rng.randrange(nl)
    pert = rng.choice(["none", "bias", "eps", "act", "tied", "param_after",
                       "inplace", "scalar", "operand", "glu", "none"])
    g.body.append("    // hunt13-perturbation: %s in layer %d" % (pert, pert_layer))
    cur = x
    params_after = []
    for l in range(nl):
        p = pert if l == pert_layer else "none"
        g.decls.append("tx.param @n%d : %s" % (l, mt([H], dt)))
        bias = " bias" if p == "bias" else ""
        up = "up%d" % l
        down = "down%d" % l
        if p == "tied" and l > 0:
            up = "up%d" % (l - 1)
        else:
            g.decls.append("tx.layer @up%d : %d -> %d, %s%s" % (l, H, F, dt, bias))
        g.decls.append("tx.layer @down%d : %d -> %d, %s" % (l, F, H, dt))
        if p == "glu":
            g.decls.append("tx.layer @gate%d : %d -> %d, %s" % (l, H, F, dt))
        w = g.v("w")
        g.emit("%s = tx.get_param @n%d : %s" % (w, l, mt([H], dt)))
        if p == "param_after":
            params_after.append(w)
        eps = "1.0e-05" if p != "eps" else "2.0e-05"
        h = g.v("h")
        g.emit("%s = tx.rmsnorm %s, %s eps %s : %s, %s -> %s" % (h, cur, w, eps, mt([None, H], dt), mt([H], dt), mt([None, H], dt)))
        u = g.v("u")
        g.emit("%s = tx.linear @%s(%s) : %s -> %s" % (u, up, h, mt([None, H], dt), mt([None, F], dt)))
        act = "silu" if p != "act" else "gelu"
        a = g.v("a")
        g.emit("%s = tx.unary %s %s : %s -> %s" % (a, act, u, mt([None, F], dt), mt([None, F], dt)))
        if p == "glu":
            gg = g.v("g")
            g.emit("%s = tx.linear @gate%d(%s) : %s -> %s" % (gg, l, h, mt([None, H], dt), mt([None, F], dt)))
            m = g.v("m")
            g.emit("%s = tx.binary mul %s, %s : %s, %s -> %s" % (m, a, gg, mt([None, F], dt), mt([None, F], dt), mt([None, F], dt)))
            a = m
        if p == "scalar":
            c = g.v("c")
            g.emit("%s = arith.constant 0.5 : f32" % c)
            m = g.v("m")
            g.emit("%s = tx.binary mul %s, %s : %s, f32 -> %s" % (m, a, c, mt([None, F], dt), mt([None, F], dt)))
            a = m
        d = g.v("d")
        g.emit("%s = tx.linear @%s(%s) : %s -> %s" % (d, down, a, mt([None, F], dt), mt([None, H], dt)))
        if p == "inplace":
            g.emit("tx.binary_into add %s, %s into %s : %s, %s, %s" % (cur, d, cur, mt([None, H], dt), mt([None, H], dt), mt([None, H], dt)))
            o = cur
            # keep a fresh buffer as the next input
            o2 = g.v("o")
            g.emit("%s = tx.unary neg %s : %s -> %s" % (o2, o, mt([None, H], dt), mt([None, H], dt)))
            g.emit("%s = tx.unary neg %s : %s -> %s" % (g.v("o"), o2, mt([None, H], dt), mt([None, H], dt)))
            o = "%%o%d" % g.n
        else:
            o = g.v("o")
            rhs = cur if not (p == "operand" and extra) else extra
            g.emit("%s = tx.binary add %s, %s : %s, %s -> %s" % (o, d, rhs, mt([None, H], dt), mt([None, H], dt), mt([None, H], dt)))
        cur = o
    g.rets.append((cur, mt([None, H], dt)))
    for w in params_after:
        g.rets.append((w, mt([H], dt)))
    return g.module()


def gen_static(rng):
    g = Gen(rng)
    T = rng.choice([3, 7, 37, 130, 257])
    H = rng.choice([17, 100, 1031, 2049, 4100, 333])
    kind = rng.choice(["elem", "norm", "rotary", "attention", "attention"])
    if kind == "elem":
        x = g.arg(mt([T, H], "f32"))
        y = g.arg(mt([T, H], "f32"))
        for op in rng.sample(["silu", "gelu", "gelu_tanh", "exp", "neg", "relu"], 3):
            r = g.v("e")
            g.emit("%s = tx.unary %s %s : %s -> %s" % (r, op, x, mt([T, H], "f32"), mt([T, H], "f32")))
            g.rets.append((r, mt([T, H], "f32")))
        r = g.v("b")
        g.emit("%s = tx.binary %s %s, %s : %s, %s -> %s" % (r, rng.choice(["add", "mul", "sub", "div"]), x, y, mt([T, H], "f32"), mt([T, H], "f32"), mt([T, H], "f32")))
        g.rets.append((r, mt([T, H], "f32")))
    elif kind == "norm":
        x = g.arg(mt([T, H], "f32"))
        y = g.arg(mt([T, H], "f32"))
        g.decls.append("tx.param @w : %s" % mt([H], "f32"))
        g.decls.append("tx.param @b : %s" % mt([H], "f32"))
        w = g.v("w")
        g.emit("%s = tx.get_param @w : %s" % (w, mt([H], "f32")))
        b = g.v("w")
        g.emit("%s = tx.get_param @b : %s" % (b, mt([H], "f32")))
        r = g.v("r")
        g.emit("%s = tx.rmsnorm %s, %s eps 1.0e-05 : %s, %s -> %s" % (r, x, w, mt([T, H], "f32"), mt([H], "f32"), mt([T, H], "f32")))
        g.rets.append((r, mt([T, H], "f32")))
        l = g.v("l")
        g.emit("%s = tx.layernorm %s, %s, %s eps 1.0e-05 : %s, %s, %s -> %s" % (l, x, w, b, mt([T, H], "f32"), mt([H], "f32"), mt([H], "f32"), mt([T, H], "f32")))
        g.rets.append((l, mt([T, H], "f32")))
        a, c = g.v("r"), g.v("r")
        g.emit("%s, %s = tx.add_rmsnorm %s, %s, %s eps 1.0e-06 : %s, %s, %s -> %s, %s" % (a, c, x, y, w, mt([T, H], "f32"), mt([T, H], "f32"), mt([H], "f32"), mt([T, H], "f32"), mt([T, H], "f32")))
        g.rets += [(a, mt([T, H], "f32")), (c, mt([T, H], "f32"))]
    elif kind == "rotary":
        nh = rng.choice([1, 3, 8])
        hd = rng.choice([8, 64, 130])
        x = g.arg(mt([T, nh, hd], "f32"))
        cs = g.arg(mt([T, hd // 2], "f32"))
        sn = g.arg(mt([T, hd // 2], "f32"))
        r = g.v("r")
        il = " interleaved" if rng.random() < 0.5 else ""
        g.emit("%s = tx.rotary %s, %s, %s%s : %s, %s, %s -> %s" % (r, x, cs, sn, il, mt([T, nh, hd], "f32"), mt([T, hd // 2], "f32"), mt([T, hd // 2], "f32"), mt([T, nh, hd], "f32")))
        g.rets.append((r, mt([T, nh, hd], "f32")))
    else:
        hq = rng.choice([2, 4])
        hk = rng.choice([1, 2])
        hd = rng.choice([8, 16, 100, 130])
        S = rng.choice([T, T, T + 5])
        q = g.arg(mt([T, hq, hd], "f32"))
        k = g.arg(mt([S, hk, hd], "f32"))
        v = g.arg(mt([S, hk, hd], "f32"))
        opts = rng.choice(["causal", "", "causal window 3", "softcap 5.0", "causal softcap 2.5"])
        r = g.v("o")
        g.emit("%s = tx.attention %s, %s, %s scale 0.3 %s : %s, %s, %s -> %s" % (r, q, k, v, opts, mt([T, hq, hd], "f32"), mt([S, hk, hd], "f32"), mt([S, hk, hd], "f32"), mt([T, hq, hd], "f32")))
        g.rets.append((r, mt([T, hq, hd], "f32")))
    return g.module("// hunt13-static " + kind)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--features", default="all")
    args = ap.parse_args()
    feats = ALL if args.features == "all" else args.features.split(",")
    for f in feats:
        if f not in ALL:
            ap.error("unknown feature %s (%s)" % (f, ", ".join(ALL)))
    os.makedirs(args.out, exist_ok=True)
    gens = {"gemm": gen_gemm, "layers": gen_layers, "static": gen_static}
    for i in range(args.count):
        rng = random.Random(args.seed * 100003 + i)
        f = feats[i % len(feats)]
        with open(os.path.join(args.out, "h13_%s_%d_%d.mlir" % (f, args.seed, i)), "w") as fh:
            fh.write(gens[f](rng))


if __name__ == "__main__":
    main()
