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

`--features` (comma-separated, or `all`) adds the hard cases, each one a
class of miscompile seen before (tx issue 11); without it the programs are
exactly the ones older versions generated:
  views         layers read views of a second buffer `%y` ([T, 64]) taken
                with `memref.subview` at dynamic offsets, sizes and strides
                (computed from `%fs` and `memref.dim`, which nothing folds):
                two such views of one type are different inputs unless
                their operands are the same values.
  disjoint      layers read static slices `%y[:, 0:32]` / `%y[:, 32:64]`;
                writes go to disjoint and to overlapping static slices.
  cfg-loops     a projection inside a loop written as a CFG cycle in an
                `scf.execute_region` (`cf.cond_br` back edge), with writes
                to its input before the call, after it or on a latch block.
  region-writes in-place writes as `linalg.fill`, `linalg.copy` and
                `linalg.generic` (ops with regions that write).
  exclusive     `scf.if` with one projection in each branch and writes after
                (harmless: the other branch does not run) or before the
                call (must stop fusion).
  loop-writes   `scf.for` loops write the projection's input after the call
                (`x *= c` after a projection reading x).
  static        `%x` and `%y` have a static token count (4): the CPU
                lowering vectorises the elementwise ops (compare with
                `--reference-lowering='tx-to-cpu{vectorize=false}'`); loops
                update all of `%x` in place after an unvectorised read of it.

Usage: gen_programs.py --seed N --count K --out DIR [--kind exec|any]
                       [--features F1,F2,...|all]
Writes DIR/prog_<seed>_<i>.mlir; the same seed always gives the same files.
"""
import argparse
import os
import random

HIDDEN = 32
WIDE = 64               # width of the second buffer %y (views, disjoint)
STATIC_TOKENS = 4
WIDTHS = [8, 16, 24]
FEATURES = ["views", "disjoint", "cfg-loops", "region-writes", "exclusive",
            "loop-writes", "static"]
# Static column slices of %y: the ones layers read, and the ones writes hit
# (disjoint from one of the read slices, overlapping, or both).
Y_READ_OFFSETS = [0, 32]
Y_WRITE_SLICES = [(0, 32), (32, 32), (16, 32), (0, 8), (56, 8), (24, 16)]


class Gen:
    def __init__(self, rng, kind, features=()):
        self.rng = rng
        self.kind = kind
        self.feat = set(features)
        self.rows = str(STATIC_TOKENS) if "static" in self.feat else "?"
        self.lines = []
        self.indent = 2
        self.n = 0
        self.layers = []        # (name, out_features)
        self.src = {}           # layer name -> what it reads (features only)
        self.called = set()     # layers already called
        self.results = []       # (ssa, width) visible at function scope
        self.extra_results = []  # (ssa, type) returned as well
        self.has_bias = rng.random() < 0.3
        self.has_y = bool(self.feat & {"views", "disjoint"})
        self.dyn_views = "views" in self.feat and self.rows == "?"

    def fresh(self, prefix="v"):
        self.n += 1
        return f"%{prefix}{self.n}"

    def emit(self, text):
        self.lines.append(" " * self.indent + text)

    # --- types -----------------------------------------------------------
    def buf(self, width, rows=None):
        return f"memref<{rows or self.rows}x{width}xf32>"

    @property
    def xt(self):
        return self.buf(HIDDEN)

    @property
    def yt(self):
        return self.buf(WIDE)

    # --- building blocks -------------------------------------------------
    def x_view(self):
        """`%x` itself or an alias of it (tx.alias / a full-width view)."""
        r = self.rng.random()
        if r < 0.6:
            return "%x"
        v = self.fresh("xv")
        if r < 0.8:
            self.emit(f"{v} = tx.alias %x : {self.xt}")
        else:
            self.emit(f"{v} = tx.view %x : {self.xt} -> {self.xt}")
        return v

    # Dynamic views of %y. The index values come from the prologue (see
    # `prologue`): offsets oA/oB/oC, row offsets rA/rB, strides sA/sB, each
    # pair different from each other on every run, and one SSA value each,
    # so two views with the same operands really are the same view.
    def y_dyn_view(self, strided):
        v = self.fresh("yv")
        col = self.rng.choice(["%d0", "%oA", "%oB", "%oC"])
        if strided:
            s = self.rng.choice(["%d1", "%sA", "%sB"])
            n1, n = self.fresh("n"), self.fresh("n")
            self.emit(f"{n1} = arith.divui %dTm1, {s} : index")
            self.emit(f"{n} = arith.addi {n1}, %d1 : index")
            self.emit(f"{v} = memref.subview %y[0, {col}] [{n}, {HIDDEN}] [{s}, 1] : "
                      f"{self.yt} to memref<?x{HIDDEN}xf32, strided<[?, 1], offset: ?>>")
            return v, f"memref<?x{HIDDEN}xf32, strided<[?, 1], offset: ?>>"
        row = self.rng.choice(["%d0", "%rA", "%rB"])
        if row == "%d0":
            n = "%dT"
        else:
            n = self.fresh("n")
            self.emit(f"{n} = arith.subi %dT, {row} : index")
        self.emit(f"{v} = memref.subview %y[{row}, {col}] [{n}, {HIDDEN}] [1, 1] : "
                  f"{self.yt} to memref<?x{HIDDEN}xf32, strided<[{WIDE}, 1], offset: ?>>")
        return v, f"memref<?x{HIDDEN}xf32, strided<[{WIDE}, 1], offset: ?>>"

    def y_slice(self, off, size):
        v = self.fresh("ys")
        t = f"memref<{self.rows}x{size}xf32, strided<[{WIDE}, 1], offset: {off}>>"
        self.emit(f"{v} = tx.slice %y dim 1 offset {off} size {size} : {self.yt} -> {t}")
        return v, t

    def source(self, layer_name):
        """The input of one call of `layer_name`: (value, type, rows)."""
        src = self.src.get(layer_name, "x")
        if src == "x":
            return self.x_view(), self.xt, self.rows
        if src.startswith("y@"):
            v, t = self.y_slice(int(src[2:]), HIDDEN)
            return v, t, self.rows
        v, t = self.y_dyn_view(strided=(src == "ydyn-strided"))
        return v, t, "?"

    def pick_uncalled(self):
        free = [l for l in self.layers if l[0] not in self.called]
        return self.rng.choice(free) if free else None

    def call(self, layer, into_scope):
        name, width = layer
        self.called.add(name)
        if not self.feat:
            src = self.x_view()
            r = self.fresh("p")
            self.emit(f"{r} = tx.linear @{name}({src}) : memref<?x{HIDDEN}xf32> -> memref<?x{width}xf32>")
            into_scope.append((r, width))
            return r
        src, t, rows = self.source(name)
        r = self.fresh("p")
        res = self.buf(width, rows)
        if rows != self.rows:
            # A view with fewer rows: copy into a buffer of the program's
            # row type so that every result has one type per width.
            self.emit(f"{r}v = tx.linear @{name}({src}) : {t} -> {res}")
            self.emit(f"{r} = memref.cast {r}v : {res} to {self.buf(width)}")
        else:
            self.emit(f"{r} = tx.linear @{name}({src}) : {t} -> {res}")
        into_scope.append((r, width))
        return r

    def filler(self, width):
        """A fresh buffer of [T, width] that reads %x but calls no layer."""
        s = self.fresh("s")
        off = self.rng.randrange(0, HIDDEN - width + 1)
        R = self.rows
        self.emit(f"{s} = tx.slice %x dim 1 offset {off} size {width} : memref<{R}x{HIDDEN}xf32> -> "
                  f"memref<{R}x{width}xf32, strided<[{HIDDEN}, 1], offset: {off}>>")
        f = self.fresh("f")
        self.emit(f"{f} = tx.unary neg {s} : memref<{R}x{width}xf32, strided<[{HIDDEN}, 1], offset: {off}>> -> memref<{R}x{width}xf32>")
        return f

    def write_input(self, src=None):
        """x.mul_(c) or an in-place activation on a view of x: fusion across
        this point must be refused."""
        if self.feat:
            return self.write_source(src)
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

    def write_source(self, src=None):
        """An in-place write to %x, %y or a view of them (features on)."""
        if src is None:
            srcs = ["x"]
            if self.has_y:
                srcs += ["y", "y"]
            src = self.rng.choice(srcs)
        if src == "x":
            if self.rng.random() < 0.5:
                v, t = self.x_view(), self.xt
            else:
                w = self.rng.choice([8, 16])
                off = self.rng.choice([0, HIDDEN - w])
                t = f"memref<{self.rows}x{w}xf32, strided<[{HIDDEN}, 1], offset: {off}>>"
                v = self.fresh("xs")
                self.emit(f"{v} = tx.slice %x dim 1 offset {off} size {w} : {self.xt} -> {t}")
        elif self.dyn_views and (src.startswith("ydyn") or
                                 (src == "y" and self.rng.random() < 0.4)):
            v, t = self.y_dyn_view(strided=self.rng.random() < 0.3)
        elif src.startswith("y@") and self.rng.random() < 0.5:
            v, t = self.y_slice(int(src[2:]), HIDDEN)
        else:
            off, size = self.rng.choice(Y_WRITE_SLICES)
            v, t = self.y_slice(off, size)
        self.inplace(v, t)

    def inplace(self, v, t):
        """One in-place update of buffer `v` of type `t`."""
        kinds = ["mul", "relu"]
        if "region-writes" in self.feat:
            kinds += ["fill", "copy", "generic", "generic"]
        kind = self.rng.choice(kinds)
        if kind == "relu":
            self.emit(f"tx.unary_into relu {v} into {v} : {t}, {t}")
            return
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant {self.rng.choice(['2.0', '0.5', '-1.0', '0.0'])} : f32")
        if kind == "mul":
            self.emit(f"tx.binary_into mul {v}, {c} into {v} : {t}, f32, {t}")
        elif kind == "fill":
            self.emit(f"linalg.fill ins({c} : f32) outs({v} : {t})")
        elif kind == "copy":
            fresh = self.fresh("cp")
            width = t.split("x")[1]
            self.emit(f"{fresh} = tx.unary neg {v} : {t} -> memref<{t[7:].split('x')[0]}x{width}xf32>")
            self.emit(f"linalg.copy ins({fresh} : memref<{t[7:].split('x')[0]}x{width}xf32>) outs({v} : {t})")
        else:
            self.emit("linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], "
                      "iterator_types = [\"parallel\", \"parallel\"]} "
                      f"outs({v} : {t}) {{")
            a, m = self.fresh("e"), self.fresh("e")
            self.emit(f"^bb0({a}: f32):")
            self.emit(f"  {m} = arith.mulf {a}, {c} : f32")
            self.emit(f"  linalg.yield {m} : f32")
            self.emit("}")

    def write_fresh(self, scope):
        """An in-place write to a projection's own output: harmless."""
        if not scope:
            return
        r, w = self.rng.choice(scope)
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant 3.0 : f32")
        t = self.buf(w)
        self.emit(f"tx.binary_into add {r}, {c} into {r} : {t}, f32, {t}")

    def branch(self, scope, cond=None, layer=None):
        """scf.if with a projection in the then-branch and a filler of the
        same width in the else-branch; the result joins `scope`."""
        layer = layer or self.pick_uncalled()
        if layer is None:
            return
        width = layer[1]
        t = self.buf(width)
        cond = cond or "%flag"
        res = self.fresh("b")
        self.emit(f"{res} = scf.if {cond} -> ({t}) {{")
        self.indent += 2
        inner = []
        if self.rng.random() < 0.3:
            self.write_fresh(scope)
        r = self.call(layer, inner)
        if self.rng.random() < 0.2:
            self.write_input()
        self.emit(f"scf.yield {r} : {t}")
        self.indent -= 2
        self.emit("} else {")
        self.indent += 2
        f = self.filler(width)
        self.emit(f"scf.yield {f} : {t}")
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
        t = self.buf(width)
        init = self.filler(width)
        lo, hi, st = self.fresh("lo"), self.fresh("hi"), self.fresh("st")
        self.emit(f"{lo} = arith.constant 0 : index")
        trips = [1, 2] if "loop-writes" not in self.feat else [1, 2, 3]
        self.emit(f"{hi} = arith.constant {self.rng.choice(trips)} : index")
        self.emit(f"{st} = arith.constant 1 : index")
        res, acc, iv = self.fresh("l"), self.fresh("acc"), self.fresh("i")
        self.emit(f"{res} = scf.for {iv} = {lo} to {hi} step {st} iter_args({acc} = {init}) -> ({t}) {{")
        self.indent += 2
        inner = []
        r = self.call(layer, inner)
        s = self.fresh("sum")
        if self.src.get(name, "x").startswith("ydyn"):
            s = r   # fewer rows than the accumulator: carry the last one
        else:
            self.emit(f"{s} = tx.binary add {acc}, {r} : {t}, {t} -> {t}")
        if "loop-writes" in self.feat and self.rng.random() < 0.7:
            # The next iteration's projection reads what this one wrote.
            self.write_source(self.src.get(name, "x"))
        self.emit(f"scf.yield {s} : {t}")
        self.indent -= 2
        self.emit("}")
        scope.append((res, width))

    def static_loop(self):
        """scf.for over a static %x: a read of %x by an op the CPU lowering
        does not vectorise (a view with a dynamic row count) and an in-place
        update of all of %x (vectorised); the update's transfer_read/write
        must not leave the loop, since the read sees every iteration's."""
        vt = f"memref<?x{HIDDEN}xf32, strided<[{HIDDEN}, 1]>>"
        dt = f"memref<?x{HIDDEN}xf32>"
        v0, init = self.fresh("sv"), self.fresh("si")
        self.emit(f"{v0} = memref.subview %x[0, 0] [%Kn, {HIDDEN}] [1, 1] : {self.xt} to {vt}")
        self.emit(f"{init} = tx.unary neg {v0} : {vt} -> {dt}")
        lo, hi, st = self.fresh("lo"), self.fresh("hi"), self.fresh("st")
        self.emit(f"{lo} = arith.constant 0 : index")
        self.emit(f"{hi} = arith.constant {self.rng.choice([2, 3])} : index")
        self.emit(f"{st} = arith.constant 1 : index")
        res, acc, iv = self.fresh("sl"), self.fresh("acc"), self.fresh("i")
        self.emit(f"{res} = scf.for {iv} = {lo} to {hi} step {st} iter_args({acc} = {init}) -> ({dt}) {{")
        self.indent += 2
        writes_first = self.rng.random() < 0.3
        if writes_first:
            self.inplace("%x", self.xt)
        v, u = self.fresh("sv"), self.fresh("su")
        self.emit(f"{v} = memref.subview %x[0, 0] [%Kn, {HIDDEN}] [1, 1] : {self.xt} to {vt}")
        self.emit(f"{u} = tx.unary {self.rng.choice(['relu', 'neg', 'silu'])} {v} : {vt} -> {dt}")
        if not writes_first:
            self.inplace("%x", self.xt)
        self.emit(f"scf.yield {u} : {dt}")
        self.indent -= 2
        self.emit("}")
        self.extra_results.append((res, dt))

    def cfg_loop(self, scope):
        """A loop as a CFG cycle inside scf.execute_region; the projection
        in it runs once per iteration and its input is written in the loop
        (before the call, after it, or on the back edge)."""
        layer = self.pick_uncalled()
        if layer is None:
            return
        name, width = layer
        src = self.src.get(name, "x")
        # Usually a sibling is called first, outside the loop: merging the
        # two would hoist this call out of the cycle.
        siblings = [l for l in self.layers if l[0] not in self.called and
                    l != layer and self.src.get(l[0], "x") == src]
        if siblings and self.rng.random() < 0.7:
            self.call(self.rng.choice(siblings), scope)
        t = self.buf(width)
        init = self.filler(width)
        res = self.fresh("cl")
        self.emit(f"{res} = scf.execute_region -> {t} {{")
        self.indent += 2
        lo, one, hi = self.fresh("lo"), self.fresh("one"), self.fresh("hi")
        self.emit(f"{lo} = arith.constant 0 : index")
        self.emit(f"{one} = arith.constant 1 : index")
        self.emit(f"{hi} = arith.constant {self.rng.choice([2, 3])} : index")
        head, latch, done = self.fresh("bb")[1:], self.fresh("bb")[1:], self.fresh("bb")[1:]
        iv, acc = self.fresh("i"), self.fresh("acc")
        self.emit(f"cf.br ^{head}({lo}, {init} : index, {t})")
        self.indent -= 2
        self.emit(f"^{head}({iv}: index, {acc}: {t}):")
        self.indent += 2
        where = self.rng.choice(["before", "after", "after", "latch", "latch", "none"])
        if where == "before":
            self.write_source(src)
        r = self.call(layer, [])
        s = self.fresh("sum")
        if src.startswith("ydyn"):
            s = r   # fewer rows than the accumulator: carry the last one
        else:
            self.emit(f"{s} = tx.binary add {acc}, {r} : {t}, {t} -> {t}")
        if where == "after":
            self.write_source(src)
        nxt, cond = self.fresh("i"), self.fresh("cond")
        self.emit(f"{nxt} = arith.addi {iv}, {one} : index")
        self.emit(f"{cond} = arith.cmpi slt, {nxt}, {hi} : index")
        if where == "latch":
            self.emit(f"cf.cond_br {cond}, ^{latch}, ^{done}")
            self.indent -= 2
            self.emit(f"^{latch}:")
            self.indent += 2
            self.write_source(src)
            self.emit(f"cf.br ^{head}({nxt}, {s} : index, {t})")
        else:
            self.emit(f"cf.cond_br {cond}, ^{head}({nxt}, {s} : index, {t}), ^{done}")
        self.indent -= 2
        self.emit(f"^{done}:")
        self.indent += 2
        self.emit(f"scf.yield {s} : {t}")
        self.indent -= 2
        self.emit("}")
        scope.append((res, width))

    def exclusive(self, scope):
        """scf.if with one projection of a group in each branch; a write to
        the input after the call in one branch is not between the calls, one
        before the call is."""
        first = self.pick_uncalled()
        if first is None:
            return
        src = self.src.get(first[0], "x")
        others = [l for l in self.layers if l[0] not in self.called and
                  l != first and self.src.get(l[0], "x") == src]
        if not others:
            return self.branch(scope, layer=first)
        second = self.rng.choice(others)
        types = f"{self.buf(first[1])}, {self.buf(second[1])}"
        res = self.fresh("x")
        self.emit(f"{res}:2 = scf.if %flag -> ({types}) {{")
        outs = []
        for i, layer in enumerate([first, second]):
            self.indent += 2
            where = self.rng.choice(["after", "after", "before", "none"])
            if where == "before":
                self.write_source(src)
            r = self.call(layer, [])
            f = self.filler(second[1] if i == 0 else first[1])
            if where == "after":
                self.write_source(src)
            vals = f"{r}, {f}" if i == 0 else f"{f}, {r}"
            self.emit(f"scf.yield {vals} : {types}")
            self.indent -= 2
            self.emit("} else {" if i == 0 else "}")
        scope.append((f"{res}#0", first[1]))
        scope.append((f"{res}#1", second[1]))

    def opaque_or_container(self):
        if self.rng.random() < 0.5:
            self.emit(f"tx.opaque_call \"hook\"(%x) : ({self.xt}) -> ()")
        else:
            i = self.fresh("idx")
            self.emit(f"{i} = arith.constant 0 : index")
            what = "%x" if self.rng.random() < 0.5 or not self.results else self.results[-1][0]
            t = self.xt if what == "%x" else self.buf(self.results[-1][1])
            self.emit(f"tx.container_set %states[{i}] = {what} : {t}")

    def prologue(self):
        """Index values for dynamic views of %y ([T, 64]); `%fs` is +1 or -1
        and T is the token count, so none of these fold."""
        if self.rows != "?":
            return ["%Kk32 = arith.fptosi %fs : f32 to i32",
                    "%Kk = arith.index_cast %Kk32 : i32 to index",
                    "%K2 = arith.constant 2 : index",
                    "%Kn = arith.addi %Kk, %K2 : index"]  # 3 or 1 rows
        if not self.dyn_views:
            return []
        return [
            "%d0 = arith.constant 0 : index",
            "%d1 = arith.constant 1 : index",
            "%d2 = arith.constant 2 : index",
            "%d3 = arith.constant 3 : index",
            "%d4 = arith.constant 4 : index",
            "%d8 = arith.constant 8 : index",
            "%d16 = arith.constant 16 : index",
            "%dk32 = arith.fptosi %fs : f32 to i32",
            "%dk = arith.index_cast %dk32 : i32 to index",
            f"%dT = memref.dim %y, %d0 : {self.yt}",
            "%dTm1 = arith.subi %dT, %d1 : index",
            "%kp = arith.addi %dk, %d1 : index",   # 2 or 0
            "%km = arith.subi %d1, %dk : index",   # 0 or 2
            "%oA = arith.muli %kp, %d16 : index",  # 32 or 0
            "%oB = arith.muli %km, %d16 : index",  # 0 or 32
            "%dTc = arith.minui %dT, %d4 : index",
            "%oC = arith.muli %dTc, %d8 : index",  # 8 T (T <= 4)
            "%kp2 = arith.addi %kp, %d2 : index",
            "%km2 = arith.addi %km, %d2 : index",
            "%sA = arith.divui %kp2, %d2 : index",  # 2 or 1
            "%sB = arith.divui %km2, %d2 : index",  # 1 or 2
            "%rA0 = arith.divui %kp, %d2 : index",  # 1 or 0
            "%rB0 = arith.divui %km, %d2 : index",  # 0 or 1
            "%rA = arith.minui %rA0, %dTm1 : index",
            "%rB = arith.minui %rB0, %dTm1 : index",
        ]

    # --- a whole program -------------------------------------------------
    def program(self):
        nlayers = self.rng.randint(2, 4)
        uniform = self.rng.random() < 0.5
        w0 = self.rng.choice(WIDTHS)
        for i in range(nlayers):
            self.layers.append((f"proj{i}", w0 if uniform else self.rng.choice(WIDTHS)))
        if self.has_y:
            # Each layer reads %x, a static slice of %y or a dynamic view of
            # %y; layers reading views of one type form a group.
            choices = ["x"]
            if "disjoint" in self.feat:
                choices += [f"y@{o}" for o in Y_READ_OFFSETS]
            if self.dyn_views:
                choices += ["ydyn", "ydyn", "ydyn-strided"]
            shared = self.rng.choice(choices[1:] if len(choices) > 1 else choices)
            for name, _ in self.layers:
                self.src[name] = shared if self.rng.random() < 0.7 else self.rng.choice(choices)
        steps = self.rng.randint(nlayers, nlayers + 4)
        actions = ["call", "call", "branch", "guard", "write_input", "write_fresh", "loop"]
        if self.kind == "any":
            actions += ["opaque"]
        if "cfg-loops" in self.feat:
            actions += ["cfg_loop", "cfg_loop", "cfg_loop"]
        if "exclusive" in self.feat:
            actions += ["exclusive", "exclusive"]
        if self.feat and not self.feat & {"cfg-loops", "exclusive"}:
            actions += ["write_input"]
        if "static" in self.feat:
            actions += ["static_loop", "static_loop"]
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
            elif a == "loop" and self.rng.random() < (0.4 if not self.feat or "loop-writes" not in self.feat else 0.8):
                self.loop(self.results)
            elif a == "opaque":
                self.opaque_or_container()
            elif a == "cfg_loop":
                self.cfg_loop(self.results)
            elif a == "exclusive":
                self.exclusive(self.results)
            elif a == "static_loop":
                self.static_loop()
        # Every layer is called at least once so the groups are complete.
        while (layer := self.pick_uncalled()) is not None:
            self.call(layer, self.results)
        body = self.lines
        rets = ", ".join([r for r, _ in self.results] + [r for r, _ in self.extra_results])
        types = ", ".join([self.buf(w) for _, w in self.results] + [t for _, t in self.extra_results])
        bias = " bias" if self.has_bias else ""
        out = ["module attributes {tx.config = #tx.config<tp_size = 1>} {"]
        for name, width in self.layers:
            out.append(f"  tx.layer @{name} : {HIDDEN} -> {width}, f32{bias}")
        extra = ", %states: !tx.container" if self.kind == "any" else ""
        if self.has_y:
            extra = f", %y: {self.yt}" + extra
        # The branch flag is an f32 argument (> 0: true) so the CPU runner,
        # which passes f32 tensors and scalars, can drive both sides.
        out.append(f"  func.func @forward(%x: {self.xt}, %fs: f32{extra}) -> ({types}) {{")
        out.append("    %zero = arith.constant 0.0 : f32")
        out.append("    %flag = arith.cmpf ogt, %fs, %zero : f32")
        out += ["    " + l for l in self.prologue()]
        out += ["  " + l for l in body]
        out.append(f"    return {rets} : {types}")
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


def parse_features(text):
    if not text:
        return []
    if text == "all":
        return list(FEATURES)
    feats = [f for f in text.split(",") if f]
    for f in feats:
        if f not in FEATURES:
            raise SystemExit(f"gen_programs.py: unknown feature '{f}' "
                             f"(known: {', '.join(FEATURES)}, all)")
    return feats


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kind", choices=["exec", "any"], default="exec")
    ap.add_argument("--features", default="",
                    help="comma-separated: " + ", ".join(FEATURES) + " (or all)")
    args = ap.parse_args()
    feats = parse_features(args.features)
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.count):
        rng = random.Random(args.seed * 1000003 + i)
        text = Gen(rng, args.kind, feats).program()
        with open(os.path.join(args.out, f"prog_{args.seed}_{i}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
