# A submodule whose class overrides __call__ (found by the fifth blind
# test): self.s(x) runs Scaler.__call__ (h * 3.0); the import inlined
# forward (h * 2.0), with no error.
import torch
from torch import nn


class Scaler(nn.Module):
    def forward(self, h):
        return h * 2.0

    def __call__(self, h):
        return h * 3.0


class CallOverrideBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.s = Scaler()

    def forward(self, hidden_states):
        return self.s(self.up(hidden_states))
