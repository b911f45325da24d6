# Assigning an attribute that is a property with a setter runs the setter
# (found by the fifth blind test): self.s = 1.5 stores _s = 3.0 and self.s
# reads 3.0; the import stored 1.5 as an instance attribute and read it
# back, in __init__ and in forward, with no error.
import torch
from torch import nn


class PropertySetterInitBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.s = 1.5

    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, v):
        self._s = v * 2.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.s


class PropertySetterForwardBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self._s = 1.0

    @property
    def s(self):
        return self._s

    @s.setter
    def s(self, v):
        self._s = v * 2.0

    def forward(self, hidden_states):
        self.s = 1.5
        return self.up(hidden_states) * self.s
