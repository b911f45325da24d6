"""Blind round 9: tanh and sigmoid (torch.*, F.*, methods, in-place, out=,
nn.Tanh/nn.Sigmoid), x ** 3 and torch.pow(x, 3.0) ((x * x) * x, as PyTorch),
math.pi and math.e in forward, and HF's NewGELUActivation written out
(0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))))."""
import math
import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.up = nn.Linear(64, 160, bias=False)
        self.down = nn.Linear(160, 64, bias=False)
        self.act = nn.Tanh()
        self.gate = nn.Sigmoid()

    def forward(self, hidden_states):
        u = self.up(hidden_states)
        a = u.tanh() + torch.sigmoid(u) * F.sigmoid(u) + self.act(u) * self.gate(u) + u ** 3
        b = u.clone()
        b.tanh_()
        torch.tanh(u, out=u)
        return self.down(a + b + u + u.sigmoid() + torch.pow(u, 3.0) * math.pi / math.e)


class NewGelu(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.up = nn.Linear(64, 160, bias=False)
        self.down = nn.Linear(160, 64, bias=False)

    def forward(self, hidden_states):
        u = self.up(hidden_states)
        return self.down(0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * torch.pow(u, 3.0)))))
