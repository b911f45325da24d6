"""Errors of the tenth round's forms: unbind and unflatten of the token
dimension, a number divided by a tensor, OrderedDict of non-pairs."""
from collections import OrderedDict
import torch
from torch import nn


class UnbindTokens(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden_states):
        parts = self.proj(hidden_states).unbind(1)
        return parts[0]


class UnflattenTokens(UnbindTokens):
    def forward(self, hidden_states):
        return self.proj(hidden_states).unflatten(1, (2, 8))


class NumberOverTensor(UnbindTokens):
    def forward(self, hidden_states):
        return 2 / self.proj(hidden_states)


class NotPairs(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.mlp = nn.Sequential(OrderedDict([nn.Linear(config.hidden_size, config.hidden_size)]))

    def forward(self, hidden_states):
        return self.mlp(hidden_states)


class TypeOfTensor(UnbindTokens):
    def forward(self, hidden_states):
        out = self.proj(hidden_states)
        if type(out) is not tuple:
            out = (out,)
        return out[0]


class NestedDecorated(UnbindTokens):
    def forward(self, hidden_states):
        @staticmethod
        def twice(x):
            return x + x
        return twice(self.proj(hidden_states))


class Closure(UnbindTokens):
    """A closure reads its defining scope as it is when it runs (here after
    scale changed), as Python's."""

    def forward(self, hidden_states):
        scale = 2.0

        def scaled(x):
            return x * scale
        scale = 3.0
        return scaled(self.proj(hidden_states))
