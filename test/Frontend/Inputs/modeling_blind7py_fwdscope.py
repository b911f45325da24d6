import torch
import torch.nn.functional as F
from torch import nn

FACTORS = (0.5, 2.0, 4.0)


def helper(x, factors=FACTORS):
    out = x
    for i, f in enumerate(factors):
        out = out + x * f
    return out * i                       # i leaks: 2


class FwdScope(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.a = nn.Linear(h, h, bias=False)
        self.b = nn.Linear(h, h, bias=False)
        self.layers = [self.a, self.b]   # plain list of modules

    def forward(self, hidden_states):
        x = hidden_states
        ys = [layer(x) for layer in self.layers]
        y0, y1 = ys
        z = helper(y0) if len(ys) == 2 else y1
        for layer in self.layers:
            w = layer(z)
        t = w                            # last layer: b
        x, y = y1, x                     # swap of tensors
        mix = {"p": x, "q": y}
        s = mix.get("q") * 2.0 + mix["p"]
        acc = t
        for k in sorted(mix.keys(), reverse=True) if False else ["q", "p"]:
            acc = acc + mix[k] * (3.0 if k == "q" else 1.0)
        return s + acc
