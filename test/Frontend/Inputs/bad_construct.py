import torch
from torch import nn


class Looping(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        while True:
            hidden_states = self.proj(hidden_states)
        return hidden_states


class TensorType(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        if isinstance(hidden_states, torch.LongTensor):
            hidden_states = hidden_states.float()
        return self.proj(hidden_states)


class IsinstanceArity(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        assert isinstance(hidden_states)
        return self.proj(hidden_states)
