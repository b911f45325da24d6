# Arguments the frontend cannot honour: each an error at the call
# (errors.test), never dropped.
import torch
import torch.nn.functional as F
from torch import nn


class Rounding(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.a_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        a = self.a_proj(hidden_states)
        return torch.div(a, 3.0, rounding_mode="floor")


class UnknownKeyword(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.a_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        a = self.a_proj(hidden_states)
        return a.add(a, beta=2)


class Positional(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.a_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        a = self.a_proj(hidden_states)
        return F.silu(a, True, 3)


class CatIntoInput(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.a_proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        a = self.a_proj(hidden_states)
        b = a.clone()
        return torch.cat([a[..., :8], b[..., :8]], dim=-1, out=b)
