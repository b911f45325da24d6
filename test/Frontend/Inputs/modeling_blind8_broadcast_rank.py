import torch
from torch import nn


class BroadcastRankDim(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.a = nn.Linear(h, h, bias=False)
        self.b = nn.Linear(h, h, bias=False)

    def forward(self, hidden_states):
        x = self.a(hidden_states)                      # [1, T, 16]
        y = x + self.b(hidden_states).unsqueeze(0)     # [1, T, 16] + [1, 1, T, 16] -> [1, 1, T, 16]
        if y.dim() == 4:                               # PyTorch: taken
            y = y[0] * 2.0
        return y


class BroadcastRankParam(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.a = nn.Linear(h, h, bias=False)
        self.scale = nn.Parameter(torch.randn(h))

    def forward(self, hidden_states):
        x = self.a(hidden_states)
        y = x * self.scale.view(1, 1, 1, -1)           # [1, 1, T, 16]
        return (y * 3.0)[0] if y.ndim == 4 else y     # PyTorch: the first
