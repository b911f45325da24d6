# A keyword naming a positional-only parameter goes to **kw (found by the
# fifth blind test): f(h, s=3.0) with def f(h, s=2.0, /, **kw) leaves s at
# its default 2.0 (kw = {"s": 3.0}); the import bound s = 3.0, no error.
import torch
from torch import nn


def f(h, s=2.0, /, **kw):
    return h * s


class PosonlyKwargsBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return f(self.up(hidden_states), s=3.0)
