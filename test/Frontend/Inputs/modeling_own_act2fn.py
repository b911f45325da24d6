# A modeling file with its own ACT2FN dict: its entries decide what
# ACT2FN[config.hidden_act] is, not transformers' table of the same name
# (before, "silu" here imported as tx's silu whatever the file mapped it to).
import torch
import torch.nn.functional as F
from torch import nn


class DoubledSiLU(nn.Module):
    def forward(self, x):
        return F.silu(x) * 2.0


ACT2FN = {"silu": nn.ReLU(), "gelu": DoubledSiLU()}


class ReluBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.act = ACT2FN["silu"]

    def forward(self, hidden_states):
        return self.act(self.up(hidden_states))


class OwnClassBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.act = ACT2FN["gelu"]

    def forward(self, hidden_states):
        return self.act(self.up(hidden_states))


class MissingBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(64, 64, bias=False)
        self.act = ACT2FN["gelu_new"]

    def forward(self, hidden_states):
        return self.act(self.up(hidden_states))
