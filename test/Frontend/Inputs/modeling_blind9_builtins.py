"""Blind round 9: a builtin passed to a builtin at import (max(..., key=abs)
had failed with the frontend's own TypeError), and a function of the file
passed to one (a located error)."""
import torch
from torch import nn


def score(v):
    return -v


class KeyAbs(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.up = nn.Linear(64, 160, bias=False)
        self.down = nn.Linear(160, 64, bias=False)
        self.k = max([3, -5, 2], key=abs) + len(sorted([2, -7], key=abs))

    def forward(self, hidden_states):
        return self.down(self.up(hidden_states)) * float(self.k)


class KeyFunction(KeyAbs):
    def __init__(self, config, layer_idx=0):
        super().__init__(config, layer_idx)
        self.k = max([3, -5, 2], key=score)


class BaichuanRMSNorm(nn.Module):
    """Baichuan's RMSNorm: `self.weight.dtype in [torch.float16,
    torch.bfloat16]` (it had been an error naming Python reprs)."""

    def __init__(self, hidden_size, epsilon=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(hidden_size))
        self.epsilon = epsilon

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


class DtypeInList(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.norm = BaichuanRMSNorm(64)
        self.up = nn.Linear(64, 160, bias=False)

    def forward(self, hidden_states):
        return self.up(self.norm(hidden_states))


class DtypeInInts(DtypeInList):
    def forward(self, hidden_states):
        if self.norm.weight.dtype in [1, 2]:
            return hidden_states
        return self.up(hidden_states)
