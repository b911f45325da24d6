# *RMSNorm classes of the file with unusual but legitimate bodies
# (rmsnorm-body-torch.test): such a class is translated (its __init__ run,
# its forward read), not taken by its name, so what its body computes is
# what tx computes.
import torch
from torch import nn


class ScaledRMSNorm(nn.Module):
    """Baichuan's eps name (epsilon), Gemma's (1 + weight) in float32, and a
    scale after the norm."""

    def __init__(self, hidden_size, epsilon=1e-6, scale=1.0):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(hidden_size))
        self.epsilon = epsilon
        self.scale = scale

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.epsilon)
        return (hidden_states * (1 + self.weight.float())).to(input_dtype) * self.scale


class ResidualRMSNorm(nn.Module):
    """eps set in __init__ (not an argument), the norm written with
    1 / sqrt, weighted, and the unweighted norm added back."""

    def __init__(self, hidden_size):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = 0.5

    def forward(self, x):
        normed = x * (1.0 / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))
        return self.weight * normed + normed


class InplaceRMSNorm(nn.Module):
    """(1 + weight) computed before the norm and written in place: not the
    norm's (1 + weight) any more, a tx.binary mul after the norm."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x):
        scale = 1.0 + self.weight
        scale.mul_(2.0)
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return normed * scale


class ScaledBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.norm = ScaledRMSNorm(64, epsilon=0.25, scale=2.0)

    def forward(self, hidden_states):
        return self.norm(self.up(hidden_states))


class ResidualBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.norm = ResidualRMSNorm(64)

    def forward(self, hidden_states):
        return self.norm(self.up(hidden_states))


class InplaceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.norm = InplaceRMSNorm(64)

    def forward(self, hidden_states):
        return self.norm(self.up(hidden_states))
