# A layer attribute assigned twice in __init__ (found by the third blind
# test): PyTorch's module is the last assignment (a Linear with a bias);
# the import took the first one (no bias), and the checkpoint's up.bias was
# left unused with no error. The same happens when a subclass's __init__
# replaces a layer its base class's __init__ made, or when the second
# assignment is under `if config...:`.
import torch
from torch import nn


class ReassignedLinearBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=True)

    def forward(self, hidden_states):
        return self.up(hidden_states)


class BaseBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)


class SubclassReplacesBlock(BaseBlock):
    def __init__(self, config):
        super().__init__(config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=True)

    def forward(self, hidden_states):
        return self.up(hidden_states)


class ConditionalReplaceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        if config.hidden_size == 64:
            self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=True)

    def forward(self, hidden_states):
        return self.up(hidden_states)
