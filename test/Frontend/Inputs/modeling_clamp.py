# The clamp forms (clamp-torch.test): Tensor.clamp/clamp_/clip/clamp_min/
# clamp_max and torch.clamp/clip/clamp_min/clamp_max, with positional and
# keyword bounds, one bound, min > max, out= and in place on a view.
import torch
from torch import nn


class ClampBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.clip = 0.25

    def forward(self, hidden_states):
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states)
        q.clamp_(min=-self.clip, max=self.clip)
        a = k.clamp(-0.5, 0.3)
        b = torch.clamp(k, max=0.1)
        c = torch.clip(k, -0.2)
        d = k.clamp_min(0.05) + k.clamp_max(-0.05)
        e = torch.clamp(k, 0.4, -0.4)  # min > max: every element is max
        f = k * 0.0
        torch.clamp(k, min=-0.1, max=0.2, out=f)
        g = k * 1.0
        g[..., :8].clamp_(0.0, 0.1)  # a view written in place
        h = torch.clamp_min(k, 0.0) - torch.clamp_max(k, 0.0) + k.clip(max=1.0).clip_(min=-1)
        return q + a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h


class ClampErrorTensorBound(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        q = self.q_proj(hidden_states)
        return q.clamp(min=hidden_states)


class ClampErrorNoBound(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return torch.clamp(self.q_proj(hidden_states))
