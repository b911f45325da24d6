# Python corners the fifth blind test found imported as PyTorch runs them
# (each class combines several; blind5py-corners-torch.test compares them).
import torch
import torch.nn.functional as F
from torch import nn

S = 2.0


def late(h):
    return h * S  # S is read at the call: 3.0 (rebound below)


S = 3.0


def bump(t, opts={}):
    t.mul_(3.0)  # reaches the caller's tensor
    opts["n"] = opts.get("n", 0) + 1  # the default dict is shared between calls
    return float(opts["n"])


def star(*hs, s=2.0, **kw):
    kw["t"] = 100.0  # a fresh dict: the caller's is unchanged
    return (hs[0] + hs[-1]) * s


def rec(h, n):
    if n == 0:
        return h
    return rec(h * 2.0, n - 1)


class ScopeBlock(nn.Module):
    """late-bound globals, a class attribute shadowed by __init__, a
    mutable default, *args / keyword-only / **kwargs binding, recursion, a
    module dict changed in forward, swaps and nested unpacking."""

    k = 2.0
    TABLE = {"a": 2.0}

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k = 3.0

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        a = late(h) * self.k  # 3.0 * 3.0
        n = bump(h) + bump(h)  # h * 9.0; 1.0 + 2.0
        opts = {"t": 0.5}
        b = star(h, hidden_states, s=3.0, **opts) * opts["t"]
        self.TABLE["a"] = 4.0
        c = rec(hidden_states, 2) * self.TABLE["a"]
        a, b = b, a
        (x, y), z = (a, b), n
        return x + y * z + c


class LayersBlock(nn.Module):
    """ModuleList negative index, slices and steps, zip, range over len,
    a return inside a loop, a tuple of layers, one layer used twice."""

    def __init__(self, config):
        super().__init__()
        self.ls = nn.ModuleList(
            [nn.Linear(config.hidden_size, config.hidden_size, bias=False) for _ in range(3)])
        self.pair = (self.ls[2], self.ls[0])
        self.twice = nn.ModuleList([self.ls[1], self.ls[1]])

    def first(self, h):
        for layer in self.ls[1:]:
            return layer(h) * 0.5
        return h

    def forward(self, hidden_states):
        h = self.ls[-1](hidden_states)
        for layer in self.ls[::-2]:
            h = layer(h)
        for layer, s in zip(self.ls, [1.0, 2.0]):
            h = layer(h) * s
        for i in range(len(self.ls) - 1, -1, -1):
            h = self.ls[i](h) * 0.5
        for layer in self.twice:
            h = layer(h)
        return self.pair[1](self.pair[0](h)) + self.first(hidden_states)


class AliasBlock(nn.Module):
    """In-place writes seen through every alias (=, a view, .detach(),
    .float() of f32, .contiguous(), a chained in-place result), and not
    through copies (.clone(), torch.cat, .to(copy=True))."""

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        r = h
        v = h.view(1, -1, 4, 16)
        lo, hi = h.split(32, dim=-1)
        c = h.clone()
        cat = torch.cat([h, h], dim=-1)
        cp = h.to(torch.float32, copy=True)
        y = h * 2.0
        h.detach().mul_(2.0)
        h.float().add_(1.0)
        h.contiguous().mul_(0.5)
        z = h.mul_(3.0).sub_(1.0)
        z += hidden_states
        q = h.view(1, -1, 4, 16).transpose(1, 2)
        q[:, 1:2].mul_(3.0)
        a, b = cat.chunk(2, dim=-1)
        return (r + v.reshape(1, -1, 64) + torch.cat([hi, lo], dim=-1) + c + a + b + cp + y)


class ClassBlock(nn.Module):
    """An instance attribute shadowing a method, a classmethod on a class attribute a
    subclass overrides, @property, an if in the class body."""

    if S > 2.5:
        mult = 3.0
    else:
        mult = 2.0

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.scale = self.triple

    def triple(self, h):
        return h * 3.0

    def scale(self, h):
        return h * 2.0

    @classmethod
    def cm(cls, h):
        return h * cls.mult

    @property
    def p(self):
        return self.mult + 1.0

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        return self.scale(h) + self.cm(h) * self.p + h


class SubClassBlock(ClassBlock):
    mult = 5.0
