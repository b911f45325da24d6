# A chained comparison stops at the first false link (found by the fifth
# blind test): in `1 > 2 < check(h)` Python never calls check; the import
# evaluated every operand, so check's h.mul_(2.0) ran, with no error.
import torch
from torch import nn


def check(t):
    t.mul_(2.0)
    return 5


class ChainedCompareBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if 1 > 2 < check(h):
            h = h + 1.0
        return h
