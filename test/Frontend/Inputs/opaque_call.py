import torch
from torch import nn


class Hooked(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.a = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.b = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        x = self.a(hidden_states)
        torch.my_custom_hook(hidden_states)
        hidden_states.mul_(2)
        return x + self.b(hidden_states)
