import torch
from torch import nn


class StarUnpack(nn.Module):
    def __init__(self, config):
        super().__init__()
        first, *middle, last = [0.5, 2.0, 3.0, 4.0, 1.5]
        *lead, tail = (config.hidden_size,)
        self.scale = first * last * pow(2, 3) / divmod(17, 4)[0] * sorted([3.0, 0.5])[0]  # 0.75
        self.middle = middle               # [2.0, 3.0, 4.0]
        self.width = tail + len(lead)      # hidden_size
        self.proj = nn.Linear(config.hidden_size, self.width, bias=False)
        self.gate = nn.Linear(config.hidden_size, self.width, bias=False)

    def forward(self, hidden_states):
        a, *rest = self.proj(hidden_states), self.gate(hidden_states), self.middle[1]
        g, k = rest
        x, *_ = [a * k]
        return x * self.scale + g * self.middle[-1]
