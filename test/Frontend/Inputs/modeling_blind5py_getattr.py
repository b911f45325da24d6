# getattr(self, name, default) of a module (found by the fifth blind test):
# Python's getattr finds class attributes and methods too, and returns the
# default only when there is no such attribute; the import returned the
# default for anything not set in __init__, with no error.
import torch
from torch import nn


class GetattrClassAttrBlock(nn.Module):
    mult = 3.0  # getattr(self, "mult", 2.0) is 3.0 (the import used 2.0)

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * getattr(self, "mult", 2.0)


class GetattrInitBlock(nn.Module):
    mult = 3.0

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.m = getattr(self, "mult", 2.0)  # 3.0 (the import: 2.0)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.m


class GetattrMethodBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def scale(self, h):
        return h * 3.0

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        fn = getattr(self, "scale", None)  # the bound method (the import: None)
        if fn is not None:
            h = fn(h)
        return h


class GetattrPropertyBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    @property
    def s(self):
        return 3.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * getattr(self, "s", 2.0)  # the property: 3.0
