#!/usr/bin/env python3
"""Random HF-style PyTorch modules for differential testing against PyTorch.

gen_programs.py and gen_adversarial.py write tx IR, and tx-difftest compares
tx with itself (unfused against fused): a bug shared by both runs, or one in
the frontend that imports the Python source, goes unseen. This generator
writes Python instead: an `nn.Module` source file (class `GenBlock`) and its
config.json, in the forms docs/guides/frontend.md lists as supported, so
that PyTorch itself is the reference (run_torch_modules.py runs each module
in PyTorch, imports it with tx.frontend and runs it with tx-run unfused and
fused, and compares every returned tensor).

What a module does (randomly combined):
- a group of nn.Linear projections reading one input (q/k/v_proj, gate/
  up_proj, arbitrary names and the fusers' own names: qkv_proj, q_a_proj,
  ...; some with bias, some optional: `self.v_proj = nn.Linear(...) if
  config.use_v_proj else None`, called behind `is not None` / `is None` /
  truthiness guards with another projection in the other branch, one or
  two calls per branch, or in `a if guard else b`; now and then a layer
  called twice); the input is hidden_states, an alias of it, a norm or copy
  of it, the output of another projection, or a view of it (column slice,
  chunk/split/narrow piece, per-head `view`, transposed per-head view)
  re-evaluated at each call or bound to a name once;
- in-place writes between the calls: to the input, to views of it that
  overlap what the projections read or are disjoint from it, through alias
  names (tuple-unpacked pieces, results of in-place ops, a helper function
  returning its argument), in one branch of a guard, to other buffers and
  to the outputs of earlier calls (`mul_`, `+=`, `copy_`, `torch.add(...,
  out=)`, `F.silu(..., inplace=True)`, `neg_`, a broadcast parameter, ...);
- then writes to the projection outputs and their views (also transposed
  [b, h, T, d] ones, negative indices, uneven chunks), torch.cat, reshape
  (a view or a copy, as PyTorch decides), norms (an RMSNorm class,
  nn.LayerNorm, per head), activations, rotary and eager attention, a GLU,
  residual adds, a buffer chosen by a guard and written, further
  projections and a second group (on a derived tensor or on the first
  group's input again);
- forward returns every buffer it created or wrote (hidden_states too), each
  as a [batch, tokens, width] tensor, and a few views, so that every value
  a wrong fusion or lowering could change is compared. Sometimes the class
  is one layer of an nn.ModuleList stack (2-3 layers, each reading one of
  the previous layer's results).

The generator models storage (which columns of which buffer each view
shows, as numpy index arrays) so that it never writes a view from a
partially overlapping operand (PyTorch rejects or leaves that undefined).

A header line `# tx-gen: tokens=T entry=GenBlock` tells the runner how many
tokens to run (1 to 700: GEMMs of one row and packed ones, and buffers
large enough for tx-run's buffer cache).

Usage: gen_torch_modules.py --seed N --count K --out DIR [--max-tokens T]
Writes DIR/mod_<seed>_<i>.py and DIR/mod_<seed>_<i>.json; the same seed
always gives the same files.
"""
import argparse
import json
import os
import random

import numpy as np

CONSTS = ["0.5", "2.0", "-1.5", "1.25", "0.75", "3.0", "-0.25"]
# Arbitrary names, and names of the fusers' roles and merged layers (a
# q_proj of any width, an MLA pair, a layer already called qkv_proj).
GENERIC_NAMES = ["a_proj", "b_proj", "w1", "w3", "in_proj", "x_lin", "fc_a", "fc_b",
                 "query", "key", "value", "proj_left", "proj_right", "q_proj", "k_proj",
                 "qkv_proj", "gate_up_proj", "q_a_proj", "kv_a_proj_with_mqa",
                 "fused_qkv_a_proj", "k_proj_v_proj"]

PRELUDE = '''import torch
import torch.nn.functional as F
from torch import nn


class GenRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


def scale_(t, c):
    t.mul_(c)
    return t


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights

'''


class Store:
    """A buffer: its width (columns per token) and a 2-D [batch, tokens,
    width] expression naming all of it."""

    def __init__(self, width, base, kind):
        self.width, self.base, self.kind = width, base, kind
        self.heads = None       # a name of it as [batch, heads, tokens, head_dim]
        self.aliases = []       # Views bound to names (writes go through them)


class View:
    """A tensor expression showing `cols` (numpy array, 1-D: [.., n], 2-D:
    [.., h, d]) of `store`'s columns in each token; `aug` if `expr op= c` is
    valid Python writing it (a name or a tensor subscript, not a tuple's
    item)."""

    def __init__(self, expr, store, cols, aug, tr=False):
        self.expr, self.store, self.cols, self.aug = expr, store, cols, aug
        self.tr = tr            # [batch, heads, tokens, d] (a transposed view)

    @property
    def width(self):
        return self.cols.shape[-1]


def overlap(a, b):
    return a.store is b.store and bool(np.intersect1d(a.cols, b.cols).size)


def safe_operand(o, t):
    """PyTorch defines an in-place op whose operand is t itself or shares no
    element with it (a partial overlap is an error or order-dependent)."""
    if o.store is not t.store:
        return True
    if o.cols.shape == t.cols.shape and (o.cols == t.cols).all():
        return True
    return not overlap(o, t)


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.H = rng.choice([16, 32, 32, 48, 64, 80])
        self.HD = 8
        self.NH = rng.choice([2, 4])
        self.NKV = rng.choice([n for n in (1, 2, self.NH) if self.NH % n == 0])
        self.cfg = {"hidden_size": self.H, "num_attention_heads": self.NH,
                    "num_key_value_heads": self.NKV, "head_dim": self.HD,
                    "rms_norm_eps": 1e-6}
        self.init = []
        self.body = []
        self.ind = 2
        self.n = 0
        self.names = set()
        self.stores = []
        self.uses = set()
        self.optional = []      # names of optional (maybe None) layers
        self.qkv = None         # (q, k, v) stores of a q/k/v group
        self.glu = None         # (gate, up) stores
        self.out_features = {}  # layer name -> out_features
        self.last_group = None  # (a layer of the group being called, its input)
        self.first_input = None
        # How often statements between the calls write what they read: at
        # 0 only disjoint columns, other buffers and exclusive branches are
        # written, so that the fusion happens and its numbers are checked.
        self.hit = rng.choice([0.0, 0.0, 0.5, 1.0])

    # -- output -----------------------------------------------------------
    def emit(self, line):
        self.body.append("    " * self.ind + line)

    def name(self, prefix):
        """A fresh name; a taken one gets a prefix (`l2_gate_proj` still
        plays the gate role for the fusers)."""
        n = prefix
        while n in self.names:
            self.n += 1
            n = "l%d_%s" % (self.n, prefix)
        self.names.add(n)
        return n

    def const(self):
        return self.rng.choice(CONSTS)

    def store(self, width, base, kind="fresh"):
        s = Store(width, base, kind)
        self.stores.append(s)
        return s

    def full(self, s):
        return View(s.base, s, np.arange(s.width), s.base.isidentifier())

    # -- layers ------------------------------------------------------------
    def linear(self, prefix, fin, fout, bias=None, optional=False):
        name = self.name(prefix)
        if bias is None:
            bias = self.rng.random() < 0.3
        decl = "nn.Linear(%d, %d, bias=%s)" % (fin, fout, bias)
        if optional:
            key = "use_" + name
            self.cfg[key] = self.rng.random() < 0.7
            decl += " if config.%s else None" % key
            self.optional.append(name)
        self.init.append("self.%s = %s" % (name, decl))
        self.out_features[name] = fout
        return name

    def exists(self, name):
        return self.cfg.get("use_" + name, True)

    def norm(self, width):
        name = self.name(self.rng.choice(["norm", "q_norm", "ln", "post_norm"]))
        if self.rng.random() < 0.6:
            self.init.append("self.%s = GenRMSNorm(%d, eps=config.rms_norm_eps)" % (name, width))
        else:
            self.init.append("self.%s = nn.LayerNorm(%d, eps=1e-5)" % (name, width))
        return name

    # -- views ---------------------------------------------------------------
    def view_of(self, s, one_d=False, width=None):
        """A random view of store s (1-D columns if one_d; exactly `width`
        columns if given)."""
        rng = self.rng
        if width is not None:
            a = rng.randrange(0, s.width - width + 1)
            if a == 0 and width == s.width:
                return self.full(s)
            if rng.random() < 0.3:
                return View("%s.narrow(-1, %d, %d)" % (s.base, a, width), s,
                            np.arange(a, a + width), False)
            return View("%s[..., %d:%d]" % (s.base, a, a + width), s,
                        np.arange(a, a + width), True)
        if s.aliases and rng.random() < 0.4:
            v = rng.choice(s.aliases)
            return self.subview(v, one_d)
        if s.heads and rng.random() < 0.3:
            v = View(s.heads, s, np.arange(s.width).reshape(-1, self.HD), True, tr=True)
            return self.subview(v, one_d)
        v = self.full(s)
        return self.subview(v, one_d) if rng.random() < 0.75 else v

    def bounds(self, a, b, W):
        """`a:b` of a dimension of size W, sometimes with negative bounds
        or a bound left out."""
        rng = self.rng
        lo = "" if a == 0 and rng.random() < 0.3 else str(a - W if a and rng.random() < 0.25
                                                         else a)
        hi = "" if b == W and rng.random() < 0.3 else str(b - W if b < W and
                                                          rng.random() < 0.25 else b)
        return "%s:%s" % (lo, hi)

    def index(self, i, n):
        return str(i - n if self.rng.random() < 0.25 else i)

    def subview(self, v, one_d, allow_tr=True):
        """A random view of View v: slices, chunk/split/narrow pieces, per-head
        views ([b, T, h, d], or transposed [b, h, T, d] when allow_tr) and
        their pieces; 1-D columns only if one_d."""
        rng = self.rng
        e, c, W = v.expr, v.cols, v.cols.shape[-1]
        if c.ndim == 2:
            h = c.shape[0]
            r = rng.random()
            if v.tr:
                if r < 0.4 or one_d:
                    i = rng.randrange(h)
                    return View("%s[:, %s]" % (e, self.index(i, h)), v.store, c[i], True)
                if r < 0.7:
                    a = rng.randrange(h)
                    b = rng.randrange(a + 1, h + 1)
                    return View("%s[:, %s]" % (e, self.bounds(a, b, h)), v.store, c[a:b],
                                True, tr=True)
                a = rng.randrange(W)
                b = rng.randrange(a + 1, W + 1)
                return View("%s[..., %s]" % (e, self.bounds(a, b, W)), v.store, c[:, a:b],
                            True, tr=True)
            if r < 0.4 or one_d:
                i = rng.randrange(h)
                return View("%s[..., %s, :]" % (e, self.index(i, h)), v.store, c[i], True)
            if r < 0.6:
                a = rng.randrange(W)
                b = rng.randrange(a + 1, W + 1)
                return View("%s[..., %s]" % (e, self.bounds(a, b, W)), v.store, c[:, a:b], True)
            if r < 0.8 or not allow_tr:
                a = rng.randrange(h)
                b = rng.randrange(a + 1, h + 1)
                return View("%s[:, :, %s, :]" % (e, self.bounds(a, b, h)), v.store, c[a:b],
                            True)
            tv = View("%s.transpose(1, 2)" % e, v.store, c, False, tr=True)
            return self.subview(tv, one_d) if rng.random() < 0.8 else tv
        r = rng.random()
        if r < 0.3:
            a = rng.randrange(W)
            b = rng.randrange(a + 1, W + 1)
            return View("%s[..., %s]" % (e, self.bounds(a, b, W)), v.store, c[a:b], True)
        if r < 0.42 and W >= 2:
            # torch's chunk: pieces of ceil(W / n), the last one shorter
            # (and fewer than n pieces when n does not divide W evenly).
            n = rng.choice([2, 2, 3, 4])
            size = -(-W // n)
            i = rng.randrange(-(-W // size))
            form = rng.choice(["%s.chunk(%d, dim=-1)[%s]", "torch.chunk(%s, %d, -1)[%s]"])
            return View(form % (e, n, i), v.store, c[i * size:(i + 1) * size], False)
        if r < 0.54 and W >= 4:
            if rng.random() < 0.3:
                size = rng.randrange(1, W)
                sizes = [size] * (W // size) + ([W % size] if W % size else [])
                arg = str(size)
            else:
                cut = sorted(rng.sample(range(1, W), 2 if W > 8 else 1))
                sizes = [b - a for a, b in zip([0] + cut, cut + [W])]
                arg = str(sizes)
            i = rng.randrange(len(sizes))
            lo = sum(sizes[:i])
            form = rng.choice(["%s.split(%s, dim=-1)[%d]", "torch.split(%s, %s, dim=-1)[%d]"])
            return View(form % (e, arg, i), v.store, c[lo:lo + sizes[i]], False)
        if r < 0.64:
            a = rng.randrange(W)
            n = rng.randrange(1, W - a + 1)
            return View("%s.narrow(-1, %s, %d)" % (e, self.index(a, W) if a else "0", n),
                        v.store, c[a:a + n], False)
        d = rng.choice([d for d in (4, 8) if W % d == 0] or [1])
        if d == 1 or one_d:
            return v
        hv = View("%s.view(bsz, q_len, -1, %d)" % (e, d), v.store, c.reshape(-1, d), False)
        return self.subview(hv, one_d, allow_tr) if rng.random() < 0.7 else hv

    def reshaped(self, v):
        """v.reshape(bsz, q_len, -1) bound to a name: a view in PyTorch when
        v's columns are one contiguous run (an alias of v), else a copy (a
        fresh buffer)."""
        name = self.name("flat")
        c = v.cols.ravel()
        self.emit("%s = %s.%s(bsz, q_len, -1)" % (name, v.expr, self.rng.choice(
            ["reshape", "view"]) if (np.diff(c) == 1).all() else "reshape"))
        if (np.diff(c) == 1).all():
            a = View(name, v.store, c, True)
            v.store.aliases.append(a)
            return a
        return self.full(self.store(c.size, name))

    def operand(self, t):
        """A tensor of t's (1-D) shape that PyTorch lets one write t from, or
        None."""
        for _ in range(8):
            s = self.rng.choice(self.stores)
            if s.width < t.width:
                continue
            o = self.view_of(s, width=t.width)
            if safe_operand(o, t):
                return o
        return None

    # -- statements ----------------------------------------------------------
    def write(self, t):
        """One in-place write of view t; sometimes the result (t itself) is
        bound to a name, which aliases t from then on."""
        rng = self.rng
        if rng.random() < 0.12 and self.ind == 2:   # not in a branch
            name = self.name("w")
            self.emit_write(t, name + " = ")
            v = View(name, t.store, t.cols, True, tr=t.tr)
            t.store.aliases.append(v)
        else:
            self.emit_write(t, "")

    def param(self, n):
        """A [n] parameter (broadcast over tokens and heads)."""
        name = self.name("scale")
        self.init.append("self.%s = nn.Parameter(torch.ones(%d))" % (name, n))
        return "self." + name

    def emit_write(self, t, bind):
        rng, e = self.rng, t.expr
        r = rng.random()
        if r < 0.06:
            self.emit("%s%s.%s_(%s)" % (bind, e, rng.choice(["mul", "add"]),
                                        self.param(t.width)))
            return
        if r < 0.12:
            self.emit("%sscale_(%s, %s)" % (bind, e, self.const()))
            return
        if bind:
            self.emit("%s%s.%s_(%s)" % (bind, e, rng.choice(["add", "mul", "sub", "div"]),
                                        self.const()) if r < 0.6 else
                      "%sF.silu(%s, inplace=True)" % (bind, e))
            return
        r = rng.random()
        o = self.operand(t) if t.cols.ndim == 1 and r >= 0.5 else None
        if o is None:
            r = rng.random() * 0.5
        op = rng.choice(["add", "sub", "mul", "div"])
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
        if r < 0.2:
            self.emit("%s.%s_(%s)" % (e, op, self.const()))
        elif r < 0.3 and t.aug:
            self.emit("%s %s= %s" % (e, sym, self.const()))
        elif r < 0.4:
            self.emit(rng.choice(["F.silu(%s, inplace=True)", "F.relu(%s, inplace=True)",
                                  "%s.neg_()", "%s.relu_()"]) % e)
        elif r < 0.5:
            self.emit("torch.%s(%s, %s, out=%s)" % (rng.choice(["add", "mul"]), e,
                                                     self.const(), e))
        elif r < 0.6:
            self.emit("%s.%s_(%s)" % (e, rng.choice(["add", "mul", "sub"]), o.expr))
        elif r < 0.68 and t.aug:
            self.emit("%s %s= %s" % (e, rng.choice("+-*"), o.expr))
        elif r < 0.76:
            self.emit("torch.%s(%s, %s, out=%s)" % (rng.choice(["add", "mul", "sub"]),
                                                     o.expr, e, e))
        elif r < 0.82:
            self.emit("torch.mul(%s, %s, out=%s)" % (o.expr, self.const(), e))
        elif r < 0.9:
            self.emit("%s.copy_(%s)" % (e, o.expr))
        else:
            self.emit("torch.neg(%s, out=%s)" % (o.expr, e))

    def target(self, s, cols=None, disjoint=False):
        """A view of s overlapping `cols` (or disjoint from them)."""
        for _ in range(12):
            v = self.view_of(s)
            hit = cols is None or bool(np.intersect1d(v.cols, cols).size)
            if hit != disjoint:
                return v
        return None

    def guard(self, name):
        """The test that `self.<name>` exists, and whether it holds."""
        # (`!= None` makes the fusion refuse the group: rarer.)
        form = self.rng.choice(["self.%s is not None"] * 6 + [
            "self.%s is None", "self.%s is None", "self.%s", "not self.%s",
            "self.%s != None"]) % name
        negated = "is None" in form or form.startswith("not")
        return form, self.exists(name) != negated

    def fresh_from(self, v):
        """A fresh tensor computed from 1-D view v."""
        rng = self.rng
        name = self.name(rng.choice(["t", "tmp", "y", "mixed"]))
        r = rng.random()
        o = self.operand(v)
        if r < 0.4 and o is not None:
            self.emit("%s = %s %s %s" % (name, v.expr, rng.choice("+-*"), o.expr))
        elif r < 0.6:
            self.emit("%s = %s * %s" % (name, v.expr, self.const()))
        elif r < 0.8:
            self.emit("%s = %s" % (name, rng.choice(["F.silu(%s)", "torch.relu(%s)",
                                                    "F.gelu(%s, approximate=\"tanh\")",
                                                    "%s.clone()", "%s.neg()"]) % v.expr))
        elif v.width >= 4:
            # (A LayerNorm of one or two columns is ill-conditioned: PyTorch's
            # own rounding of x - mean(x) is then amplified by 1/sqrt(eps).)
            self.emit("%s = self.%s(%s)" % (name, self.norm(v.width), v.expr))
        else:
            self.emit("%s = %s.neg()" % (name, v.expr))
        return self.store(v.width, name)

    def elsewhere(self, inp):
        """A view the projections of inp do not read: columns of its buffer
        they do not read, or another buffer."""
        t = self.target(inp.store, inp.cols, disjoint=True)
        others = [s for s in self.stores if s is not inp.store]
        if others and (t is None or self.rng.random() < 0.6):
            t = self.view_of(self.rng.choice(others))
        return t

    def inp_write(self, inp):
        """A write of what inp's projections read (with probability
        self.hit), else of something they do not read."""
        t = None
        if self.rng.random() < self.hit:
            t = self.target(inp.store, inp.cols)
        t = t or self.elsewhere(inp)
        if t is not None:
            self.write(t)

    def between(self, inp, results):
        """Statements between two projection calls reading inp."""
        rng = self.rng
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            r = rng.random()
            if r < 0.3:
                self.inp_write(inp)
            elif r < 0.45:
                t = self.target(inp.store, inp.cols, disjoint=True)
                if t is not None:
                    self.write(t)
            elif r < 0.6 and results:
                self.write(self.view_of(rng.choice(results)))
            elif r < 0.7:
                t = self.elsewhere(inp)
                if t is not None:
                    self.write(t)
            elif r < 0.9 and self.optional:
                form, _ = self.guard(rng.choice(self.optional))
                self.emit("if %s:" % form)
                self.ind += 1
                self.write(self.target(inp.store, inp.cols) or self.full(inp.store))
                self.ind -= 1
                if rng.random() < 0.4:
                    self.emit("else:")
                    self.ind += 1
                    self.inp_write(inp)
                    self.ind -= 1
            elif r < 0.95 and self.last_group:
                # A layer of the group called again (fusion needs one call).
                name, inp2 = self.last_group
                var = self.name("again")
                self.emit("%s = self.%s(%s)%s" % (var, name, inp2.expr, self.flatten(inp2)))
                self.store(self.out_features[name] * (inp2.cols.shape[0] if inp2.cols.ndim == 2
                                                      else 1), var)
            else:
                self.fresh_from(self.view_of(rng.choice(self.stores), one_d=True))

    # -- projection groups -------------------------------------------------
    def group(self, inp, kind):
        """Projections reading View inp, called in a random order with
        statements in between; returns {role: Store}."""
        rng = self.rng
        fin = inp.width
        bias = rng.choice([None, True, False])
        if kind == "qkv":
            specs = [("q_proj", self.NH * self.HD), ("k_proj", self.NKV * self.HD),
                     ("v_proj", self.NKV * self.HD)]
        elif kind == "glu":
            inter = rng.choice([16, 24, 32, 48, 64, 72])
            specs = [("gate_proj", inter), ("up_proj", inter)]
        else:
            names = rng.sample(GENERIC_NAMES, rng.randint(2, 4))
            specs = [(n, rng.choice([4, 8, 12, 16, 24, 32, 40, 64, 72])) for n in names]
        layers = []
        for role, out in specs:
            opt = rng.random() < 0.3
            layers.append((role, self.linear(role, fin, out, bias, opt), out, opt))
        if rng.random() < 0.4:
            rng.shuffle(layers)
        heads3 = inp.cols.ndim == 2
        suffix = self.flatten(inp)
        if kind == "qkv" and rng.random() < 0.5:
            # HF's form: the projection viewed per head and transposed.
            if "hidden_shape" not in self.names:
                self.names.add("hidden_shape")
                self.body.insert(1, "    " * 2 + "hidden_shape = (*hidden_states.shape[:-1], "
                                 "-1, self.head_dim)")
            suffix = ".view(%s).transpose(1, 2)" % rng.choice(
                ["hidden_shape", "bsz, q_len, -1, self.head_dim"])
        results = {}
        i = 0
        while i < len(layers):
            pair = layers[i:i + 2]
            if len(pair) == 2 and not pair[0][3] and not pair[1][3] and rng.random() < 0.15:
                # Two calls in one branch of a guard, two others in the other.
                vs = [self.var(role, kind, suffix) for role, _, _, _ in pair]
                self.guarded_pair(vs, pair, inp, suffix)
            else:
                pair = pair[:1]
                role, name, out, opt = pair[0]
                vs = [self.var(role, kind, suffix)]
                call = "self.%s(%s)%s" % (name, inp.expr, suffix)
                if opt or rng.random() < 0.15:
                    self.guarded_call(vs[0], call, name, opt, inp, out, suffix)
                else:
                    self.emit("%s = %s" % (vs[0], call))
            for var, (role, name, out, opt) in zip(vs, pair):
                width = out * (inp.cols.shape[0] if heads3 else 1)
                if suffix.startswith(".view"):
                    st = self.store(width, "%s.transpose(1, 2).reshape(bsz, q_len, -1)" % var,
                                    "proj")
                    st.heads = var
                else:
                    st = self.store(width, var, "proj")
                results[role] = st
                if not opt:
                    self.last_group = (name, inp)
            i += len(pair)
            if i < len(layers):
                self.between(inp, list(results.values()))
        self.last_group = None
        return results

    def var(self, role, kind, suffix):
        if suffix.startswith(".view"):
            return self.name(role[0] + "_states")
        return self.name(role.replace("_proj", "") if kind != "generic" else "out")

    def guarded_pair(self, vs, pair, inp, suffix):
        rng = self.rng
        gname = rng.choice(self.optional) if self.optional else self.linear(
            "extra", inp.width, 8, optional=True)
        form, _ = self.guard(gname)
        calls = ["self.%s(%s)%s" % (name, inp.expr, suffix) for _, name, _, _ in pair]
        alts = ["self.%s(%s)%s" % (self.linear(name + "_alt", inp.width, out), inp.expr, suffix)
                for _, name, out, _ in pair]
        branches = [calls, alts] if rng.random() < 0.5 else [alts, calls]
        for j, exprs in enumerate(branches):
            self.emit("if %s:" % form if j == 0 else "else:")
            self.ind += 1
            for k, (v, e) in enumerate(zip(vs, exprs)):
                self.emit("%s = %s" % (v, e))
                if k == 0 and rng.random() < 0.5:
                    self.inp_write(inp)
            self.ind -= 1

    def flatten(self, inp):
        """What makes a projection of inp [batch, tokens, width]: per-head
        inputs give [b, T, h, out] (or [b, h, T, out] when transposed)."""
        if inp.cols.ndim == 1:
            return ""
        return (".transpose(1, 2)" if inp.tr else "") + ".reshape(bsz, q_len, -1)"

    def guarded_call(self, var, call, name, opt, inp, out, suffix):
        """var = the call, under a guard on an optional layer, with another
        projection of inp (maybe scaled) in the other branch; an optional
        layer is called only in the branch taken when it exists."""
        rng = self.rng
        if opt:
            gname = name
        elif self.optional:
            gname = rng.choice(self.optional)
        else:
            gname = self.linear("extra", inp.width, 8, optional=True)
        alt_layer = self.linear(name + "_alt", inp.width, out)
        alt = "self.%s(%s)%s" % (alt_layer, inp.expr, suffix)
        if rng.random() < 0.3:
            alt = "%s * %s" % (alt, self.const())
        form, _ = self.guard(gname)
        if opt:
            branches = self.ordered(form, call, alt)
        else:
            branches = (call, alt) if rng.random() < 0.5 else (alt, call)
        if rng.random() < 0.25:
            self.emit("%s = %s if %s else %s" % (var, branches[0], form, branches[1]))
            return
        for j, expr in enumerate(branches):
            self.emit("if %s:" % form if j == 0 else "else:")
            self.ind += 1
            if rng.random() < 0.35:
                self.inp_write(inp)
            self.emit("%s = %s" % (var, expr))
            if rng.random() < 0.2:
                self.write(self.view_of(rng.choice(self.stores)))
            self.ind -= 1

    def ordered(self, form, call, alt):
        """(then, else) so that the call of optional layer `name` sits in
        the branch taken when it is not None."""
        negated = "is None" in form or form.startswith("not")
        return (alt, call) if negated else (call, alt)

    # -- after the group -------------------------------------------------------
    def post(self, depth):
        rng = self.rng
        for _ in range(rng.randint(2, 6)):
            r = rng.random()
            if r < 0.25:
                s = rng.choice(self.stores)
                self.write(self.view_of(s))
            elif r < 0.35 and self.glu:
                self.glu_combine()
            elif r < 0.45 and self.qkv:
                self.attention()
            elif r < 0.52:
                self.rope_pair()
            elif r < 0.62:
                self.fresh_from(self.view_of(rng.choice(self.stores), one_d=True))
            elif r < 0.7:
                a = self.view_of(rng.choice(self.stores), one_d=True)
                b = self.view_of(rng.choice(self.stores), one_d=True)
                name = self.name("cat")
                self.emit("%s = torch.cat([%s, %s], dim=-1)" % (name, a.expr, b.expr))
                self.store(a.width + b.width, name)
            elif r < 0.73:
                self.head_norm()
            elif r < 0.76:
                s = rng.choice(self.stores)
                v = self.view_of(s)
                if v.cols.ndim == 2 and not v.tr:
                    self.reshaped(v)
                elif v.tr:
                    # The product keeps v's layout (token-major), so the
                    # transpose back is contiguous and reshape a view.
                    name = self.name("scaled")
                    self.emit("%s = (%s * %s).transpose(1, 2).reshape(bsz, q_len, -1)"
                              % (name, v.expr, self.param(v.width)))
                    self.store(v.cols.size, name)
                else:
                    name = self.name("scaled")
                    self.emit("%s = %s * %s" % (name, v.expr, self.param(v.width)))
                    self.store(v.width, name)
            elif r < 0.84:
                v = self.view_of(rng.choice(self.stores), one_d=True)
                layer = self.linear("o_proj", v.width, rng.choice([8, 16, self.H]))
                name = self.name("proj")
                self.emit("%s = self.%s(%s)" % (name, layer, v.expr))
                self.store(self.out_features[layer], name)
            elif r < 0.88:
                self.residual()
            elif r < 0.94 or depth:
                self.select()
            else:
                # A second group: on a view of any buffer, or on the first
                # group's input again (now maybe written): the merged-column
                # fuser sees every projection of that input.
                v = self.view_of(rng.choice(self.stores), one_d=True)
                if rng.random() < 0.5 and self.first_input.cols.ndim == 1:
                    v = self.first_input
                self.group(v, rng.choice(["generic", "glu"]))

    def select(self):
        """y = one of two buffers of one width, chosen by a guard; y is then
        that buffer (no copy, in PyTorch and in tx), and is written."""
        rng = self.rng
        s = rng.choice(self.stores)
        others = [o for o in self.stores if o.width == s.width and o is not s]
        if not others:
            return
        o = rng.choice(others)
        gname = rng.choice(self.optional) if self.optional else self.linear(
            "extra", self.H, 8, optional=True)
        form, holds = self.guard(gname)
        name = self.name("sel")
        if rng.random() < 0.5:
            self.emit("%s = %s if %s else %s" % (name, s.base, form, o.base))
        else:
            self.emit("if %s:" % form)
            self.emit("    %s = %s" % (name, s.base))
            self.emit("else:")
            self.emit("    %s = %s" % (name, o.base))
        chosen = s if holds else o
        v = View(name, chosen, np.arange(chosen.width), True)
        chosen.aliases.append(v)
        self.write(self.subview(v, False) if rng.random() < 0.5 else v)

    def glu_combine(self):
        gate, up = self.glu
        self.glu = None
        rng = self.rng
        r = rng.random()
        name = self.name("inter")
        if r < 0.4:
            self.emit("%s = self.act_fn(%s) * %s" % (name, gate.base, up.base))
            self.act()
        elif r < 0.7:
            self.emit("F.silu(%s, inplace=True)" % gate.base)
            self.emit("%s = %s" % (name, up.base))
            self.emit(rng.choice(["torch.mul(%s, %s, out=%s)" % (gate.base, up.base, up.base),
                                  "%s *= %s" % (up.base, gate.base),
                                  "%s.mul_(%s)" % (up.base, gate.base)]))
        else:
            self.emit("%s = F.gelu(%s, approximate=\"tanh\") * %s" % (name, gate.base, up.base))
        down = self.linear("down_proj", gate.width, self.H)
        out = self.name("mlp_out")
        self.emit("%s = self.%s(%s)" % (out, down, name))
        self.store(self.H, out)

    def act(self):
        if not any(l.startswith("self.act_fn =") for l in self.init):
            self.init.append("self.act_fn = %s" % self.rng.choice(
                ["nn.SiLU()", "nn.GELU(approximate=\"tanh\")", "nn.GELU()", "nn.ReLU()"]))

    def heads_first(self, v):
        return "%s.view(bsz, q_len, -1, self.head_dim).transpose(1, 2)" % v.expr

    def rope(self, a, b):
        """Rotary on heads-first views of 1-D views a, b (width % HD == 0)."""
        self.uses.add("rope")
        qa, kb = self.name("q_rot"), self.name("k_rot")
        if "cos" not in self.names:
            self.names.update(["cos", "sin"])
            self.emit("cos, sin = position_embeddings")
        ha = a.store.heads if a.expr == a.store.base and a.store.heads else self.heads_first(a)
        hb = b.store.heads if b.expr == b.store.base and b.store.heads else self.heads_first(b)
        self.emit("%s, %s = apply_rotary_pos_emb(%s, %s, cos, sin)" % (qa, kb, ha, hb))
        return qa, kb

    def rope_pair(self):
        """Rotary on views of two buffers ([.., k * head_dim] column windows)."""
        views = []
        for heads in (self.rng.choice([1, 1, 2]), 1):
            cands = [s for s in self.stores if s.width >= heads * self.HD]
            if not cands:
                return
            views.append(self.view_of(self.rng.choice(cands), width=heads * self.HD))
        qa, kb = self.rope(*views)
        for n, v in zip((qa, kb), views):
            self.emit("%s = %s.transpose(1, 2).reshape(bsz, q_len, -1)" % (n, n))
            self.store(v.width, n)

    def attention(self):
        q, k, v = self.qkv
        self.qkv = None
        self.uses.add("mask")
        qh, kh = self.full(q), self.full(k)
        if self.rng.random() < 0.7:
            qn, kn = self.rope(qh, kh)
        else:
            qn, kn = q.heads or self.heads_first(qh), k.heads or self.heads_first(kh)
        out = self.name("attn_output")
        self.emit("%s, _ = eager_attention_forward(self, %s, %s, %s, attention_mask, "
                  "dropout=0.0, scaling=self.scaling)"
                  % (out, qn, kn, v.heads or self.heads_first(self.full(v))))
        self.emit("%s = %s.reshape(bsz, q_len, -1).contiguous()" % (out, out))
        self.store(self.NH * self.HD, out)

    def head_norm(self):
        cands = [s for s in self.stores if s.width % self.HD == 0]
        s = self.rng.choice(cands)
        v = self.view_of(s, width=self.HD * self.rng.randint(1, s.width // self.HD))
        name = self.name("normed")
        self.emit("%s = self.%s(%s.view(bsz, q_len, -1, %d)).reshape(bsz, q_len, -1)"
                  % (name, self.norm(self.HD), v.expr, self.HD))
        self.store(v.width, name)

    def residual(self):
        rng = self.rng
        cands = [s for s in self.stores if s.width == self.H and s is not self.input]
        if not cands:
            return
        t = rng.choice(cands)
        r = rng.random()
        if r < 0.4:
            name = self.name("hidden_out")
            self.emit("%s = %s + %s" % (name, rng.choice(["residual", "hidden_states"])
                                        if "residual" in self.names else "hidden_states",
                                        t.base))
            self.store(self.H, name)
        elif r < 0.7:
            self.emit("hidden_states += %s" % t.base)
        else:
            self.emit("torch.add(%s, %s, out=%s)" % (self.input.base, t.base, t.base))

    # -- the module ----------------------------------------------------------
    def prelude(self):
        """Chooses the input of the first group; returns its View."""
        rng = self.rng
        self.emit("bsz, q_len, _ = hidden_states.shape")
        self.input = self.store(self.H, "hidden_states", "input")
        if rng.random() < 0.3:
            self.names.add("residual")
            self.emit("residual = hidden_states")
            self.input.aliases.append(View("residual", self.input, np.arange(self.H), True))
        if rng.random() < 0.3:
            name = self.name("scratch")
            self.emit("%s = hidden_states * %s" % (name, self.const()))
            self.store(self.H, name)
        r = rng.random()
        if r < 0.2:
            inp = self.full(self.input)
        elif r < 0.35:
            name = self.name("h")
            self.emit("%s = self.%s(hidden_states)" % (name, self.norm(self.H)))
            inp = self.full(self.store(self.H, name))
        elif r < 0.45:
            name = self.name("h")
            self.emit("%s = %s" % (name, rng.choice(["hidden_states.clone()",
                                                    "hidden_states * 1.0",
                                                    "hidden_states + 0.5"])))
            inp = self.full(self.store(self.H, name))
        elif r < 0.55:
            layer = self.linear("pre_proj", self.H, rng.choice([16, 32]))
            name = self.name("h")
            self.emit("%s = self.%s(hidden_states)" % (name, layer))
            inp = self.full(self.store(self.out_features[layer], name))
        elif r < 0.62:
            name = self.name("h")
            self.emit("%s = hidden_states" % name)
            inp = View(name, self.input, np.arange(self.H), True)
            self.input.aliases.append(inp)
        else:
            if rng.random() < 0.35:
                # Per-head projections: [b, T, h, d] -> [b, T, h, out].
                d = rng.choice([4, 8])
                inp = View("hidden_states.view(bsz, q_len, -1, %d)" % d, self.input,
                           np.arange(self.H).reshape(-1, d), False)
                if rng.random() < 0.4:
                    h = self.H // d
                    a = rng.randrange(h)
                    b = rng.randrange(a + 1, h + 1)
                    inp = View("%s[:, :, %s, :]" % (inp.expr, self.bounds(a, b, h)),
                               self.input, inp.cols[a:b], True)
            else:
                inp = self.subview(self.full(self.input), rng.random() < 0.7, allow_tr=False)
            if inp.cols.ndim == 1 and inp.width < 4:
                inp = self.full(self.input)
            if inp.cols.ndim == 2 and rng.random() < 0.3:
                # Projections of a transposed per-head view: [b, h, T, out].
                inp = View(inp.expr + ".transpose(1, 2)", inp.store, inp.cols, False, tr=True)
            if rng.random() < 0.4:
                name = self.name("h")
                self.emit("%s = %s" % (name, inp.expr))
                inp = View(name, self.input, inp.cols, True, tr=inp.tr)
                self.input.aliases.append(inp)
        if rng.random() < 0.3:
            a = self.subview(self.full(inp.store), False)
            name = self.name("alias")
            conv = rng.choice(["", "", ".float()", ".to(hidden_states.dtype)", ".detach()"])
            self.emit("%s = %s%s" % (name, a.expr, conv))
            inp.store.aliases.append(View(name, inp.store, a.cols, True, tr=a.tr))
        if rng.random() < 0.2 and inp.store.width % 2 == 0:
            W = inp.store.width
            cut = rng.choice([W // 2, W // 4])
            n1, n2 = self.name("part"), self.name("part")
            if cut == W // 2 and rng.random() < 0.5:
                form = "%s.chunk(2, dim=-1)" % inp.store.base
            else:
                form = "torch.split(%s, [%d, %d], dim=-1)" % (inp.store.base, cut, W - cut)
            self.emit("%s, %s = %s" % (n1, n2, form))
            inp.store.aliases.append(View(n1, inp.store, np.arange(cut), True))
            inp.store.aliases.append(View(n2, inp.store, np.arange(cut, W), True))
        return inp

    def module(self, tokens):
        rng = self.rng
        inp = self.prelude()
        self.first_input = inp
        kind = rng.choice(["qkv", "glu", "generic"]) if inp.cols.ndim == 1 else "generic"
        res = self.group(inp, kind)
        if kind == "qkv":
            self.qkv = (res["q_proj"], res["k_proj"], res["v_proj"])
        elif kind == "glu":
            self.glu = (res["gate_proj"], res["up_proj"])
        self.post(0)
        rets, widths = [], []
        for s in self.stores:
            if s.base not in rets:
                rets.append(s.base)
                widths.append(s.width)
        # A few views too: after fusion, strided windows of merged buffers.
        for _ in range(rng.choice([0, 0, 1, 2])):
            v = self.view_of(rng.choice(self.stores), one_d=True)
            rets.append(v.expr)
            widths.append(v.width)
        self.emit("return (%s,)" % ", ".join(rets))
        args = ["hidden_states"]
        if "rope" in self.uses:
            args.append("position_embeddings")
        if "mask" in self.uses:
            args.append("attention_mask=None")
        # Sometimes the class is one layer of a stack (nn.ModuleList, unrolled
        # by the frontend; identical layers are outlined by tx-to-cpu): each
        # layer reads one of the previous layer's results of hidden width,
        # which may be a buffer that layer wrote in place or returned as is.
        stack = rng.random() < 0.2
        cls = "GenLayer" if stack else "GenBlock"
        head = ["# tx-gen: tokens=%d entry=GenBlock" % tokens,
                "# Generated by test/Differential/gen_torch_modules.py.", PRELUDE,
                "class %s(nn.Module):" % cls,
                "    def __init__(self, config):",
                "        super().__init__()",
                "        self.head_dim = config.head_dim",
                "        self.num_key_value_groups = config.num_attention_heads // "
                "config.num_key_value_heads",
                "        self.scaling = self.head_dim**-0.5"]
        head += ["        " + l for l in self.init]
        head += ["", "    def forward(self, %s):" % ", ".join(args)]
        tail = []
        if stack:
            nxt = rng.choice([i for i, w in enumerate(widths) if w == self.H])
            call = ", ".join(a.split("=")[0] for a in args)
            tail = ["", "", "class GenBlock(nn.Module):",
                    "    def __init__(self, config):",
                    "        super().__init__()",
                    "        self.layers = nn.ModuleList([GenLayer(config) for _ in range(%d)])"
                    % rng.choice([2, 3]),
                    "",
                    "    def forward(self, %s):" % ", ".join(args),
                    "        outs = ()",
                    "        for layer in self.layers:",
                    "            res = layer(%s)" % call,
                    "            outs = outs + res",
                    "            hidden_states = res[%d]" % nxt,
                    "        return outs"]
        return "\n".join(head + self.body + tail) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--out", required=True)
    p.add_argument("--max-tokens", type=int, default=700,
                   help="fewer tokens than the module asks for (quick tests)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random("%d/%d" % (a.seed, i))
        # Large token counts now and then: buffers of >= 128 KiB come from
        # tx-run's buffer cache, reused within a call as temporaries die.
        tokens = rng.choice([1, 2, 3, 5, 7, 8, 9, 13, 33, 40, 64] * 2 + [520, 700])
        tokens = min(tokens, a.max_tokens)
        g = Gen(rng)
        src = g.module(tokens)
        stem = os.path.join(a.out, "mod_%d_%d" % (a.seed, i))
        with open(stem + ".py", "w") as f:
            f.write(src)
        with open(stem + ".json", "w") as f:
            json.dump(g.cfg, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
