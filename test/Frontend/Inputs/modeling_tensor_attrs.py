# Tensor attributes that are not methods (found by the second blind test):
# `t.ndim`, `t.requires_grad`, `t.is_cuda`, `t.dtype ==` (HF: `attention_mask.ndim == 4`,
# `input.is_cuda`). PyTorch gives 3 / False / False here (no_grad, CPU); each
# block doubles its output only where PyTorch would not.
import torch
from torch import nn


class NdimBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if h.ndim == 3:
            h = h * 2.0
        return h


class RequiresGradBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if h.requires_grad:
            h = h * 2.0
        return h


class IsCudaBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if hidden_states.is_cuda:
            h = h * 2.0
        return h


class MaskNdimBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None):
        h = self.up(hidden_states)
        if attention_mask is not None and attention_mask.ndim != 4:
            h = h * 2.0
        return h


class DtypeBlock(nn.Module):
    """`t.dtype` compared with the import's dtype (f32): PyTorch True."""

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if h.dtype == torch.float32:
            h = h * 2.0
        return h
