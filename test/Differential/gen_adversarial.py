#!/usr/bin/env python3
"""Adversarial random programs for the stacked-linear fusion's alias reasoning.

Independent of gen_programs.py: programs are built as a tree of statements
over a *storage model*. Each program picks one storage for the projections'
input (a function argument, a column window of a wider argument, a fresh
buffer, a byte buffer seen through `memref.view`, a flat buffer expanded with
`memref.expand_shape`, or the arguments of a private function that its
caller passes the same buffer twice), then reaches that storage through
chains of aliases that are not tx views (`memref.cast`, `reinterpret_cast`,
`expand_shape`/`collapse_shape`, `memref.transpose`, subviews of subviews,
`extract_strided_metadata`, `scf.if` / `scf.for` / `scf.while` /
`scf.execute_region` results, a private identity function) and writes
through them with every kind of writing op (tx in-place ops, `linalg.fill`,
`linalg.generic`, `memref.copy`, `memref.store` in loops, calls of private
functions that write an argument, writes inside `scf.while`, multi-block
`scf.execute_region`s and nested branches). Projections sit in the entry
block, in branches, behind `tx.guard`s and after the writes. Every
projection result and the final contents of the storage are returned, so
`tx-difftest` compares everything a wrong fusion could change.

With `--kind=exec` (default) every construct is one the CPU pipeline
executes (run with `tx-to-cpu{deallocate=false}`: programs return views of
arguments through calls and loops); `--kind=any` adds writes through
`tx.opaque_call` and through buffers stored into and read back from a
container, for checking that the rewrite keeps the IR valid (`--no-run`).

Usage: gen_adversarial.py --seed N --count K --out DIR [--kind exec|any]
Writes DIR/adv_<seed>_<i>.mlir; the same seed always gives the same files.
"""
import argparse
import os
import random

H = 32          # in-features of every layer
WIDE = 64       # width of %y
WIDTHS = [8, 16]
DYN = "?"


class MemTy:
    """A 2-D f32 memref type: shape, strides, offset (None: dynamic) and
    whether it is written with the identity layout."""

    def __init__(self, shape, strides, offset, identity=False):
        self.shape, self.strides, self.offset = list(shape), list(strides), offset
        self.identity = identity

    def __str__(self):
        dims = "x".join(DYN if d is None else str(d) for d in self.shape)
        if self.identity:
            return f"memref<{dims}xf32>"
        st = ", ".join(DYN if s is None else str(s) for s in self.strides)
        off = DYN if self.offset is None else str(self.offset)
        return f"memref<{dims}xf32, strided<[{st}], offset: {off}>>"

    def contiguous_rows(self):
        return self.strides[1] == 1 and self.shape[1] is not None


# The token count: dynamic (None, `%T`) or, in static programs, 4 (the CPU
# lowering then vectorises, and hoists accumulators out of loops).
R, RS, RD, ALLOC = None, "%T", "?", "(%T)"


def set_rows(rows):
    global R, RS, RD, ALLOC
    if rows is None:
        R, RS, RD, ALLOC = None, "%T", "?", "(%T)"
    else:
        R, RS, RD, ALLOC = rows, str(rows), str(rows), "()"


def ident(cols, rows=None):
    return MemTy([rows if rows is not None else R, cols], [cols, 1], 0, identity=True)


FULLDYN = MemTy([None, H], [None, None], None)
ANY = "memref<?x?xf32, strided<[?, ?], offset: ?>>"


class Prog:
    def __init__(self, rng, kind="exec"):
        self.rng = rng
        self.kind = kind
        self.lines = []
        self.ind = 4
        self.n = 0
        self.helpers = {}        # name -> text of a private function
        self.layers = []         # (name, width)
        self.called = set()
        self.results = []        # (ssa, width) at function scope
        self.extra = []          # (ssa, type) more values to return
        self.layers2 = []        # (name, in_features) of second-level layers
        # Top-level calls (layer names) and writes of the input's storage
        # (None) in program order: two layers with such a write between
        # their calls must never be fused together.
        self.events = []
        self.mode = None

    # -- emission ------------------------------------------------------
    def fresh(self, p="v"):
        self.n += 1
        return f"%{p}_{self.n}"

    def emit(self, s):
        self.lines.append(" " * self.ind + s)

    def helper(self, name, text):
        self.helpers.setdefault(name, text)

    # -- the storage ---------------------------------------------------
    def storage(self):
        """Emits the buffer the projections read: (value, type)."""
        kind = self.mode
        if kind == "arg":
            return "%x", ident(H)
        if kind == "ywin":
            off = self.rng.choice([0, 16, 32])
            v = self.fresh("yw")
            t = MemTy([R, H], [WIDE, 1], off)
            self.emit(f"{v} = tx.slice %y dim 1 offset {off} size {H} : {ident(WIDE)} -> {t}")
            return v, t
        if kind == "fresh":
            v = self.fresh("fb")
            self.emit(f"{v} = tx.unary neg %x : {ident(H)} -> {ident(H)}")
            return v, ident(H)
        if kind == "bytes":
            nb, raw, v = self.fresh("nb"), self.fresh("raw"), self.fresh("bv")
            self.emit(f"{nb} = arith.muli %T, %c128 : index")
            self.emit(f"{raw} = memref.alloc({nb}) : memref<?xi8>")
            self.emit(f"{v} = memref.view {raw}[%c0][%T] : memref<?xi8> to {ident(H)}")
            self.emit(f"tx.copy %x into {v} : {ident(H)}, {ident(H)}")
            self.raw = raw
            return v, ident(H)
        if kind == "flat":
            ne, fl, v = self.fresh("ne"), self.fresh("fl"), self.fresh("ex")
            self.emit(f"{ne} = arith.muli %T, %c32 : index")
            self.emit(f"{fl} = memref.alloc({ne}) : memref<?xf32>")
            self.emit(f"{v} = memref.expand_shape {fl} [[0, 1]] output_shape [{RS}, 32] : memref<?xf32> into {ident(H)}")
            self.emit(f"tx.copy %x into {v} : {ident(H)}, {ident(H)}")
            self.flat = fl
            return v, ident(H)
        if kind == "argpair":
            # In @body: %a is the input, %b the same buffer or a view of it.
            return "%a", FULLDYN
        raise AssertionError(kind)

    # -- aliases of a whole [T, 32] buffer -------------------------------
    def full_alias(self, v, t, depth=0):
        """A value showing the same elements as `v`, reached some other way."""
        rng = self.rng
        opts = ["txalias", "cast", "subview", "ttrans", "mtrans", "if", "for",
                "exec", "call", "while"]
        if t.identity:
            opts += ["reinterp", "extract", "expand"]
        elif t.contiguous_rows() and t.strides[0] is not None:
            opts += ["expand"]
        k = rng.choice(opts)
        r = self.fresh("al")
        if k == "txalias":
            self.emit(f"{r} = tx.alias {v} : {t}")
            return r, t
        if k == "cast":
            if t is FULLDYN or str(t) == str(FULLDYN):
                self.emit(f"{r} = tx.alias {v} : {t}")
                return r, t
            self.emit(f"{r} = memref.cast {v} : {t} to {FULLDYN}")
            return r, FULLDYN
        if k == "subview":
            nt = MemTy([R, H], t.strides, t.offset)
            self.emit(f"{r} = memref.subview {v}[0, 0] [{RS}, 32] [1, 1] : {t} to {nt}")
            return r, nt
        if k in ("ttrans", "mtrans"):
            tt = MemTy([t.shape[1], t.shape[0]], [t.strides[1], t.strides[0]], t.offset)
            bt = MemTy(t.shape, t.strides, t.offset)
            m = self.fresh("tr")
            if k == "ttrans":
                self.emit(f"{m} = tx.transpose {v} [1, 0] : {t} -> {tt}")
                self.emit(f"{r} = tx.transpose {m} [1, 0] : {tt} -> {bt}")
            else:
                self.emit(f"{m} = memref.transpose {v} (i, j) -> (j, i) : {t} to {tt}")
                self.emit(f"{r} = memref.transpose {m} (i, j) -> (j, i) : {tt} to {bt}")
            return r, bt
        if k == "if":
            self.emit(f"{r} = scf.if {rng.choice(['%flag', '%nflag'])} -> ({t}) {{")
            self.ind += 2
            a = v
            if depth < 2 and rng.random() < 0.4:
                a, at = self.full_alias(v, t, depth + 1)
                if str(at) != str(t):
                    a = v
            self.emit(f"scf.yield {a} : {t}")
            self.ind -= 2
            self.emit("} else {")
            self.ind += 2
            self.emit(f"scf.yield {v} : {t}")
            self.ind -= 2
            self.emit("}")
            return r, t
        if k == "for":
            it = self.fresh("it")
            self.emit(f"{r} = scf.for {self.fresh('i')} = %c0 to {rng.choice(['%c0', '%c1', '%c2'])} step %c1 iter_args({it} = {v}) -> ({t}) {{")
            self.emit(f"  scf.yield {it} : {t}")
            self.emit("}")
            return r, t
        if k == "exec":
            self.emit(f"{r} = scf.execute_region -> {t} {{")
            self.emit(f"  scf.yield {v} : {t}")
            self.emit("}")
            return r, t
        if k == "while":
            a, b = self.fresh("wa"), self.fresh("wb")
            self.emit(f"{r} = scf.while ({a} = {v}) : ({t}) -> {t} {{")
            self.emit(f"  scf.condition(%false) {a} : {t}")
            self.emit("} do {")
            self.emit(f"^bb0({b}: {t}):")
            self.emit(f"  scf.yield {b} : {t}")
            self.emit("}")
            return r, t
        if k == "call":
            d = self.fresh("cd")
            if str(t) != str(FULLDYN):
                self.emit(f"{d} = memref.cast {v} : {t} to {FULLDYN}")
            else:
                d = v
            self.helper("ident", f"  func.func private @ident(%p: {FULLDYN}) -> {FULLDYN} {{\n"
                        f"    return %p : {FULLDYN}\n  }}")
            self.emit(f"{r} = func.call @ident({d}) : ({FULLDYN}) -> {FULLDYN}")
            return r, FULLDYN
        if k == "reinterp":
            self.emit(f"{r} = memref.reinterpret_cast {v} to offset: [0], sizes: [{RS}, 32], strides: [32, 1] : {t} to {ident(H)}")
            return r, ident(H)
        if k == "extract":
            b, o = self.fresh("base"), self.fresh("o")
            self.emit(f"{b}, {o}, {o}s:2, {o}t:2 = memref.extract_strided_metadata {v} : {t} -> memref<f32>, index, index, index, index, index")
            self.emit(f"{r} = memref.reinterpret_cast {b} to offset: [0], sizes: [{RS}, 32], strides: [32, 1] : memref<f32> to {ident(H)}")
            return r, ident(H)
        if k == "expand":
            e = self.fresh("e3")
            s0 = DYN if t.strides[0] is None else t.strides[0]
            off = DYN if t.offset is None else t.offset
            if t.identity:
                et, bt = f"memref<{RD}x4x8xf32>", t
            else:
                et = f"memref<{RD}x4x8xf32, strided<[{s0}, 8, 1], offset: {off}>>"
                bt = MemTy([R, H], [t.strides[0], 1], t.offset)
            self.emit(f"{e} = memref.expand_shape {v} [[0], [1, 2]] output_shape [{RS}, 4, 8] : {t} into {et}")
            self.emit(f"{r} = memref.collapse_shape {e} [[0], [1, 2]] : {et} into {bt}")
            return r, bt
        raise AssertionError(k)

    def alias_chain(self, v, t):
        for _ in range(self.rng.choice([0, 1, 1, 2, 3])):
            v, t = self.full_alias(v, t)
        return v, t

    # -- partial views -------------------------------------------------
    def partial(self, v, t):
        """A view of part of `v` (columns, rows, dynamic offsets, nested)."""
        rng = self.rng
        k = rng.choice(["cols", "cols", "rows", "dyncols", "subsub", "transslice", "whole"])
        r = self.fresh("pv")
        if k == "whole":
            return v, t
        if k == "cols":
            off, size = rng.choice([(0, 8), (8, 8), (24, 8), (0, 16), (16, 16), (4, 20)])
            if t.offset is None or t.strides[1] is None:
                nt = MemTy([t.shape[0], size], t.strides, None)
            else:
                nt = MemTy([t.shape[0], size], t.strides, t.offset + off * t.strides[1])
            if off == 0:
                nt.offset = t.offset
            self.emit(f"{r} = tx.slice {v} dim 1 offset {off} size {size} : {t} -> {nt}")
            return r, nt
        if k == "rows":
            nt = MemTy([1, H], t.strides, t.offset)
            self.emit(f"{r} = tx.slice {v} dim 0 offset 0 size 1 : {t} -> {nt}")
            return r, nt
        if k == "dyncols":
            col = rng.choice(["%o8", "%o12", "%c0"])
            nt = MemTy([R, 8], t.strides, None)
            self.emit(f"{r} = memref.subview {v}[0, {col}] [{RS}, 8] [1, 1] : {t} to {nt}")
            return r, nt
        if k == "subsub":
            m = self.fresh("sv")
            def off_of(o):
                if t.offset is None or t.strides[1] is None:
                    return None
                return t.offset + o * t.strides[1]
            mt = MemTy([R, 20], t.strides, off_of(4))
            self.emit(f"{m} = memref.subview {v}[0, 4] [{RS}, 20] [1, 1] : {t} to {mt}")
            o2 = None if mt.offset is None or t.strides[1] is None else mt.offset + 2 * t.strides[1]
            nt = MemTy([R, 8], t.strides, o2)
            self.emit(f"{r} = memref.subview {m}[0, 2] [{RS}, 8] [1, 1] : {mt} to {nt}")
            return r, nt
        if k == "transslice":
            m = self.fresh("ts")
            tt = MemTy([t.shape[1], t.shape[0]], [t.strides[1], t.strides[0]], t.offset)
            self.emit(f"{m} = tx.transpose {v} [1, 0] : {t} -> {tt}")
            off = rng.choice([0, 8, 16])
            if off == 0:
                noff = tt.offset
            elif tt.offset is None or tt.strides[0] is None:
                noff = None
            else:
                noff = tt.offset + off * tt.strides[0]
            nt = MemTy([8, tt.shape[1]], tt.strides, noff)
            self.emit(f"{r} = tx.slice {m} dim 0 offset {off} size 8 : {tt} -> {nt}")
            return r, nt
        raise AssertionError(k)

    # -- writes ----------------------------------------------------------
    def writer_fn(self, name, body):
        self.helper(name, f"  func.func private @{name}(%p: {ANY}) {{\n"
                    f"    %two = arith.constant 2.0 : f32\n{body}    return\n  }}")

    def write(self, v, t):
        """One write of every element of `v` (or of one element)."""
        rng = self.rng
        kinds = ["mul", "relu", "copy", "fill", "generic", "mcopy",
                 "store", "storeloop", "call", "call2", "while", "exec"]
        if self.kind == "any":
            kinds += ["opaque", "container", "container"]
        k = rng.choice(kinds)
        if k == "opaque":
            self.emit(f"tx.opaque_call \"hook\"({v}) : ({t}) -> ()")
            return
        if k == "container":
            # The buffer escapes into the container and comes back as
            # another value, which is then written.
            i, g = self.fresh("idx"), self.fresh("cg")
            self.emit(f"{i} = arith.constant {rng.choice([0, 1])} : index")
            self.emit(f"tx.container_set %states[{i}] = {v} : {t}")
            self.emit(f"{g} = tx.container_get %states[{i}] : {t}")
            self.emit(f"tx.unary_into neg {g} into {g} : {t}, {t}")
            return
        c = self.fresh("c")
        self.emit(f"{c} = arith.constant {rng.choice(['2.0', '-1.5', '0.25'])} : f32")
        if k == "mul":
            self.emit(f"tx.binary_into mul {v}, {c} into {v} : {t}, f32, {t}")
        elif k == "relu":
            self.emit(f"tx.unary_into {rng.choice(['relu', 'neg'])} {v} into {v} : {t}, {t}")
        elif k == "copy":
            s = self.fresh("src")
            ct = MemTy(t.shape, [None, None], None)
            ct = f"memref<{'x'.join(DYN if d is None else str(d) for d in t.shape)}xf32>"
            self.emit(f"{s} = tx.unary silu {v} : {t} -> {ct}")
            self.emit(f"tx.copy {s} into {v} : {ct}, {t}")
        elif k == "fill":
            self.emit(f"linalg.fill ins({c} : f32) outs({v} : {t})")
        elif k == "generic":
            a, m = self.fresh("e"), self.fresh("e")
            self.emit("linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], "
                      "iterator_types = [\"parallel\", \"parallel\"]} "
                      f"outs({v} : {t}) {{")
            self.emit(f"^bb0({a}: f32):")
            self.emit(f"  {m} = arith.addf {a}, {c} : f32")
            self.emit(f"  linalg.yield {m} : f32")
            self.emit("}")
        elif k == "mcopy":
            s = self.fresh("src")
            ct = f"memref<{'x'.join(DYN if d is None else str(d) for d in t.shape)}xf32>"
            self.emit(f"{s} = tx.unary neg {v} : {t} -> {ct}")
            self.emit(f"memref.copy {s}, {v} : {ct} to {t}")
        elif k == "store":
            self.emit(f"memref.store {c}, {v}[%c0, %c0] : {t}")
        elif k == "storeloop":
            n, i = self.fresh("n"), self.fresh("i")
            self.emit(f"{n} = memref.dim {v}, %c0 : {t}")
            self.emit(f"scf.for {i} = %c0 to {n} step %c1 {{")
            self.emit(f"  memref.store {c}, {v}[{i}, %c0] : {t}")
            self.emit("}")
        elif k in ("call", "call2"):
            d = self.fresh("wd")
            self.emit(f"{d} = memref.cast {v} : {t} to {ANY}")
            if k == "call":
                self.writer_fn("scale", f"    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} outs(%p : {ANY}) {{\n"
                               f"    ^bb0(%e: f32):\n      %m = arith.mulf %e, %two : f32\n      linalg.yield %m : f32\n    }}\n")
                self.emit(f"func.call @scale({d}) : ({ANY}) -> ()")
            else:
                # Writes its second argument; the first is only read.
                self.helper("write2", f"  func.func private @write2(%r: {ANY}, %p: {ANY}) {{\n"
                            f"    %c0 = arith.constant 0 : index\n"
                            f"    %e = memref.load %r[%c0, %c0] : {ANY}\n"
                            f"    memref.store %e, %p[%c0, %c0] : {ANY}\n"
                            f"    %one = arith.constant 1.0 : f32\n"
                            f"    linalg.fill ins(%one : f32) outs(%p : {ANY})\n"
                            f"    return\n  }}")
                o = self.fresh("wr")
                self.emit(f"{o} = memref.cast %x : {ident(H)} to {ANY}")
                self.emit(f"func.call @write2({o}, {d}) : ({ANY}, {ANY}) -> ()")
        elif k == "while":
            a, b = self.fresh("wi"), self.fresh("wj")
            self.emit(f"scf.while ({a} = %c0) : (index) -> index {{")
            cnd = self.fresh("cnd")
            self.emit(f"  {cnd} = arith.cmpi slt, {a}, %c1 : index")
            self.emit(f"  scf.condition({cnd}) {a} : index")
            self.emit("} do {")
            self.emit(f"^bb0({b}: index):")
            self.emit(f"  memref.store {c}, {v}[%c0, {b}] : {t}")
            nx = self.fresh("nx")
            self.emit(f"  {nx} = arith.addi {b}, %c1 : index")
            self.emit(f"  scf.yield {nx} : index")
            self.emit("}")
        elif k == "exec":
            bb1, bb2 = self.fresh("bb")[1:], self.fresh("bb")[1:]
            self.emit("scf.execute_region {")
            self.emit(f"  cf.cond_br {rng.choice(['%flag', '%nflag', '%true'])}, ^{bb1}, ^{bb2}")
            self.emit(f"^{bb1}:")
            self.emit(f"  linalg.fill ins({c} : f32) outs({v} : {t})")
            self.emit(f"  cf.br ^{bb2}")
            self.emit(f"^{bb2}:")
            self.emit("  scf.yield")
            self.emit("}")

    def write_somewhere(self):
        """A write through an alias of the storage, of another view of its
        buffer, or of the other argument (argpair)."""
        rng = self.rng
        certain = True
        if self.mode == "ywin" and rng.random() < 0.5:
            # Another window of %y: overlapping or not.
            certain = False
            off = rng.choice(["0", "16", "32", "dyn"])
            v = self.fresh("yo")
            if off == "dyn":
                t = MemTy([R, H], [WIDE, 1], None)
                self.emit(f"{v} = memref.subview %y[0, %o16] [{RS}, 32] [1, 1] : {ident(WIDE)} to {t}")
            else:
                t = MemTy([R, H], [WIDE, 1], int(off))
                self.emit(f"{v} = tx.slice %y dim 1 offset {off} size {H} : {ident(WIDE)} -> {t}")
        elif self.mode == "argpair" and rng.random() < 0.6:
            v, t = "%b", FULLDYN
            certain = self.how != "yview"
        elif self.mode == "bytes" and rng.random() < 0.3:
            v, t = self.fresh("bv"), ident(H)
            self.emit(f"{v} = memref.view {self.raw}[%c0][%T] : memref<?xi8> to {t}")
        elif self.mode == "flat" and rng.random() < 0.3:
            v, t = self.fresh("fx"), ident(H)
            self.emit(f"{v} = memref.expand_shape {self.flat} [[0, 1]] output_shape [{RS}, 32] : memref<?xf32> into {t}")
        else:
            v, t = self.base
        v, t = self.alias_chain(v, t)
        v, t = self.partial(v, t)
        self.write(v, t)
        return certain

    def write_harmless(self):
        """A write to a fresh buffer (or a result): never blocks fusion."""
        v = self.fresh("hf")
        self.emit(f"{v} = tx.unary neg %x : {ident(H)} -> {ident(H)}")
        w, t = self.alias_chain(v, ident(H))
        w, t = self.partial(w, t)
        self.write(w, t)

    # -- calls -------------------------------------------------------------
    def input_value(self):
        v, t = self.base
        if self.rng.random() < 0.5:
            return v, t
        # An alias recognised as the same buffer (tx.alias) or not.
        if self.rng.random() < 0.5:
            r = self.fresh("in")
            self.emit(f"{r} = tx.alias {v} : {t}")
            return r, t
        w, wt = self.full_alias(v, t)
        return (w, wt) if str(wt) == str(t) else (v, t)

    def call(self, layer, scope):
        name, width = layer
        self.called.add(name)
        v, t = self.input_value()
        r = self.fresh("p")
        self.emit(f"{r} = tx.linear @{name}({v}) : {t} -> {ident(width)}")
        scope.append((r, width))
        return r

    def pick(self):
        free = [l for l in self.layers if l[0] not in self.called]
        return self.rng.choice(free) if free else None

    def filler(self, width):
        f = self.fresh("z")
        self.emit(f"{f} = memref.alloc{ALLOC} : {ident(width)}")
        self.emit(f"linalg.fill ins(%zero : f32) outs({f} : {ident(width)})")
        return f

    def branch(self, scope, depth):
        """scf.if (maybe behind a guard) with statements and calls in both
        branches; call results leave through the if's results."""
        rng = self.rng
        cond = rng.choice(["%flag", "%nflag"])
        layer = self.pick()
        if layer and rng.random() < 0.4:
            ref, g = self.fresh("ref"), self.fresh("g")
            self.emit(f"{ref} = tx.layer_ref @{layer[0]}")
            self.emit(f"{g} = tx.guard {rng.choice(['is_not_none', 'truthy'])} {ref}")
            if rng.random() < 0.5:
                g2 = self.fresh("g")
                self.emit(f"{g2} = arith.andi {g}, {cond} : i1")
                g = g2
            cond = g
        # Plan which layers each branch calls.
        thenl = [layer] if layer else []
        elsel = []
        other = self.pick_excluding(thenl)
        if other and rng.random() < 0.5:
            elsel.append(other)
        for l in thenl + elsel:
            self.called.add(l[0])
        outs = thenl + elsel
        types = ", ".join(str(ident(w)) for _, w in outs)
        res = self.fresh("br")
        head = f"{res}:{len(outs)} = " if len(outs) > 1 else (f"{res} = " if outs else "")
        self.emit(f"{head}scf.if {cond}{' -> (' + types + ')' if outs else ''} {{")
        for side, mine in (("then", thenl), ("else", elsel)):
            self.ind += 2
            got = {}
            for l in mine:
                self.called.discard(l[0])
            self.stmts(depth + 1, rng.randint(0, 2), got_calls=got, must=mine)
            vals = []
            for l in outs:
                vals.append(got[l[0]] if l[0] in got else self.filler(l[1]))
            if outs:
                self.emit(f"scf.yield {', '.join(vals)} : {types}")
            self.ind -= 2
            if side == "then":
                self.emit("} else {")
        self.emit("}")
        for i, (_, w) in enumerate(outs):
            scope.append((f"{res}#{i}" if len(outs) > 1 else res, w))

    def pick_excluding(self, ls):
        names = {l[0] for l in ls}
        free = [l for l in self.layers if l[0] not in self.called and l[0] not in names]
        return self.rng.choice(free) if free else None

    def stmts(self, depth, count, got_calls=None, must=()):
        """`count` random statements; the layers in `must` are called here
        (their results go to `got_calls`)."""
        rng = self.rng
        must = list(must)
        slots = count + len(must)
        order = ["must"] * len(must) + ["rand"] * count
        rng.shuffle(order)
        for kind in order:
            if kind == "must":
                l = must.pop()
                inner = []
                r = self.call(l, inner)
                got_calls[l[0]] = r
                continue
            a = rng.choice(["harmless", "branch", "call"] if depth < 3
                           else ["harmless"])
            if rng.random() < self.pwrite:
                a = "write"
            if a == "write":
                if self.write_somewhere() and got_calls is None and depth == 0:
                    self.events.append(None)
            elif a == "harmless":
                self.write_harmless()
            elif a == "branch" and depth < 3:
                if got_calls is None:
                    self.branch(self.results, depth)
                else:
                    self.branch([], depth)   # results unused outside: fine
            elif a == "call" and got_calls is None:
                l = self.pick()
                if l:
                    self.call(l, self.results)
                    if depth == 0:
                        self.events.append(l[0])
            if got_calls is None and self.results and rng.random() < 0.35:
                self.consume(rng.choice(self.results))

    # -- uses of projection results (what the rewrite retypes or copies) --
    def consume(self, res):
        """Reads or writes a projection result the way model code does; new
        values are returned too."""
        rng = self.rng
        r, w = res
        t = ident(w)
        k = rng.choice(["inplace", "heads", "norm", "layer2", "copyout",
                        "callwrite", "slice", "generic"])
        o = self.fresh("u")
        if k == "inplace":
            self.emit(f"tx.binary_into add {r}, %one into {r} : {t}, f32, {t}")
            return
        if k == "heads" and w == 16:
            hv = self.fresh("hv")
            self.emit(f"{hv} = tx.view {r} : {t} -> memref<{RD}x2x8xf32>")
            cs = self.fresh("cs")
            self.emit(f"{cs} = tx.slice %y dim 1 offset 0 size 4 : {ident(WIDE)} -> memref<{RD}x4xf32, strided<[64, 1]>>")
            self.emit(f"{o} = tx.rotary {hv}, {cs}, {cs} : memref<{RD}x2x8xf32>, memref<{RD}x4xf32, strided<[64, 1]>>, memref<{RD}x4xf32, strided<[64, 1]>> -> memref<{RD}x2x8xf32>")
            a = self.fresh("at")
            self.emit(f"{a} = tx.attention {o}, {hv}, {hv} scale 0.35 causal : memref<{RD}x2x8xf32>, memref<{RD}x2x8xf32>, memref<{RD}x2x8xf32> -> memref<{RD}x2x8xf32>")
            self.extra.append((a, f"memref<{RD}x2x8xf32>"))
            return
        if k == "norm":
            self.emit(f"{o} = tx.rmsnorm {r} eps 1.0e-05 : {t} -> {t}")
            self.extra.append((o, str(t)))
            return
        if k == "layer2":
            # Two layers reading the result: a second group, on a strided
            # input once the first is fused.
            for i in range(2):
                name = f"l2_{self.n}_{i}"
                self.layers2.append((name, w))
                p = self.fresh("u")
                self.emit(f"{p} = tx.linear @{name}({r}) : {t} -> {ident(8)}")
                self.extra.append((p, str(ident(8))))
                if i == 0 and rng.random() < 0.5:
                    self.emit(f"tx.unary_into relu {r} into {r} : {t}, {t}")
            return
        if k == "copyout":
            self.emit(f"{o} = memref.alloc{ALLOC} : {t}")
            self.emit(f"memref.copy {r}, {o} : {t} to {t}")
            self.extra.append((o, str(t)))
            return
        if k == "callwrite":
            d = self.fresh("wd")
            self.emit(f"{d} = memref.cast {r} : {t} to {ANY}")
            self.writer_fn("scale", f"    linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]}} outs(%p : {ANY}) {{\n"
                           f"    ^bb0(%e: f32):\n      %m = arith.mulf %e, %two : f32\n      linalg.yield %m : f32\n    }}\n")
            self.emit(f"func.call @scale({d}) : ({ANY}) -> ()")
            return
        if k == "slice":
            st = MemTy([R, 8], [w, 1], w - 8)
            self.emit(f"{o} = tx.slice {r} dim 1 offset {w - 8} size 8 : {t} -> {st}")
            self.emit(f"tx.unary_into neg {o} into {o} : {st}, {st}")
            return
        if k == "generic":
            self.write(r, t)
            return

    # -- the whole module ------------------------------------------------
    def program(self):
        rng = self.rng
        self.pwrite = rng.choice([0.1, 0.25, 0.4])
        if R is not None:
            self.mode = rng.choice(["arg", "ywin", "fresh"])
        else:
            self.mode = rng.choice(["arg", "arg", "ywin", "fresh", "bytes", "flat",
                                    "argpair", "argpair"])
        n = rng.randint(2, 4)
        names = rng.choice([["q_proj", "k_proj", "v_proj", "o_extra"],
                            ["gate_proj", "up_proj", "p2", "p3"],
                            ["a", "b", "c", "d"]])
        for i in range(n):
            self.layers.append((names[i], rng.choice(WIDTHS)))
        self.how = rng.choice(["same", "same", "yview", "rows"])
        self.base = self.storage()
        self.stmts(0, rng.randint(n, n + 5))
        while (l := self.pick()) is not None:
            self.call(l, self.results)
            self.events.append(l[0])
        # The storage's final contents, as a fresh buffer.
        fin = self.fresh("fin")
        v, t = self.base
        self.emit(f"{fin} = tx.unary neg {v} : {t} -> {ident(H)}")
        rets = [r for r, _ in self.results] + [fin] + [r for r, _ in self.extra]
        tys = [str(ident(w)) for _, w in self.results] + [str(ident(H))] + \
            [t for _, t in self.extra]
        self.emit(f"return {', '.join(rets)} : {', '.join(tys)}")
        return self.module(tys)

    def module(self, tys):
        out = []
        for i, a in enumerate(self.events):
            if a is None:
                continue
            for j in range(i + 1, len(self.events)):
                b = self.events[j]
                if b is not None and None in self.events[i + 1:j]:
                    out.append(f"// must-not-fuse: {a} {b}")
        out.append("module attributes {tx.config = #tx.config<tp_size = 1>} {")
        for name, w in self.layers:
            out.append(f"  tx.layer @{name} : {H} -> {w}, f32")
        for name, w in self.layers2:
            out.append(f"  tx.layer @{name} : {w} -> 8, f32")
        out += list(self.helpers.values())
        prologue = [
            "%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            "%c2 = arith.constant 2 : index", "%c8 = arith.constant 8 : index",
            "%c16 = arith.constant 16 : index", "%c32 = arith.constant 32 : index",
            "%c128 = arith.constant 128 : index",
            "%zero = arith.constant 0.0 : f32", "%true = arith.constant true",
            "%one = arith.constant 1.0 : f32",
            "%false = arith.constant false",
            "%flag = arith.cmpf ogt, %fs, %zero : f32",
            "%nflag = arith.xori %flag, %true : i1",
            f"%T = memref.dim %x, %c0 : {ident(H)}",
            "%k32 = arith.fptosi %fs : f32 to i32",
            "%k = arith.index_cast %k32 : i32 to index",
            "%kp = arith.addi %k, %c1 : index",       # 2 or 0
            "%o8 = arith.muli %kp, %c8 : index",      # 16 or 0
            "%o16 = arith.muli %kp, %c16 : index",    # 32 or 0
            "%c12 = arith.constant 12 : index",
            "%o12 = arith.muli %kp, %c12 : index",    # 24 or 0
        ]
        ret = ", ".join(tys)
        sig = f"%x: {ident(H)}, %y: {ident(WIDE)}, %fs: f32"
        if self.kind == "any":
            sig += ", %states: !tx.container"
        body = ["    " + p for p in prologue] + self.lines
        if self.mode == "argpair":
            # @body's %a and %b are one buffer at run time (or %b a view of
            # the buffer %a is a view of).
            out.append(f"  func.func private @body(%a: {FULLDYN}, %b: {FULLDYN}, {sig}) -> ({ret}) {{")
            out += body
            out.append("  }")
            out.append(f"  func.func @forward({sig}) -> ({ret}) {{")
            how = self.how
            if how == "same":
                out.append(f"    %xa = memref.cast %x : {ident(H)} to {FULLDYN}")
                out.append("    %xb = tx.alias %xa : " + str(FULLDYN))
            elif how == "yview":
                out.append(f"    %ys = tx.slice %y dim 1 offset 0 size 32 : {ident(WIDE)} -> memref<?x32xf32, strided<[64, 1]>>")
                out.append(f"    %xa = memref.cast %ys : memref<?x32xf32, strided<[64, 1]>> to {FULLDYN}")
                out.append(f"    %ys2 = tx.slice %y dim 1 offset 16 size 32 : {ident(WIDE)} -> memref<?x32xf32, strided<[64, 1], offset: 16>>")
                out.append(f"    %xb = memref.cast %ys2 : memref<?x32xf32, strided<[64, 1], offset: 16>> to {FULLDYN}")
            else:
                out.append(f"    %xa = memref.cast %x : {ident(H)} to {FULLDYN}")
                out.append("    %c0 = arith.constant 0 : index")
                out.append(f"    %T = memref.dim %x, %c0 : {ident(H)}")
                out.append(f"    %xr = memref.subview %x[0, 0] [%T, 32] [1, 1] : {ident(H)} to memref<?x32xf32, strided<[32, 1]>>")
                out.append(f"    %xb = memref.cast %xr : memref<?x32xf32, strided<[32, 1]>> to {FULLDYN}")
            st, stt = (", %states", ", !tx.container") if self.kind == "any" else ("", "")
            out.append(f"    %r:{len(tys)} = func.call @body(%xa, %xb, %x, %y, %fs{st}) : ({FULLDYN}, {FULLDYN}, {ident(H)}, {ident(WIDE)}, f32{stt}) -> ({ret})")
            out.append(f"    return {', '.join(f'%r#{i}' for i in range(len(tys)))} : {ret}")
            out.append("  }")
        else:
            out.append(f"  func.func @forward({sig}) -> ({ret}) {{")
            out += body
            out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--kind", choices=["exec", "any"], default="exec",
                    help="any: also opaque calls and container round trips "
                         "of the storage (verified with tx-difftest --no-run)")
    ap.add_argument("--static", action="store_true",
                    help="every program has 4 tokens (static shapes)")
    ap.add_argument("--mixed", action="store_true",
                    help="about a third of the programs static")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.count):
        rng = random.Random(f"adv-{args.seed}-{i}")
        set_rows(4 if args.static or (args.mixed and rng.random() < 0.3) else None)
        text = Prog(rng, args.kind).program()
        with open(os.path.join(args.out, f"adv_{args.seed}_{i}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
