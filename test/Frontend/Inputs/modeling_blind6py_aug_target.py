# An augmented assignment to an item or attribute (found by the sixth blind
# test): Python evaluates the target's object and index once (`d[f()] += 1`
# calls f once, `g().v += 1` calls g once) and writes the item it read; the
# import evaluated them twice (once to read, once to write), so a call with a
# side effect ran twice and the sum went to another item, with no error.
import torch
from torch import nn


class AugItemBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def nxt(self):
        self.n += 1
        return self.n

    def forward(self, hidden_states):
        self.n = 0
        d = [1.0, 2.0, 5.0]
        d[self.nxt()] += 1.0  # d == [1, 3, 5], n == 1: 131
        return self.up(hidden_states) * (d[0] + 10 * d[1] + 100 * self.n)


class AugAttrBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v = 1.0

    def get(self):
        self.n += 1
        return self

    def forward(self, hidden_states):
        self.n = 0
        self.get().v += 1.0  # get() once: v == 2, n == 1: 12
        return self.up(hidden_states) * (self.v + 10 * self.n)


class AugAttrItemBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def get(self):
        self.n += 1
        return self

    def forward(self, hidden_states):
        self.n = 0
        self.cache = [1.0, 2.0]
        self.get().cache[0] += 5.0  # n == 1: 6 + 20 + 100
        return self.up(hidden_states) * (self.cache[0] + 10 * self.cache[1] + 100 * self.n)


class AugInitBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.n = 0
        self.cache = {1: 1.0, 2: 5.0}
        self.cache[self.nxt()] *= 3.0  # in __init__: cache == {1: 3, 2: 5}, n == 1
        self.k = self.cache[1] + 10 * self.cache[2] + 100 * self.n

    def nxt(self):
        self.n += 1
        return self.n

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k
