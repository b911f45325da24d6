# `a += [...]` on a list extends it in place (found by the fifth blind
# test): b = a sees it (len(b) is 2); the import rebound a to a new list
# (len(b) stayed 1), with no error.
import torch
from torch import nn


class ListIaddBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        a = [1.0]
        b = a
        a += [2.0]
        return self.up(hidden_states) * float(len(b))
