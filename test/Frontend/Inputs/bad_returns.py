# What forward returns, when it is not a tensor tx can return: the error
# points at the return statement that returned it (inline-errors.test).
import torch
from torch import nn


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def heads(self, x):
        return self.proj(x).view(1, -1, 4, 16).transpose(1, 2)


class ReturnsTransposed(Base):
    def forward(self, hidden_states):
        h = self.heads(hidden_states)
        if h is None:
            return hidden_states
        return h


class NoReturn(Base):
    def forward(self, hidden_states):
        self.heads(hidden_states)
