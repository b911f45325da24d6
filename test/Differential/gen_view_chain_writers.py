#!/usr/bin/env python3
"""Random tx programs for hunting -tx-fusion soundness bugs (the seventh hunt).

Classes the older generators (gen_programs, gen_adversarial, gen_hunt5) do
not produce:
  * the group input reached through chains of *tx* views (tx.slice /
    tx.transpose / tx.view / tx.alias, memref.subview) of a 2-D, 3-D or
    transposed argument, rebuilt identically at each call site; writes go
    through other tx view chains of the same root (identical, partly
    overlapping or disjoint), created before the first call or between;
  * writes wrapped in scf.for (0/1/2 trips, dynamic trips), nested
    scf.if/else, scf.index_switch, scf.execute_region, func.call of a
    writer, collectives (tx.all_reduce / all_gather group 1) whose result
    is copied back into the input;
  * calls in branches, switch cases, execute_regions, loops; the same layer
    called on two inputs; two levels of groups (the second level reads the
    results of the first, so it runs after the first rewrite);
  * result-side use chains (tx.view splits/merges, transposes, slices,
    in-place writes into results or views of results, results yielded,
    passed to calls, fed to rotary/attention);
  * layers with bias, f16/bf16, checkpoint attributes (distinct or tied),
    pre-stacked layers, tx.checkpoint_transposed;
  * static (4) or dynamic token counts.
Every result and the final contents of every argument are returned.

Usage: gen_view_chain_writers.py --seed N --count K --out DIR
"""
import argparse
import os
import random

H = 16


def dstr(d):
    return "?" if d is None else str(d)


class Ty:
    def __init__(self, shape, strides, offset, elem="f32"):
        self.shape, self.strides, self.offset = list(shape), list(strides), offset
        self.elem = elem

    @staticmethod
    def ident(shape, elem="f32"):
        strides, s = [], 1
        for d in reversed(shape):
            strides.insert(0, s)
            s = None if (s is None or d is None) else s * d
        return Ty(shape, strides, 0, elem)

    def is_ident(self):
        t = Ty.ident(self.shape, self.elem)
        return t.strides == self.strides and self.offset == 0

    def __str__(self):
        dims = "x".join(dstr(d) for d in self.shape)
        if self.is_ident():
            return f"memref<{dims}x{self.elem}>"
        st = ", ".join(dstr(s) for s in self.strides)
        return (f"memref<{dims}x{self.elem}, strided<[{st}], offset: "
                f"{dstr(self.offset)}>>")

    def rank(self):
        return len(self.shape)

    def slice(self, dim, off, size):
        shape = list(self.shape)
        shape[dim] = size
        off2 = self.offset
        if off != 0:
            if self.offset is None or self.strides[dim] is None:
                off2 = None
            else:
                off2 = self.offset + off * self.strides[dim]
        return Ty(shape, self.strides, off2, self.elem)

    def transpose(self, perm):
        return Ty([self.shape[p] for p in perm], [self.strides[p] for p in perm],
                  self.offset, self.elem)

    def split(self, dim, a):
        """View splitting static dim `dim` (size a*b) into (a, b)."""
        d, s = self.shape[dim], self.strides[dim]
        b = d // a
        shape = self.shape[:dim] + [a, b] + self.shape[dim + 1:]
        bs = None if s is None else s * b
        strides = self.strides[:dim] + [bs, s] + self.strides[dim + 1:]
        return Ty(shape, strides, self.offset, self.elem)

    def merge(self, dim):
        """View merging dims dim, dim+1 (needs stride[dim] = size*stride)."""
        shape = (self.shape[:dim] + [self.shape[dim] * self.shape[dim + 1]] +
                 self.shape[dim + 2:])
        inner = self.strides[dim] if self.shape[dim + 1] == 1 else self.strides[dim + 1]
        strides = self.strides[:dim] + [inner] + self.strides[dim + 2:]
        return Ty(shape, strides, self.offset, self.elem)

    def can_merge(self, dim):
        a, b = self.shape[dim], self.shape[dim + 1]
        sa, sb = self.strides[dim], self.strides[dim + 1]
        return (a is not None and b is not None and sa is not None and
                sb is not None and sa == b * sb)


class Val:
    def __init__(self, name, ty):
        self.name, self.ty = name, ty


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.n = 0
        self.lines = []
        self.ind = 4
        self.layers = []          # text lines
        self.funcs = []           # helper function texts
        self.results = []         # (name, type) returned
        self.rows = 4 if rng.random() < 0.35 else None
        self.elem = "f32"
        if rng.random() < 0.12:
            self.elem = rng.choice(["f16", "bf16"])
        self.args = []
        self.need_writer = False
        self.need_ident = False
        self.called = set()

    # ---- helpers -------------------------------------------------------
    def fresh(self, p="v"):
        self.n += 1
        return f"%{p}{self.n}"

    def emit(self, s):
        self.lines.append(" " * self.ind + s)

    def c(self, p):
        return self.r.random() < p

    # ---- storage ---------------------------------------------------------
    def setup_storage(self):
        T = self.rows
        e = self.elem
        kind = self.r.choice(["arg", "wide", "3d", "transposed", "fresh",
                              "wide", "3d", "proj"])
        self.kind = kind
        if kind == "arg":
            root = Val("%x", Ty.ident([T, H], e))
            self.args.append(root)
            self.chain = []
        elif kind == "wide":
            root = Val("%y", Ty.ident([T, 3 * H], e))
            self.args.append(root)
            off = self.r.choice([0, 8, 16, 32])
            self.chain = [("slice", 1, off, H)]
        elif kind == "3d":
            root = Val("%z", Ty.ident([T, 3, H], e))
            self.args.append(root)
            h = self.r.randrange(3)
            if self.c(0.5):
                self.chain = [("slice", 1, h, 1), ("merge", 0)] if T is not None \
                    else [("transpose", [1, 0, 2]), ("slice", 0, h, 1),
                          ("transpose", [1, 0, 2]), ("slice", 1, 0, 1), ("mergeT",)]
            else:
                self.chain = [("transpose", [1, 0, 2]), ("slice", 0, h, 1),
                              ("transpose", [1, 0, 2])]
                # [T,1,H] -> use a view [T,H] only when static
                if T is not None:
                    self.chain.append(("merge", 0))
                else:
                    self.chain.append(("mergeT",))
        elif kind == "transposed":
            root = Val("%w", Ty.ident([H, T], e))
            self.args.append(root)
            self.chain = [("transpose", [1, 0])]
        elif kind == "fresh":
            x = Val("%x", Ty.ident([T, H], e))
            self.args.append(x)
            self.root_pre = x
            root = None
            self.chain = []
        else:  # proj: the input is the result of a projection (2 levels)
            x = Val("%x", Ty.ident([T, H], e))
            self.args.append(x)
            self.chain = []
            root = None
        self.root = root

    def apply_chain(self, v, chain):
        for step in chain:
            k = step[0]
            if k == "slice":
                _, dim, off, size = step
                t = v.ty.slice(dim, off, size)
                n = self.fresh("sl")
                self.emit(f"{n} = tx.slice {v.name} dim {dim} offset {off} size {size} : {v.ty} -> {t}")
                v = Val(n, t)
            elif k == "transpose":
                perm = step[1]
                t = v.ty.transpose(perm)
                n = self.fresh("tr")
                self.emit(f"{n} = tx.transpose {v.name} [{', '.join(map(str, perm))}] : {v.ty} -> {t}")
                v = Val(n, t)
            elif k == "merge":
                if not v.ty.can_merge(step[1]):
                    # size-1 dims merge whatever their stride
                    pass
                t = v.ty.merge(step[1])
                n = self.fresh("vw")
                self.emit(f"{n} = tx.view {v.name} : {v.ty} -> {t}")
                v = Val(n, t)
            elif k == "mergeT":
                # [?, 1, H] -> [?, H]: drop the unit dim 1 by a view
                t = Ty([v.ty.shape[0], v.ty.shape[2]],
                       [v.ty.strides[0], v.ty.strides[2]], v.ty.offset, v.ty.elem)
                n = self.fresh("vw")
                self.emit(f"{n} = tx.view {v.name} : {v.ty} -> {t}")
                v = Val(n, t)
            elif k == "alias":
                n = self.fresh("al")
                self.emit(f"{n} = tx.alias {v.name} : {v.ty}")
                v = Val(n, v.ty)
        return v

    def input_value(self, reuse):
        """The group input: the shared SSA value or the same chain again."""
        if reuse or not self.chain or self.root is None:
            return self.input
        v = self.apply_chain(self.root, self.chain)
        if self.c(0.3):
            v = self.apply_chain(v, [("alias",)])
        return v

    # ---- write targets -----------------------------------------------------
    def write_target(self):
        """A view of the storage root, overlapping the input or not."""
        if self.root is None:
            cands = [self.input]
            if self.fresh_bufs:
                cands += self.fresh_bufs
            if self.proj_results:
                cands += self.proj_results
            return self.r.choice(cands)
        root = self.root
        T = self.rows
        opts = []
        if self.kind == "arg":
            opts = [[], [("slice", 1, self.r.choice([0, 4, 8, 12]), 4)],
                    [("transpose", [1, 0]), ("slice", 0, self.r.choice([0, 8]), 8)],
                    [("slice", 0, 0, 1)] if T is None or T >= 1 else [],
                    [("alias",)]]
        elif self.kind == "wide":
            o = self.r.choice([0, 4, 8, 12, 16, 24, 28, 32, 40])
            s = self.r.choice([4, 8, 16])
            s = min(s, 3 * H - o)
            opts = [[("slice", 1, o, s)],
                    [("transpose", [1, 0]), ("slice", 0, o, s)],
                    [("slice", 1, o, s), ("transpose", [1, 0])],
                    self.chain]
        elif self.kind == "3d":
            h = self.r.randrange(3)
            f = self.r.choice([0, 8])
            opts = [[("slice", 1, h, 1)],
                    [("transpose", [1, 0, 2]), ("slice", 0, h, 1)],
                    [("slice", 2, f, 8)],
                    [("slice", 1, h, 1), ("slice", 2, f, 8)],
                    [("transpose", [2, 1, 0]), ("slice", 1, h, 1)],
                    self.chain]
        elif self.kind == "transposed":
            o = self.r.choice([0, 4, 8])
            opts = [[], [("slice", 0, o, 8)], [("transpose", [1, 0])],
                    [("transpose", [1, 0]), ("slice", 1, o, 4)]]
        ch = self.r.choice([o for o in opts if o is not None])
        return self.apply_chain(root, ch)

    # ---- writes ------------------------------------------------------------
    def cst(self):
        n = self.fresh("cf")
        v = self.r.choice(["2.0", "-1.0", "0.5", "3.0"])
        self.emit(f"{n} = arith.constant {v} : {self.elem}")
        return n

    def write(self, t=None):
        if t is None:
            t = self.write_target()
        k = self.r.choice(["unary_into", "binary_into", "copy", "fill", "store",
                           "call", "collective", "binary_into"])
        e = self.elem
        if k == "unary_into":
            self.emit(f"tx.unary_into neg {t.name} into {t.name} : {t.ty}, {t.ty}")
        elif k == "binary_into":
            c = self.cst()
            self.emit(f"tx.binary_into mul {t.name}, {c} into {t.name} : {t.ty}, {e}, {t.ty}")
        elif k == "copy":
            s = self.fresh("src")
            rt = Ty.ident(t.ty.shape, e)
            self.emit(f"{s} = tx.unary exp {t.name} : {t.ty} -> {rt}")
            self.emit(f"tx.copy {s} into {t.name} : {rt}, {t.ty}")
        elif k == "fill":
            c = self.cst()
            self.emit(f"linalg.fill ins({c} : {e}) outs({t.name} : {t.ty})")
        elif k == "store":
            c = self.cst()
            idx = ", ".join(["%c0"] * t.ty.rank())
            self.emit(f"memref.store {c}, {t.name}[{idx}] : {t.ty}")
        elif k == "call" and t.ty.rank() == 2:
            self.need_writer = True
            g = Ty([None, None], [None, None], None, e)
            n = self.fresh("cs")
            self.emit(f"{n} = memref.cast {t.name} : {t.ty} to {g}")
            self.emit(f"func.call @writer_{e}({n}) : ({g}) -> ()")
        else:
            # collective round trip: all_reduce over one rank, result copied back
            r = self.fresh("ar")
            rt = Ty.ident(t.ty.shape, e)
            op = self.r.choice(["all_reduce", "all_gather"])
            if op == "all_reduce":
                self.emit(f"{r} = tx.all_reduce {t.name} group 1 : {t.ty} -> {rt}")
            else:
                self.emit(f"{r} = tx.all_gather {t.name} dim 0 group 1 : {t.ty} -> {rt}")
            c = self.cst()
            self.emit(f"tx.binary_into add {r}, {c} into {t.name} : {rt}, {e}, {t.ty}")

    def wrapped_write(self, depth=0):
        k = self.r.choice(["plain", "plain", "if", "ifelse", "for", "switch",
                           "exec", "nested"])
        if depth > 1:
            k = "plain"
        if k == "plain":
            self.write()
        elif k in ("if", "ifelse"):
            self.emit(f"scf.if {self.r.choice(['%flag', '%nflag'])} {{")
            self.ind += 2
            self.wrapped_write(depth + 1)
            self.ind -= 2
            if k == "ifelse":
                self.emit("} else {")
                self.ind += 2
                if self.c(0.5):
                    self.wrapped_write(depth + 1)
                self.ind -= 2
            self.emit("}")
        elif k == "for":
            ub = self.r.choice(["%c0", "%c1", "%c2", "%kdyn"])
            i = self.fresh("i")
            self.emit(f"scf.for {i} = %c0 to {ub} step %c1 {{")
            self.ind += 2
            self.wrapped_write(depth + 1)
            self.ind -= 2
            self.emit("}")
        elif k == "switch":
            self.emit("scf.index_switch %sel")
            self.emit(f"case {self.r.choice([0, 1])} {{")
            self.ind += 2
            self.wrapped_write(depth + 1)
            self.emit("scf.yield")
            self.ind -= 2
            self.emit("}")
            self.emit("default {")
            self.ind += 2
            if self.c(0.3):
                self.wrapped_write(depth + 1)
            self.emit("scf.yield")
            self.ind -= 2
            self.emit("}")
        elif k == "exec":
            self.emit("scf.execute_region {")
            self.ind += 2
            self.wrapped_write(depth + 1)
            self.emit("scf.yield")
            self.ind -= 2
            self.emit("}")
        else:
            self.emit("scf.if %flag {")
            self.ind += 2
            self.emit("scf.if %nflag {")
            self.ind += 2
            self.write()
            self.ind -= 2
            self.emit("} else {")
            self.ind += 2
            self.write()
            self.ind -= 2
            self.emit("}")
            self.ind -= 2
            self.emit("}")

    # ---- layers and calls ----------------------------------------------------
    def add_layers(self, prefix, n, infeat):
        names = []
        roles = self.r.choice([["q_proj", "k_proj", "v_proj"], ["gate_proj", "up_proj"],
                               ["a", "b", "c", "d"], ["q_a_proj", "kv_a_proj_with_mqa"]])
        bias = " bias" if self.c(0.25) else ""
        tr = self.c(0.1)
        for i in range(n):
            role = roles[i % len(roles)] + ("" if i < len(roles) else f"_{i}")
            name = f"{prefix}{role}"
            w = self.r.choice([4, 8, 12])
            attrs = []
            if self.c(0.15):
                attrs.append(f'checkpoint = "ck_{self.r.choice([name, "shared", "ck"])}"')
            if tr:
                attrs.append("tx.checkpoint_transposed")
            st = ""
            if self.c(0.12):
                w = 8
                st = (f' stacking [#tx.stack<source = "{name}_s0", offset = 0, size = 4>, '
                      f'#tx.stack<source = "{self.r.choice([name + "_s1", "shared", "ck_shared"])}", offset = 4, size = 4>]')
            at = (" {" + ", ".join(attrs) + "}") if attrs else ""
            self.layers.append(f"  tx.layer @{name} : {infeat} -> {w}, {self.elem}{bias}{st}{at}")
            names.append((name, w))
        return names

    def call(self, layer, w, inp, top=False):
        n = self.fresh("p")
        rt = Ty.ident(inp.ty.shape[:-1] + [w], self.elem)
        if top and self.c(0.08) and self.rows is None:
            rt = Ty.ident([4] + [w], self.elem)   # static result of a dynamic input
        self.emit(f"{n} = tx.linear @{layer}({inp.name}) : {inp.ty} -> {rt}")
        return Val(n, rt)

    def use_result(self, v):
        """Result-side uses; returns values to return."""
        out = []
        k = self.r.choice(["ret", "ret", "split", "splitT", "inplace", "inplace_view",
                           "slice", "yield", "call", "reread"])
        e = self.elem
        w = v.ty.shape[-1]
        if k == "ret":
            out.append(v)
        elif k in ("split", "splitT"):
            a = self.r.choice([d for d in (1, 2, w // 2, w) if w % d == 0])
            t = v.ty.split(v.ty.rank() - 1, a)
            n = self.fresh("sp")
            self.emit(f"{n} = tx.view {v.name} : {v.ty} -> {t}")
            sv = Val(n, t)
            if k == "splitT":
                perm = list(range(t.rank()))
                perm[-1], perm[-2] = perm[-2], perm[-1]
                sv = self.apply_chain(sv, [("transpose", perm)])
            if self.c(0.4):
                self.emit(f"tx.unary_into neg {sv.name} into {sv.name} : {sv.ty}, {sv.ty}")
                out.append(v)
            u = self.fresh("u")
            ut = Ty.ident(sv.ty.shape, e)
            self.emit(f"{u} = tx.unary neg {sv.name} : {sv.ty} -> {ut}")
            out.append(Val(u, ut))
        elif k == "inplace":
            c = self.cst()
            self.emit(f"tx.binary_into add {v.name}, {c} into {v.name} : {v.ty}, {e}, {v.ty}")
            out.append(v)
        elif k == "inplace_view":
            o = self.r.choice([0, w // 2])
            s = self.apply_chain(v, [("slice", v.ty.rank() - 1, o, w // 2)])
            self.write(s)
            out.append(v)
        elif k == "slice":
            s = self.apply_chain(v, [("slice", v.ty.rank() - 1, 0, w // 2)])
            u = self.fresh("u")
            ut = Ty.ident(s.ty.shape, e)
            self.emit(f"{u} = tx.unary silu {s.name} : {s.ty} -> {ut}")
            out.append(Val(u, ut))
        elif k == "yield":
            n = self.fresh("y")
            self.emit(f"{n} = scf.if %flag -> ({v.ty}) {{")
            self.emit(f"  scf.yield {v.name} : {v.ty}")
            self.emit("} else {")
            u = self.fresh("u")
            self.emit(f"  {u} = tx.unary neg {v.name} : {v.ty} -> {v.ty}")
            self.emit(f"  scf.yield {u} : {v.ty}")
            self.emit("}")
            out.append(Val(n, v.ty))
        elif k == "call" and v.ty.rank() == 2:
            self.need_writer = True
            g = Ty([None, None], [None, None], None, e)
            n = self.fresh("cs")
            self.emit(f"{n} = memref.cast {v.name} : {v.ty} to {g}")
            self.emit(f"func.call @writer_{e}({n}) : ({g}) -> ()")
            out.append(v)
        else:
            out.append(v)
        return out

    def place_call(self, layer, w, always):
        """A call at top level or in a region; returns the returned values."""
        inp = self.input_value(self.c(0.5))
        where = "top" if always else self.r.choice(["if", "switch", "exec", "for", "ifboth", "top"])
        rt = Ty.ident(inp.ty.shape[:-1] + [w], self.elem)
        if where == "top":
            v = self.call(layer, w, inp, top=True)
            self.proj_results.append(v)
            return [v]
        if where == "exec":
            n = self.fresh("ex")
            self.emit(f"{n} = scf.execute_region -> {rt} {{")
            self.ind += 2
            if self.c(0.4):
                self.wrapped_write(1)
            v = self.call(layer, w, inp)
            if v.ty.shape != rt.shape:
                self.ind -= 2
                self.emit("  scf.yield " + v.name + " : " + str(v.ty))  # type error -> discarded
                self.emit("}")
                return []
            if self.c(0.4):
                self.wrapped_write(1)
            self.emit(f"scf.yield {v.name} : {rt}")
            self.ind -= 2
            self.emit("}")
            return [Val(n, rt)]
        if where in ("if", "ifboth"):
            n = self.fresh("br")
            self.emit(f"{n} = scf.if {self.r.choice(['%flag', '%nflag'])} -> ({rt}) {{")
            self.ind += 2
            if self.c(0.3):
                self.wrapped_write(1)
            v = self.call(layer, w, inp)
            if self.c(0.3):
                self.wrapped_write(1)
            self.emit(f"scf.yield {v.name} : {v.ty}")
            self.ind -= 2
            self.emit("} else {")
            self.ind += 2
            if self.c(0.4):
                self.wrapped_write(1)
            z = self.fresh("z")
            self.emit(f"{z} = tx.unary neg {inp.name} : {inp.ty} -> {Ty.ident(inp.ty.shape, self.elem)}")
            z2 = self.fresh("z")
            self.emit(f"{z2} = tx.slice {z} dim {inp.ty.rank() - 1} offset 0 size {w} : "
                      f"{Ty.ident(inp.ty.shape, self.elem)} -> {Ty.ident(inp.ty.shape, self.elem).slice(inp.ty.rank() - 1, 0, w)}")
            z3 = self.fresh("z")
            self.emit(f"{z3} = tx.unary neg {z2} : {Ty.ident(inp.ty.shape, self.elem).slice(inp.ty.rank() - 1, 0, w)} -> {rt}")
            self.emit(f"scf.yield {z3} : {rt}")
            self.ind -= 2
            self.emit("}")
            if v.ty.shape != rt.shape:
                return []
            return [Val(n, rt)]
        if where == "switch":
            n = self.fresh("sw")
            self.emit(f"{n} = scf.index_switch %sel -> {rt}")
            self.emit("case 0 {")
            self.ind += 2
            v = self.call(layer, w, inp)
            self.emit(f"scf.yield {v.name} : {v.ty}")
            self.ind -= 2
            self.emit("}")
            self.emit("default {")
            self.ind += 2
            if self.c(0.5):
                self.wrapped_write(1)
            z = self.fresh("z")
            self.emit(f"{z} = memref.alloc(%T) : {rt}" if rt.shape[0] is None else f"{z} = memref.alloc() : {rt}")
            c = self.cst()
            self.emit(f"linalg.fill ins({c} : {self.elem}) outs({z} : {rt})")
            self.emit(f"scf.yield {z} : {rt}")
            self.ind -= 2
            self.emit("}")
            if v.ty.shape != rt.shape:
                return []
            return [Val(n, rt)]
        # for: call inside a loop, result copied into an accumulator
        acc = self.fresh("acc")
        self.emit(f"{acc} = memref.alloc(%T) : {rt}" if rt.shape[0] is None else f"{acc} = memref.alloc() : {rt}")
        c = self.cst()
        self.emit(f"linalg.fill ins({c} : {self.elem}) outs({acc} : {rt})")
        i = self.fresh("i")
        self.emit(f"scf.for {i} = %c0 to {self.r.choice(['%c1', '%c2', '%kdyn'])} step %c1 {{")
        self.ind += 2
        v = self.call(layer, w, inp)
        self.emit(f"tx.binary_into add {acc}, {v.name} into {acc} : {rt}, {v.ty}, {rt}")
        if self.c(0.5):
            self.wrapped_write(1)
        self.ind -= 2
        self.emit("}")
        return [Val(acc, rt)]

    # ---- program -------------------------------------------------------------
    def program(self):
        e = self.elem
        self.setup_storage()
        self.fresh_bufs = []
        self.proj_results = []
        body_start = len(self.lines)
        T = self.rows
        # prologue
        self.emit("%c0 = arith.constant 0 : index")
        self.emit("%c1 = arith.constant 1 : index")
        self.emit("%c2 = arith.constant 2 : index")
        self.emit("%zero = arith.constant 0.0 : f32")
        self.emit("%true = arith.constant true")
        self.emit("%flag = arith.cmpf ogt, %fs, %zero : f32")
        self.emit("%nflag = arith.xori %flag, %true : i1")
        self.emit("%k32 = arith.fptosi %fs : f32 to i32")
        self.emit("%kk = arith.index_cast %k32 : i32 to index")
        self.emit("%kdyn = arith.maxsi %kk, %c0 : index")
        self.emit("%sel = arith.minsi %kdyn, %c1 : index")
        a0 = self.args[0]
        self.emit(f"%T = memref.dim {a0.name}, %c{0 if self.kind != 'transposed' else 1} : {a0.ty}")
        if self.kind == "fresh":
            x = self.args[0]
            self.emit(f"%fr = tx.unary neg {x.name} : {x.ty} -> {x.ty}")
            self.input = Val("%fr", x.ty)
            self.fresh_bufs.append(x)
        elif self.kind == "proj":
            x = self.args[0]
            pre = self.add_layers("pre_", self.r.choice([1, 2]), H)
            outs = []
            for (name, w) in pre:
                outs.append(self.call(name, H if False else w, x))
            # the input: a pre result widened? use a fresh [T,H] projection
            self.layers.append(f"  tx.layer @pre_h : {H} -> {H}, {e}")
            hv = self.call("pre_h", H, x)
            self.input = hv
            self.proj_results += outs
            self.results += outs
            self.fresh_bufs.append(x)
        else:
            # input chain created before the first call
            self.input = self.apply_chain(self.root, self.chain)
        # an early target view created before the first call
        early = None
        if self.c(0.5):
            early = self.write_target()
        ngroup = self.r.choice([2, 3, 3, 4])
        layers = self.add_layers("", ngroup, H)
        # same layer called on a second input
        second = None
        if self.c(0.15):
            second = layers[0]
        first_top = self.r.randrange(ngroup)
        for i, (name, w) in enumerate(layers):
            r = self.r.random()
            if i > 0 and r < 0.45:
                self.wrapped_write()
            elif i > 0 and r < 0.6 and early is not None:
                self.write(early)
            vals = self.place_call(name, w, always=(i == first_top or self.c(0.4)))
            for v in vals:
                self.results += self.use_result(v) if self.c(0.6) else [v]
        if second is not None:
            name, w = second
            other = self.args[0]
            t = Ty.ident(other.ty.shape, e)
            if other.ty.shape[-1] == H and other.ty.rank() == 2:
                n = self.fresh("o")
                self.emit(f"{n} = tx.unary neg {other.name} : {other.ty} -> {t}")
                v = self.call(name, w, Val(n, t))
                self.results.append(v)
        # second-level group on the results of two first-level calls
        if self.c(0.3):
            tops = [v for v in self.proj_results if v.ty.rank() == 2 and v.ty.is_ident()]
            if tops:
                src = self.r.choice(tops)
                l2 = self.add_layers("l2_", 2, src.ty.shape[-1])
                for j, (name, w) in enumerate(l2):
                    if j == 1 and self.c(0.5):
                        self.wrapped_write()
                    v = self.call(name, w, src)
                    self.results += self.use_result(v)
        if self.c(0.3):
            self.wrapped_write()
        # final contents of every argument
        for a in self.args:
            n = self.fresh("fin")
            t = Ty.ident(a.ty.shape, e)
            self.emit(f"{n} = tx.unary neg {a.name} : {a.ty} -> {t}")
            self.results.append(Val(n, t))
        # returns
        seen = set()
        rets = []
        for v in self.results:
            if v.name in seen:
                continue
            seen.add(v.name)
            rets.append(v)
        self.emit(f"return {', '.join(v.name for v in rets)} : {', '.join(str(v.ty) for v in rets)}")
        body = self.lines[body_start:]
        args = ", ".join(f"{a.name}: {a.ty}" for a in self.args) + ", %fs: f32"
        out = ["module attributes {tx.config = #tx.config<tp_size = 1>} {"]
        out += self.layers
        if self.need_writer:
            g = Ty([None, None], [None, None], None, e)
            out.append(f"  func.func private @writer_{e}(%p: {g}) {{")
            out.append(f"    %two = arith.constant 2.0 : {e}")
            out.append(f"    linalg.fill ins(%two : {e}) outs(%p : {g})")
            out.append("    return")
            out.append("  }")
        out.append(f"  func.func @forward({args}) -> ({', '.join(str(v.ty) for v in rets)}) {{")
        out += body
        out.append("  }")
        out.append("}")
        return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random(a.seed * 100003 + i)
        g = Gen(rng)
        text = g.program()
        with open(os.path.join(a.out, f"h8_{a.seed}_{i}.mlir"), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
