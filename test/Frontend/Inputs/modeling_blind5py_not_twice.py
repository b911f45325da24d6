# `not f(h)` runs f once (found by the fifth blind test): the import
# evaluated the operand of `not` twice, so check's in-place h.mul_(2.0) ran
# twice (h * 4.0 for h * 2.0), with no error.
import torch
from torch import nn


def check(t):
    t.mul_(2.0)
    return False


class NotTwiceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if not check(h):
            h = h + 1.0
        return h
