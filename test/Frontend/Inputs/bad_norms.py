# Norm forms tx has no op for, one class each (errors.test).
import torch
from torch import nn


class NoAffine(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = nn.LayerNorm(config.hidden_size, elementwise_affine=False)

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class TwoDims(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = nn.LayerNorm((4, config.hidden_size // 4))

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class OffsetLayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        return nn.functional.layer_norm(x, x.shape[-1:], 1 + self.weight, self.bias, self.eps)


class OffsetBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = OffsetLayerNorm(config.hidden_size)

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class TwoOffsetsRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim))
        self.eps = eps

    def forward(self, x):
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        if x.shape[0] > 1:
            return x * (1 + self.weight)
        return x * (self.weight + 2)


class TwoOffsets(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = TwoOffsetsRMSNorm(config.hidden_size)

    def forward(self, hidden_states):
        return self.norm(hidden_states)


class NoWeightBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.size = config.hidden_size

    def forward(self, hidden_states):
        return nn.functional.layer_norm(hidden_states, (self.size,))


class TwoDimBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(4, config.hidden_size // 4))

    def forward(self, hidden_states):
        x = hidden_states.view(1, -1, 4, 16)
        return nn.functional.layer_norm(x, (4, 16), self.weight).view(1, -1, 64)
