# Python corners the sixth blind test found imported as PyTorch runs them.
import math

import torch
from torch import nn

K = 1.0
for _i in range(3):
    if _i == 5:
        break
else:
    K = K + 2.0  # no break: the else runs
for _i in range(3):
    if _i == 1:
        break
else:
    K = K + 100.0  # a break: it does not
_n = 0
while _n < 3:
    _n += 1
else:
    K = K + 10 * _n  # 33
_l = [1.0, 2.0, 3.0]
_l[1:2] = [7.0, 8.0, 9.0]
del _l[0]
_l[::2] = [0.5, 0.5]  # [0.5, 8.0, 0.5, 3.0]
_m = [[0.0]] * 2
_m[0].append(1.0)  # both items are one list
_a = _b = []
_a.append(3.0)
_x, *_rest, _z = [1.0, 2.0, 3.0, 4.0]
K2 = sum(_l) + 10 * len(_m[1]) + 100 * _b[0] + len(_rest) + _z * 0.25 \
    + divmod(-7, 2)[1] + math.floor(-2.5) + int("ff", 16) * 0.01


class ModuleBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * (K + 0.01 * K2)


def _or_default(x=None):
    x = x or 3.0  # 0 is false: 3.0
    return x


class ValuesBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        a = (1.0,)
        b = a
        a += (2.0,)  # a new tuple: b keeps one item
        k = len(b) * 10 + len(a)
        k += round(2.5) + round(3.5) * 10 + round(-0.5) + round(1.25, 1) * 100  # banker's rounding
        k += 1.0 if [1, 2] == (1, 2) else 2.0  # a list is never equal to a tuple
        k += (True + 1) + int(-3.5) + 10 * (-3.5 // 1) + (-7.5 % 2)
        k += (1.0 if "False" else 2.0) + (10.0 if all([]) else 20.0) + (0.1 if any([]) else 0.2)
        i = 5
        l = [i for i in range(3)]  # the comprehension's i does not leak
        k += i + 10 * l[-1] + _or_default(0) + _or_default()
        return self.up(hidden_states) * (k * 0.01)


class OrderBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def push(self, v):
        self.log = self.log + [v]
        return v

    def f2(self, a, b=5.0):
        return a + 10 * b

    def inc(self, v):
        self.n += 1
        return v

    def forward(self, hidden_states):
        self.log, self.n = [], 0
        k = self.push(1.0) - self.push(2.0) * 10  # left operand first
        k += self.log[0] * 100
        k += self.f2(b=self.inc(2.0), a=self.inc(3.0))
        self.c = self.d = self.inc(2.0)  # evaluated once, bound to both
        k += self.c + 10 * self.d
        k += self.inc(0.0) or self.inc(5.0) or self.inc(7.0)  # stops at 5.0
        l = [0.0, 0.0]
        l[int(self.push(1.0))] = self.push(2.0)  # the value before the target
        k += self.log[-2] + 10 * self.log[-1] + 100 * l[1]
        return self.up(hidden_states) * (k * 0.01 + self.n)


class TensorBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        a, b, c = h.chunk(3, dim=-1)  # 22, 22, 20
        x = torch.cat([c * 3.0, a, b * 2.0], dim=-1)
        p, q, r = torch.split(h, [10, 50, 4], dim=-1)
        x = x + torch.cat([r * 3.0, p, q * 2.0], dim=-1)
        x = x + torch.cat([h.narrow(-1, 40, 24), h.narrow(-1, 5, 20) * 2.0, h[..., :20]], dim=-1)
        m = h.mul(2.0)
        n = m.add_(1.0)  # the same tensor as m
        n.mul_(3.0)
        return x + m


class InplaceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.num_heads = config.num_attention_heads

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        x = h.view(1, -1, self.num_heads, 16)
        for i in range(self.num_heads):
            x[:, :, i].mul_(i + 1.0)  # writes h through the view
        p = h.view(1, -1, self.num_heads, 16).permute(0, 2, 1, 3)
        p[:, 1].mul_(5.0)
        return h
