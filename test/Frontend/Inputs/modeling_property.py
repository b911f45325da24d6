# A @property read in forward (found by the second blind test): PyTorch calls
# it; the value here is False (config.use_double), so the output is up(x).
import torch
from torch import nn


class PropertyFlagBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    @property
    def is_sliding(self):
        return self.config.use_double

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        if self.is_sliding:
            h = h * 2.0
        return h
