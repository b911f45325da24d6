#!/usr/bin/env python3
"""HF-style PyTorch modules in forms gen_torch_modules.py does not write
(hunt 14): how a projection group's calls are *spelled* and what happens to
their input between the calls, checked against PyTorch itself.

gen_torch_modules.py varies writes to views of the input with the calls
written `self.<name>(x)`. This generator keeps the arithmetic simple and
varies the Python forms the frontend must see through (each module is 1-3
independent scenarios on the same hidden_states, so a wrong merge across
scenarios shows too):
  slice      projections of column slices / narrow / view(-1, H) of the
             input (same or different slices: only identical ones may merge);
  alias      y = <alias of x> (view, reshape, detach, float(), to(dtype),
             type_as, contiguous(), [:], [...], view_as, squeeze(0),
             flatten, transpose(0, 1).contiguous(), permute, or a real copy:
             clone(), x * 1) ; p1(x) ; <in-place op on y> ; p2(x): the write
             reaches x exactly when PyTorch's y aliases it;
  tokdep     the same with an alias whose aliasing depends on the token
             count (x.view(b, T, h, d).transpose(1, 2).contiguous(),
             x.transpose(1, 2).reshape(...)): at one token PyTorch returns
             the tensor itself, at more a copy (off by default, to be run
             with --tokens 1: see below);
  chain      q = p1(x); x = x + q / x += q / torch.add(x, q, out=x) /
             x.copy_(..) / x[..., a:b] = ..; k = p2(x) (must not merge);
  outmod     q = p1(x); q.mul_(s); k = p2(q); v = p3(x);
  loop       projections in `for` loops over an nn.ModuleList or range(n),
             the input reassigned or written with += each iteration;
  guard      `if self.k_proj is not None and self.config.flag:` and
             friends (config flags true or false);
  spell      tuples/lists/comprehensions of calls, torch.cat of outputs,
             getattr(self, name), nn.ModuleDict, a lambda, functools.partial
             of F.linear, F.linear / @ on a layer's weight beside its call,
             the same layer called twice on different inputs, a layer
             aliased under a second attribute name (tied), nn.Sequential;
  resid      residuals written with += on hidden_states between calls;
  token      token-dimension slices (x[:, :1], x[:, -1:], x[:, 1:], x[:, 0])
             as the calls' input and as the written view (x[:, -1:] is
             x[:, :1] at one token);
  alias2     aliases through Python containers, tuple unpacking, helper
             functions, `a if guard else b` (a runtime guard choosing an
             alias or a copy), unbound `torch.Tensor.mul_(x, c)`, `.data`,
             torch.narrow / torch.transpose / swapaxes / mT / expand.

Every scenario returns the tensors it creates or writes (as [1, T, ...]),
and hidden_states is returned last, so run_torch_modules.py compares all.

Usage: gen_torch_hunt14.py --seed N --count K --out DIR [--tokens T]
           [--features F1,F2|all]
Run:   run_torch_modules.py DIR --tx-run build/bin/tx-run --repeat 2
       for --tokens 1 and 17 (default: both, alternating by module).
"""
import argparse
import json
import os
import random

ALL = ["slice", "alias", "chain", "outmod", "loop", "guard", "spell", "resid", "alias2"]
# tokdep: PyTorch aliases at one token and copies at more (the frontend
# keeps the copy equal to its source after in-place writes when the call
# has one token; before, --tokens 1 mismatched); token: token-dimension
# slices, which the frontend rejects (clean errors).
EXTRA = ["tokdep", "token"]
H = 32
HD = 8
CONSTS = ["0.5", "2.0", "-1.5", "1.25", "0.75", "3.0"]

PRELUDE = '''import functools
import torch
import torch.nn.functional as F
from torch import nn


class GenBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
'''


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.init = []
        self.body = []
        self.rets = []
        self.flags = {}
        self.n = 0

    def name(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def lin(self, name, n_in=H, n_out=None, bias=None, optional=None):
        r = self.rng
        n_out = n_out or r.choice([8, 16, 24, 32])
        bias = r.random() < 0.3 if bias is None else bias
        expr = "nn.Linear(%d, %d, bias=%s)" % (n_in, n_out, bias)
        if optional:
            expr += " if config.%s else None" % optional
        self.init.append("self.%s = %s" % (name, expr))
        return n_out

    def flag(self):
        f = self.name("use_f")
        self.flags[f] = self.rng.random() < 0.6
        return f

    def c(self):
        return self.rng.choice(CONSTS)

    def b(self, line):
        self.body.append(line)

    # ---- in-place writes on a tensor named t (full width H, [1, T, H]) ----
    def inplace(self, t, full=True):
        r = self.rng
        c = self.c()
        forms = ["%s.mul_(%s)" % (t, c), "%s.add_(%s)" % (t, c), "%s.sub_(%s)" % (t, c),
                 "%s.div_(%s)" % (t, c), "%s.neg_()" % t, "%s.clamp_(min=-0.5)" % t,
                 "%s *= %s" % (t, c), "%s += %s" % (t, c), "%s.tanh_()" % t,
                 "torch.mul(%s, %s, out=%s)" % (t, c, t), "F.silu(%s, inplace=True)" % t,

                
                 "%s.relu_()" % t, "%s.sigmoid_()" % t,
                 "%s.copy_(%s * %s)" % (t, t, c), "%s.exp_()" % t]
        if full:
            forms += ["%s[..., 4:12] = %s[..., 20:28] * %s" % (t, t, c), "%s[:, :, 8:16] *= %s" % (t, c),
                      "%s[..., -8:].mul_(%s)" % (t, c)]
        return r.choice(forms)

    # ---------------------------------------------------------------- scenarios
    def sc_slice(self):
        r = self.rng
        k = r.choice([8, 16, 24])
        off = r.choice([0, 0, 8])
        forms = ["hidden_states[:, :, %d:%d]" % (off, off + k),
                 "hidden_states[..., %d:%d]" % (off, off + k),
                 "hidden_states.narrow(-1, %d, %d)" % (off, k)]
        a, b = self.name("sl_a"), self.name("sl_b")
        self.lin(a, n_in=k)
        self.lin(b, n_in=k)
        same = r.random() < 0.6
        xa = r.choice(forms)
        if same:
            xb = r.choice(forms)
        else:
            off2 = 8 if off == 0 else 0
            xb = "hidden_states[..., %d:%d]" % (off2, off2 + k)
        if r.random() < 0.5:
            v = self.name("xs")
            self.b("%s = %s" % (v, xa))
            xa = v
            if same and r.random() < 0.5:
                xb = v
        oa, ob = self.name("o"), self.name("o")
        self.b("%s = self.%s(%s)" % (oa, a, xa))
        if r.random() < 0.5:
            w = r.choice(["hidden_states[..., %d:%d]" % (off, off + 4),
                          "hidden_states[..., 24:32]", "hidden_states"])
            self.b(self.inplace(w, full=False))
        self.b("%s = self.%s(%s)" % (ob, b, xb))
        self.rets += [oa, ob]
        if r.random() < 0.4:
            # a view of the whole input: rows of [T, H]
            p = self.name("flat")
            self.lin(p)
            o = self.name("o")
            self.b("%s = self.%s(hidden_states.view(-1, %d)).view(bsz, q_len, -1)" % (o, p, H))
            self.rets.append(o)

    ALIASES = ["hidden_states.view(bsz, q_len, -1, %d)" % HD,
               "hidden_states.reshape(bsz, q_len, %d)" % H, "hidden_states.detach()",
               "hidden_states.float()", "hidden_states.to(torch.float32)",
               "hidden_states.type_as(hidden_states)", "hidden_states.contiguous()",
               "hidden_states[:]", "hidden_states[...]", "hidden_states.view_as(hidden_states)",
               "hidden_states.squeeze(0)", "hidden_states.flatten(0, 1)",
               "hidden_states.transpose(0, 1).contiguous()", "hidden_states.permute(0, 1, 2)",
               "hidden_states.unsqueeze(0)[0]", "hidden_states.to(hidden_states.dtype)",
               "hidden_states.view(bsz * q_len, -1)", "hidden_states[0]",
               "hidden_states.unflatten(-1, (4, 8))", "torch.flatten(hidden_states, 0, 1)",
               "torch.squeeze(hidden_states, 0)",
               # copies
               "hidden_states.clone()", "hidden_states * 1", "hidden_states + 0.0",
               "hidden_states.float().clone()", "torch.clone(hidden_states)",
               "hidden_states.to(torch.float32, copy=True)"]
    TOKDEP = ["hidden_states.view(bsz, q_len, -1, %d).transpose(1, 2).contiguous()" % HD,
              "hidden_states.transpose(1, 2).contiguous()",
              "hidden_states.transpose(1, 2).reshape(bsz, %d, q_len)" % H,
              "hidden_states.view(bsz, q_len, 4, 8).transpose(1, 2).reshape(bsz, 4, -1)",
              "hidden_states[:, :, :16].contiguous()",
              "hidden_states[..., 8:24].reshape(bsz, q_len, 2, 8)"]

    def sc_alias(self, tokdep=False):
        r = self.rng
        a, b = self.name("al_a"), self.name("al_b")
        self.lin(a)
        self.lin(b)
        y = self.name("y")
        self.b("%s = %s" % (y, r.choice(self.TOKDEP if tokdep else self.ALIASES)))
        oa, ob = self.name("o"), self.name("o")
        self.b("%s = self.%s(hidden_states)" % (oa, a))
        self.b(self.inplace(y, full=False))
        self.b("%s = self.%s(hidden_states)" % (ob, b))
        self.rets += [oa, ob]

    def sc_chain(self):
        r = self.rng
        a, b = self.name("ch_a"), self.name("ch_b")
        self.lin(a, n_out=H)
        self.lin(b)
        q = self.name("q")
        self.b("%s = self.%s(hidden_states)" % (q, a))
        self.b(r.choice([
            "hidden_states = hidden_states + %s" % q,
            "hidden_states += %s" % q,
            "torch.add(hidden_states, %s, out=hidden_states)" % q,
            "hidden_states.copy_(%s)" % q,
            "hidden_states[..., 0:16] = %s[..., 16:32]" % q,
            "hidden_states.add_(%s, alpha=%s)" % (q, self.c()),
            "hidden_states = torch.add(hidden_states, %s, alpha=0.5)" % q,
            "hidden_states.mul_(%s.sigmoid())" % q,
        ]))
        k = self.name("k")
        self.b("%s = self.%s(hidden_states)" % (k, b))
        self.rets += [q, k]

    def sc_outmod(self):
        r = self.rng
        a, b, c = self.name("om_a"), self.name("om_b"), self.name("om_c")
        wa = self.lin(a)
        self.lin(b, n_in=wa)
        self.lin(c)
        q = self.name("q")
        self.b("%s = self.%s(hidden_states)" % (q, a))
        self.b(r.choice(["%s.mul_(%s)" % (q, self.c()), "%s *= %s" % (q, self.c()),
                         "%s[..., :4] = %s[..., 4:8] * 0.0" % (q, q), "%s.add_(hidden_states[..., :%d])" % (q, wa)]))
        k, v = self.name("k"), self.name("v")
        lines = ["%s = self.%s(%s)" % (k, b, q), "%s = self.%s(hidden_states)" % (v, c)]
        r.shuffle(lines)
        for l in lines:
            self.b(l)
        self.rets += [q, k, v]

    def sc_loop(self):
        r = self.rng
        n = r.choice([2, 3])
        form = r.randrange(4)
        h = self.name("h")
        self.b("%s = hidden_states%s" % (h, r.choice(["", " * 1.0", ".clone()"])))
        if form == 0:
            L = self.name("layers")
            self.init.append("self.%s = nn.ModuleList([nn.Linear(%d, %d, bias=%s) for _ in "
                             "range(%d)])" % (L, H, H, r.random() < 0.5, n))
            self.b("for layer in self.%s:" % L)
            self.b("    %s = %s" % (h, r.choice(["%s + layer(%s)" % (h, h),
                                                 "layer(%s)" % h])))
        elif form == 1:
            a, b = self.name("lp_a"), self.name("lp_b")
            self.lin(a, n_out=H)
            self.lin(b, n_out=H)
            self.b("for _ in range(%d):" % n)
            self.b("    x1 = self.%s(%s)" % (a, h))
            self.b("    x2 = self.%s(%s)" % (b, h))
            self.b("    " + r.choice(["%s = %s + x1 * x2" % (h, h), "%s += x1 - x2" % h,
                                      "%s.add_(x1).mul_(0.5)" % h]))
        elif form == 2:
            names = [self.name("lg") for _ in range(n)]
            for nm in names:
                self.lin(nm, n_out=H)
            outs = self.name("outs")
            self.b("%s = []" % outs)
            self.b("for name in %r:" % (tuple(names),))
            self.b("    %s.append(getattr(self, name)(%s))" % (outs, h))
            self.b("    " + r.choice(["%s = %s + %s[-1]" % (h, h, outs), "pass",
                                      "%s.mul_(0.5)" % h]))
            for i in range(n):
                o = self.name("o")
                self.b("%s = %s[%d]" % (o, outs, i))
                self.rets.append(o)
        else:
            L = self.name("blocks")
            self.init.append("self.%s = nn.ModuleList([nn.ModuleDict({'a': nn.Linear(%d, %d), "
                             "'b': nn.Linear(%d, %d)}) for _ in range(%d)])" % (L, H, H, H, H, n))
            self.b("for i, blk in enumerate(self.%s):" % L)
            self.b("    u = blk['a'](%s)" % h)
            self.b("    w = blk['b'](%s)" % h)
            self.b("    %s = %s" % (h, r.choice(["%s + u * w" % h, "u - w"])))
        self.rets.append(h)

    def sc_guard(self):
        r = self.rng
        f1, f2 = self.flag(), self.flag()
        a, b, c = self.name("gd_a"), self.name("gd_b"), self.name("gd_c")
        self.lin(a, n_out=16)
        self.lin(b, n_out=16, optional=f1)
        self.lin(c, n_out=16, optional=r.choice([None, f2]))
        q, k, v = self.name("q"), self.name("k"), self.name("v")
        self.b("%s = self.%s(hidden_states)" % (q, a))
        cond = r.choice(["self.%s is not None and self.config.%s" % (b, f2),
                         "self.config.%s and self.%s is not None" % (f2, b),
                         "self.%s is not None or self.config.%s" % (b, f2),
                         "not self.config.%s and self.%s is not None" % (f2, b),
                         "self.%s is not None" % b])
        guard_c = "self.%s is not None" % c
        self.b("if %s:" % cond)
        self.b("    %s = self.%s(hidden_states)" % (k, b) if "or" not in cond else
               "    %s = self.%s(hidden_states) if self.%s is not None else %s * 2.0"
               % (k, b, b, q))
        if r.random() < 0.4:
            self.b("    " + self.inplace("hidden_states"))
        self.b("else:")
        self.b("    %s = %s + 1.0" % (k, q))
        self.b("%s = self.%s(hidden_states) if %s else %s * 0.5" % (v, c, guard_c, q))
        self.rets += [q, k, v]

    def sc_spell(self):
        r = self.rng
        form = r.randrange(11)
        a, b, c = self.name("sp_a"), self.name("sp_b"), self.name("sp_c")
        x = "hidden_states"
        outs = [self.name("o") for _ in range(3)]
        if form == 0:
            for nm in (a, b, c):
                self.lin(nm)
            self.b("%s, %s, %s = (self.%s(%s), self.%s(%s), self.%s(%s))"
                   % (outs[0], outs[1], outs[2], a, x, b, x, c, x))
        elif form == 1:
            for nm in (a, b, c):
                self.lin(nm)
            l = self.name("lst")
            self.b("%s = [p(%s) for p in (self.%s, self.%s, self.%s)]" % (l, x, a, b, c))
            for i in range(3):
                self.b("%s = %s[%d]" % (outs[i], l, i))
        elif form == 2:
            wa, wb = self.lin(a), self.lin(b)
            outs = outs[:1]
            self.b("%s = torch.cat([self.%s(%s), self.%s(%s)], dim=-1)" % (outs[0], a, x, b, x))
            if r.random() < 0.5:
                self.b("%s[..., :%d].mul_(2.0)" % (outs[0], wa))
        elif form == 3:
            for nm in (a, b, c):
                self.lin(nm)
            for i, nm in enumerate((a, b, c)):
                self.b("%s = getattr(self, %r)(%s)" % (outs[i], nm, x))
        elif form == 4:
            d = self.name("pd")
            self.init.append("self.%s = nn.ModuleDict({'q': nn.Linear(%d, 16, bias=False), "
                             "'k': nn.Linear(%d, 16, bias=False), 'v': nn.Linear(%d, 8)})"
                             % (d, H, H, H))
            for i, key in enumerate("qkv"):
                self.b("%s = self.%s[%r](%s)" % (outs[i], d, key, x))
        elif form == 5:
            for nm in (a, b, c):
                self.lin(nm)
            f = self.name("fn")
            self.b("%s = lambda t, m: m(t) * %s" % (f, self.c()))
            for i, nm in enumerate((a, b, c)):
                self.b("%s = %s(%s, self.%s)" % (outs[i], f, x, nm))
        elif form == 6:
            for nm in (a, b, c):
                self.lin(nm, bias=True)
            p = self.name("pf")
            self.b("%s = functools.partial(F.linear, %s)" % (p, x))
            self.b("%s = %s(self.%s.weight, self.%s.bias)" % (outs[0], p, a, a))
            self.b("%s = self.%s(%s)" % (outs[1], b, x))
            self.b("%s = self.%s(%s)" % (outs[2], c, x))
        elif form == 7:
            for nm in (a, b, c):
                self.lin(nm, bias=False)
            self.b("%s = self.%s(%s)" % (outs[0], a, x))
            self.b("%s = self.%s(%s)" % (outs[1], b, x))
            self.b("%s = %s" % (outs[2], r.choice(["F.linear(%s, self.%s.weight)" % (x, a),
                                                   "%s @ self.%s.weight.t()" % (x, b),
                                                   "torch.matmul(%s, self.%s.weight.T)" % (x, a)])))
            if r.random() < 0.5:
                self.b("%s = self.%s(%s)" % (self.name("unused"), c, x))
        elif form == 8:
            # the same layer twice, on different inputs
            self.lin(a, n_out=H)
            self.lin(b, n_out=H)
            self.b("%s = self.%s(%s)" % (outs[0], a, x))
            self.b("%s = self.%s(%s)" % (outs[1], b, x))
            self.b("%s = self.%s(%s)" % (outs[2], a, r.choice([outs[1], x + " * 2.0",
                                                                outs[0]])))
        elif form == 9:
            # a layer under two attribute names (tied)
            self.lin(a, n_out=16)
            self.init.append("self.%s = self.%s" % (b, a))
            self.lin(c, n_out=16)
            self.b("%s = self.%s(%s)" % (outs[0], a, x))
            self.b("%s = self.%s(%s)" % (outs[1], b, x))
            self.b("%s = self.%s(%s)" % (outs[2], c, x))
        else:
            s = self.name("seq")
            self.init.append("self.%s = nn.Sequential(nn.Linear(%d, 16), nn.SiLU(), "
                             "nn.Linear(16, %d))" % (s, H, H))
            self.lin(a)
            self.b("%s = self.%s(%s)" % (outs[0], s, x))
            self.b("%s = self.%s(%s)" % (outs[1], a, x))
            outs = outs[:2]
        self.rets += outs

    def sc_resid(self):
        r = self.rng
        a, b = self.name("rs_a"), self.name("rs_b")
        self.lin(a, n_out=H)
        self.lin(b, n_out=H)
        o1, o2 = self.name("o"), self.name("o")
        res = self.name("residual")
        self.b("%s = hidden_states" % res)
        self.b("%s = self.%s(hidden_states)" % (o1, a))
        self.b(r.choice(["hidden_states += %s" % o1, "%s += %s" % (res, o1),
                         "hidden_states = %s + %s" % (res, o1)]))
        self.b("%s = self.%s(%s)" % (o2, b, r.choice(["hidden_states", res])))
        self.b("hidden_states += %s" % o2)
        self.rets += [o1, o2, res]


def _sc_token(self):
    r = self.rng
    a, b = self.name("tk_a"), self.name("tk_b")
    self.lin(a)
    self.lin(b)
    views = ["hidden_states[:, :1]", "hidden_states[:, -1:]", "hidden_states[:, -1:, :]",
             "hidden_states[:, 0:1, :]", "hidden_states[:, 1:]", "hidden_states[:, :-1]",
             "hidden_states"]
    xin = r.choice(views)
    w = r.choice(views + ["hidden_states[:, 0]", "hidden_states[:, -1]",
                          "hidden_states[0, -1]", "hidden_states[:, q_len - 1:]"])
    oa, ob = self.name("o"), self.name("o")
    self.b("%s = self.%s(%s)" % (oa, a, xin))
    self.b(self.inplace(w, full=False))
    self.b("%s = self.%s(%s)" % (ob, b, r.choice([xin, xin, r.choice(views)])))
    if xin in ("hidden_states[:, 1:]", "hidden_states[:, :-1]") or \
            "1:]" in self.body[-1] or ":-1]" in self.body[-1]:
        # empty at one token: return sums over tokens, padded to [1, 1, N]
        self.body.append("%s = %s.sum(dim=1, keepdim=True) + 0.0" % (oa, oa))
        self.body.append("%s = %s.sum(dim=1, keepdim=True) + 0.0" % (ob, ob))
    self.rets += [oa, ob]


def _sc_alias2(self):
    r = self.rng
    a, b = self.name("a2_a"), self.name("a2_b")
    self.lin(a)
    self.lin(b)
    y = self.name("y")
    form = r.randrange(12)
    if form == 0:
        self.b("%s = [hidden_states]" % y)
        y = "%s[0]" % y
    elif form == 1:
        self.b("%s = {'h': hidden_states}" % y)
        y = "%s['h']" % y
    elif form == 2:
        self.b("_, %s = hidden_states * 2.0, hidden_states" % y)
    elif form == 3:
        f = self.name("use_f")
        self.flags[f] = r.random() < 0.5
        self.b("%s = hidden_states if self.config.%s else hidden_states.clone()" % (y, f))
    elif form == 4:
        g = self.name("opt")
        self.lin(g, optional=self.flag())
        self.b("%s = hidden_states%s if self.%s is not None else hidden_states.clone()"
               % (y, r.choice(["", "[..., :16]", ".view(bsz, q_len, 4, 8)"]), g))
    elif form == 5:
        self.b("%s = hidden_states.data" % y)
    elif form == 6:
        self.b("%s = %s" % (y, r.choice(["torch.narrow(hidden_states, -1, 8, 16)",
                                         "torch.transpose(hidden_states, 0, 1)",
                                         "hidden_states.swapaxes(1, 2)", "hidden_states.mT",
                                         "hidden_states.expand(1, -1, -1)",
                                         "hidden_states.movedim(2, 1)",
                                         "hidden_states.split(16, dim=-1)[1]",
                                         "torch.chunk(hidden_states, 2, dim=-1)[0]",
                                         "hidden_states.view(-1)"])))
    elif form == 7:
        self.b("%s = hidden_states" % y)
        self.b("hidden_states = hidden_states * 1.0")
    elif form == 8:
        self.b("%s = self.%s" % (y, a))
        oa, ob = self.name("o"), self.name("o")
        self.b("%s = %s(hidden_states)" % (oa, y))
        self.b("torch.Tensor.mul_(hidden_states, %s)" % self.c())
        self.b("%s = self.%s(hidden_states)" % (ob, b))
        self.rets += [oa, ob]
        return
    elif form == 9:
        self.b("%s = hidden_states" % y)
        self.b("for t in (%s,):" % y)
        y = "t"
    elif form == 10:
        self.b("%s, = (hidden_states,)" % y)
    else:
        self.b("%s = hidden_states.clone()" % y)
        self.b("%s, hidden_states = hidden_states, %s" % (y, y))
    oa, ob = self.name("o"), self.name("o")
    lines = ["%s = self.%s(hidden_states)" % (oa, a)]
    ind = "    " if y == "t" else ""
    lines.append(ind + self.inplace(y, full=False))
    lines.append("%s = self.%s(hidden_states)" % (ob, b))
    if ind:
        lines[0], lines[1] = lines[1], ind + lines[0]
        self.body.append(lines[0])
        self.body.append(lines[1])
        self.body.append(lines[2])
    else:
        for l in lines:
            self.b(l)
    self.rets += [oa, ob]


Gen.sc_token = _sc_token
Gen.sc_alias2 = _sc_alias2


def generate(rng, feats, tokens):
    g = Gen(rng)
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(feats)
        if f == "tokdep":
            g.sc_alias(tokdep=True)
        else:
            getattr(g, "sc_" + f)()
    # Rank-2 returns ([T, H] from view(-1, H) etc.) are not [1, T, ...]:
    # return every tensor unsqueezed if it is rank 2.
    src = ["# tx-gen: tokens=%d entry=GenBlock" % tokens, PRELUDE.rstrip("\n")]
    src += ["        " + l for l in g.init]
    src += ["", "    def forward(self, hidden_states):",
            "        bsz, q_len, _ = hidden_states.shape"]
    src += ["        " + l for l in g.body]
    rets = []
    seen = set()
    for v in g.rets + ["hidden_states"]:
        if v not in seen:
            seen.add(v)
            rets.append(v)
    src.append("        return (%s,)" % ", ".join(rets))
    cfg = {"hidden_size": H, "head_dim": HD, "num_attention_heads": 4,
           "num_key_value_heads": 2, "rms_norm_eps": 1e-6}
    cfg.update(g.flags)
    return "\n".join(src) + "\n", cfg


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--out", required=True)
    p.add_argument("--tokens", type=int, help="tokens of every module (default 1 and 17 "
                   "alternating)")
    p.add_argument("--features", default="all")
    a = p.parse_args()
    feats = ALL if a.features == "all" else a.features.split(",")
    for f in feats:
        if f not in ALL + EXTRA:
            p.error("unknown feature %s" % f)
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.count):
        rng = random.Random(a.seed * 100003 + i)
        tokens = a.tokens or (1 if i % 2 == 0 else 17)
        src, cfg = generate(rng, feats, tokens)
        base = os.path.join(a.out, "mod_%d_%d" % (a.seed, i))
        with open(base + ".py", "w") as f:
            f.write(src)
        with open(base + ".json", "w") as f:
            json.dump(cfg, f, indent=1)


if __name__ == "__main__":
    main()
