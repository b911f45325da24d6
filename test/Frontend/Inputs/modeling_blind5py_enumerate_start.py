# enumerate(..., start=1) (found by the fifth blind test): the keyword was
# dropped, so i counted from 0 (the output was 0), with no error.
import torch
from torch import nn


class EnumerateStartBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layers = nn.ModuleList(
            [nn.Linear(config.hidden_size, config.hidden_size, bias=False) for _ in range(2)])

    def forward(self, hidden_states):
        h = hidden_states
        for i, layer in enumerate(self.layers, start=1):
            h = layer(h) * float(i)
        return h
