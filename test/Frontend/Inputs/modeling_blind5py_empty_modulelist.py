# An empty nn.ModuleList is false (found by the fifth blind test:
# `if self.extra:` is not taken, as len() is 0); the import took it as true
# (h * 2.0), with no error.
import torch
from torch import nn


class EmptyModuleListBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.extra = nn.ModuleList([])

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if self.extra:
            h = h * 2.0
        return h


class NotEmptyModuleListBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.extra = nn.ModuleList()

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if not self.extra:  # taken
            h = h * 3.0
        return h


class IfExpEmptyModuleListBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.extra = nn.ModuleList([])

    def forward(self, hidden_states):
        return self.up(hidden_states) * (2.0 if self.extra else 3.0)  # 3.0
