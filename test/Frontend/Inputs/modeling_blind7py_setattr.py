import torch
import torch.nn.functional as F
from torch import nn


class TinyRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class SetattrBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.gate = nn.Linear(h, i, bias=False)
        self.up = nn.Linear(h, i, bias=False)
        self.down = nn.Linear(i, h, bias=False)
        self.extra = nn.ModuleList([TinyRMSNorm(h)])
        self.proj_a = nn.Linear(h, h, bias=False)
        self.proj_b = nn.Linear(h, h, bias=False)
        self.post = nn.Linear(h, h, bias=True)

    def forward(self, hidden_states):
        g = getattr(self, "gate")(hidden_states)
        u = self.up(hidden_states)
        out = self.down(F.silu(g) * u)
        for mod in self.extra:
            out = mod(out)
        for n in ("a", "b"):
            out = out + getattr(self, f"proj_{n}")(hidden_states)
        return self.post(out)
