import torch
import torch.nn.functional as F
from torch import nn


class Scale(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c

    def forward(self, x):
        return x * self.c


class ListSliceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.layers = nn.ModuleList([nn.Linear(h, h, bias=False) for _ in range(4)])
        self.scales = nn.ModuleList([Scale(0.1 * (i + 1)) for i in range(4)])

    def forward(self, hidden_states):
        x = hidden_states
        for layer in self.layers[::-1]:             # 3, 2, 1, 0
            x = F.silu(layer(x))
        for layer, sc in zip(self.layers[1:], self.scales[-3:]):
            x = x + sc(layer(x))
        x = x + self.scales[-1](self.layers[-2](x))
        outs = [sc(x) for sc in self.scales[::2]]   # 0.1, 0.3
        return outs[0] - outs[-1] + x * len(self.layers)


class SequentialBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.mlp = nn.Sequential(
            nn.Linear(h, 2 * h),
            nn.GELU(),
            nn.Linear(2 * h, h),
        )

    def forward(self, hidden_states):
        return self.mlp(hidden_states) + self.mlp[0](hidden_states)[..., :64]


class NestedListBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.blocks = nn.ModuleList(
            [nn.ModuleList([nn.Linear(h, h, bias=False), nn.Linear(h, h, bias=True)]) for _ in range(2)]
        )

    def forward(self, hidden_states):
        x = hidden_states
        for i, (a, b) in enumerate(self.blocks):
            x = x + b(F.relu(a(x))) * (0.5 ** i)
        return x
