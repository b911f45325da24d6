#!/usr/bin/env python3
"""Random tx programs for differential testing of the fusion passes.

Each program is a module with a few sibling linear layers that all read one
input `%x`, and a forward function that calls them from random places:
the entry block, both branches of an `scf.if`, branches guarded by existence
tests (`tx.guard`), loops; with random writes in between: in-place writes to
`%x` or to a view of it (which must stop fusion), writes to fresh buffers
(which must not), reads of `%x` through slices. Every projection result is
returned, so running the function before and after fusion compares every
value the rewrite could change.

`--kind=exec` (default) emits only constructs the CPU pipeline executes;
`--kind=any` also emits container writes, opaque calls and `== None` guards,
for checking that the fusion pass decides and rewrites without breaking the
IR (those programs are verified, not run).

Usage: gen_programs.py --seed N --count K --out DIR [--kind exec|any]
Writes DIR/prog_<seed>_<i>.mlir; the same seed always gives the same files.
"""
import argparse
import os
import random

HIDDEN = 32
WIDTHS = [8, 16, 24]


class Gen:
    def __init__(self, rng, kind):
        self.rng = rng
        self.kind = kind
        self.lines = []
        self.indent = 2
        self.n = 0
        self.layers = []        # (name, out_features)
        self.called = set()     # layers already called
        self.results = []       # (ssa, width) visible at function scope
        self.has_bias = rng.random() < 0.3

    def fresh(self, prefix="v"):
        self.n += 1
        return f"%{prefix}{self.n}"

    def emit(self, text):
        self.lines.append(" " * self.indent + text)

    # --- building blocks -------------------------------------------------
    def x_view(self):
        """`%x` itself or an alias of it (tx.alias / a full-width view)."""
        r = self.rng.random()
        if r < 0.6:
            return "%x"
        v = self.fresh("xv")
        if r < 0.8:
            self.emit(f"{v} = tx.alias %x : memref<?x{HIDDEN}xf32>")
        else:
            self.emit(f"{v} = tx.view %x : memref<?x{HIDDEN}xf32> -> memref<?x{HIDDEN}xf32>")
        return v

    def pick_uncalled(self):
        free = [l for l in self.layers if l[0] not in self.called]
        return self.rng.choice(free) if free else None

    def call(self, layer, into_scope):
        name, width = layer
        self.called.add(name)
        src = self.x_view()
        r = self.fresh("p")
        self.emit(f"{r} = tx.linear @{name}({src}) : memref<?x{HIDDEN}xf32> -> memref<?x{width}xf32>")
        into_scope.append((r, width))
        return r

    def filler(self, width):
        """A fresh buffer of [T, width] that reads %x but calls no layer."""
        s = self.fresh("s")
        off = self.rng.randrange(0, HIDDEN - width + 1)
        self.emit(f"{s} = tx.slice %x dim 1 offset {off} size {width} : memref<?x{HIDDEN}xf32> -> "
                  f"memref<?x{width}xf32, strided<[{HIDDEN}, 1], offset: {off}>>")
        f = self.fresh("f")
        self.emit(f"{f} = tx.unary neg {s} : memref<?x{width}xf32, strided<[{HIDDEN}, 1], offset: {off}>> -> memref<?x{width}xf32>")
        return f

    def write_input(self):
        """x.mul_(c) or an in-place activation on a view of x: fusion across
        this point must be refused."""
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant {self.rng.choice(['2.0', '0.5', '-1.0'])} : f32")
        if self.rng.random() < 0.5:
            v = self.x_view()
            self.emit(f"tx.binary_into mul {v}, {c} into {v} : memref<?x{HIDDEN}xf32>, f32, memref<?x{HIDDEN}xf32>")
        else:
            w = self.rng.choice([8, 16])
            off = self.rng.choice([0, HIDDEN - w])
            t = f"memref<?x{w}xf32, strided<[{HIDDEN}, 1], offset: {off}>>"
            s = self.fresh("xs")
            self.emit(f"{s} = tx.slice %x dim 1 offset {off} size {w} : memref<?x{HIDDEN}xf32> -> {t}")
            self.emit(f"tx.unary_into relu {s} into {s} : {t}, {t}")

    def write_fresh(self, scope):
        """An in-place write to a projection's own output: harmless."""
        if not scope:
            return
        r, w = self.rng.choice(scope)
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant 3.0 : f32")
        self.emit(f"tx.binary_into add {r}, {c} into {r} : memref<?x{w}xf32>, f32, memref<?x{w}xf32>")

    def branch(self, scope, cond=None, layer=None):
        """scf.if with a projection in the then-branch and a filler of the
        same width in the else-branch; the result joins `scope`."""
        layer = layer or self.pick_uncalled()
        if layer is None:
            return
        width = layer[1]
        cond = cond or "%flag"
        res = self.fresh("b")
        self.emit(f"{res} = scf.if {cond} -> (memref<?x{width}xf32>) {{")
        self.indent += 2
        inner = []
        if self.rng.random() < 0.3:
            self.write_fresh(scope)
        r = self.call(layer, inner)
        if self.rng.random() < 0.2:
            self.write_input()
        self.emit(f"scf.yield {r} : memref<?x{width}xf32>")
        self.indent -= 2
        self.emit("} else {")
        self.indent += 2
        f = self.filler(width)
        self.emit(f"scf.yield {f} : memref<?x{width}xf32>")
        self.indent -= 2
        self.emit("}")
        scope.append((res, width))

    def guarded(self, scope):
        layer = self.pick_uncalled()
        if layer is None:
            return
        ref = self.fresh("ref")
        self.emit(f"{ref} = tx.layer_ref @{layer[0]}")
        preds = ["is_not_none", "truthy"]
        if self.kind == "any":
            preds += ["ne_none"]
        pred = self.rng.choice(preds)
        g = self.fresh("g")
        self.emit(f"{g} = tx.guard {pred} {ref}")
        if self.rng.random() < 0.3:
            # `if self.k is not None and flag:` in pure boolean context.
            a = self.fresh("g")
            self.emit(f"{a} = arith.andi {g}, %flag : i1")
            g = a
        self.branch(scope, cond=g, layer=layer)

    def loop(self, scope):
        layer = self.pick_uncalled()
        if layer is None:
            return
        name, width = layer
        init = self.filler(width)
        lo, hi, st = self.fresh("lo"), self.fresh("hi"), self.fresh("st")
        self.emit(f"{lo} = arith.constant 0 : index")
        self.emit(f"{hi} = arith.constant {self.rng.choice([1, 2])} : index")
        self.emit(f"{st} = arith.constant 1 : index")
        res, acc, iv = self.fresh("l"), self.fresh("acc"), self.fresh("i")
        self.emit(f"{res} = scf.for {iv} = {lo} to {hi} step {st} iter_args({acc} = {init}) -> (memref<?x{width}xf32>) {{")
        self.indent += 2
        inner = []
        r = self.call(layer, inner)
        s = self.fresh("sum")
        self.emit(f"{s} = tx.binary add {acc}, {r} : memref<?x{width}xf32>, memref<?x{width}xf32> -> memref<?x{width}xf32>")
        self.emit(f"scf.yield {s} : memref<?x{width}xf32>")
        self.indent -= 2
        self.emit("}")
        scope.append((res, width))

    def opaque_or_container(self):
        if self.rng.random() < 0.5:
            self.emit(f"tx.opaque_call \"hook\"(%x) : (memref<?x{HIDDEN}xf32>) -> ()")
        else:
            i = self.fresh("idx")
            self.emit(f"{i} = arith.constant 0 : index")
            what = "%x" if self.rng.random() < 0.5 or not self.results else self.results[-1][0]
            t = f"memref<?x{HIDDEN}xf32>" if what == "%x" else f"memref<?x{self.results[-1][1]}xf32>"
            self.emit(f"tx.container_set %states[{i}] = {what} : {t}")

    # --- a whole program -------------------------------------------------
    def program(self):
        nlayers = self.rng.randint(2, 4)
        uniform = self.rng.random() < 0.5
        w0 = self.rng.choice(WIDTHS)
        for i in range(nlayers):
            self.layers.append((f"proj{i}", w0 if uniform else self.rng.choice(WIDTHS)))
        steps = self.rng.randint(nlayers, nlayers + 4)
        actions = ["call", "call", "branch", "guard", "write_input", "write_fresh", "loop"]
        if self.kind == "any":
            actions += ["opaque"]
        for _ in range(steps):
            a = self.rng.choice(actions)
            if a == "call":
                layer = self.pick_uncalled()
                if layer:
                    self.call(layer, self.results)
            elif a == "branch":
                self.branch(self.results)
            elif a == "guard":
                self.guarded(self.results)
            elif a == "write_input":
                self.write_input()
            elif a == "write_fresh":
                self.write_fresh(self.results)
            elif a == "loop" and self.rng.random() < 0.4:
                self.loop(self.results)
            elif a == "opaque":
                self.opaque_or_container()
        # Every layer is called at least once so the groups are complete.
        while (layer := self.pick_uncalled()) is not None:
            self.call(layer, self.results)
        body = self.lines
        rets = ", ".join(r for r, _ in self.results)
        types = ", ".join(f"memref<?x{w}xf32>" for _, w in self.results)
        bias = " bias" if self.has_bias else ""
        out = ["module attributes {tx.config = #tx.config<tp_size = 1>} {"]
        for name, width in self.layers:
            out.append(f"  tx.layer @{name} : {HIDDEN} -> {width}, f32{bias}")
        extra = ", %states: !tx.container" if self.kind == "any" else ""
        # The branch flag is an f32 argument (> 0: true) so the CPU runner,
        # which passes f32 tensors and scalars, can drive both sides.
        out.append(f"  func.func @forward(%x: memref<?x{HIDDEN}xf32>, %fs: f32{extra}) -> ({types}) {{")
        out.append("    %zero = arith.constant 0.0 : f32")
        out.append("    %flag = arith.cmpf ogt, %fs, %zero : f32")
        out += ["  " + l for l in body]
        out.append(f"    return {rets} : {types}")
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kind", choices=["exec", "any"], default="exec")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.count):
        rng = random.Random(args.seed * 1000003 + i)
        text = Gen(rng, args.kind).program()
        with open(os.path.join(args.out, f"prog_{args.seed}_{i}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
