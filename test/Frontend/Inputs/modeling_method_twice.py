# A method defined twice in a class (found by the third blind test): Python
# binds the last definition (h * 3.0); the import called the first
# (h * 2.0), with no error.
import torch
from torch import nn


class MethodTwiceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def scale(self, h):
        return h * 2.0

    def scale(self, h):
        return h * 3.0

    def forward(self, hidden_states):
        return self.scale(self.up(hidden_states))
