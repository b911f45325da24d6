# Truth values the import does not know (an imported flag, a module of the
# file with __len__) are errors; comprehensions with several generators and
# ifs (dict, set, list) evaluate as Python does.
import torch
from torch import nn
from transformers.utils import SOME_FLAG


class Sized(nn.Module):
    def __init__(self):
        super().__init__()
        self.n = 0

    def __len__(self):
        return self.n

    def forward(self, x):
        return x


class FlagBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if SOME_FLAG:
            h = h * 2.0
        return h


class SizedBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.extra = Sized()

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if not self.extra:
            h = h * 2.0
        return h


class CompBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.scales = {k: v for k, v in zip(["a", "b", "c"], [1.0, 2.0, 3.0]) if k != "b"}
        self.order = [i * j + 1 for i in range(1, 3) for j in range(2) if j]

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        return h * self.scales["c"] * sum(self.order) * len({x % 2 for x in [1, 2, 3]})
