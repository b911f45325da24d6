import torch
import torch.nn.functional as F
from torch import nn


def scaled(x, *factors, shift=0.0, **extra):
    for f in factors:
        x = x * f
    if extra.get("negate", False):
        x = -x
    return x + shift + extra.get("bias", 0.0)


class Inner(nn.Module):
    def __init__(self, config, *, width=None, **kwargs):
        super().__init__()
        width = width or config.hidden_size
        self.lin = nn.Linear(config.hidden_size, width, bias=kwargs.get("bias", False))
        self.mult = kwargs.get("mult", 1.0)
        self.rest = len(kwargs)

    def forward(self, x, *args, scale=1.0, **kwargs):
        bias = kwargs.get("bias", 0.0)
        if args:
            x = x * args[0]
        return self.lin(x) * scale * self.mult + bias + self.rest


class KwargsBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        opts = {"bias": True, "mult": 0.5}
        self.inner = Inner(config, width=64, **opts, extra_key=1)   # rest: 3

    def forward(self, hidden_states, **kwargs):
        extra = dict(scale=0.5, bias=0.25)
        y = self.inner(hidden_states, 3.0, **extra, **kwargs)
        pair = (2.0, 0.5)
        z = scaled(y, *pair, shift=1.0, negate=True)              # -(y*1.0) + 1.0
        w = scaled(y, 4.0, **{"bias": 0.125})
        return z + w
