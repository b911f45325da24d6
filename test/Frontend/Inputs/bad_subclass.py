# Forms around nn.Linear subclasses, in-place changes of attention scores
# and autocast regions that tx does not support: each is an error at its
# line (errors.test), never another model.
import math

import torch
import torch.nn.functional as F
from torch import nn


class WeightLinear(nn.Linear):
    def forward(self, input):
        # Not x @ W^T: W is [out, in].
        return input @ self.weight


class WeightProduct(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = WeightLinear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.proj(hidden_states)


class StaleScores(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask):
        q = self.q_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        k = self.k_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        v = self.v_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        scores = q @ k.transpose(-1, -2)
        before = scores.float()
        scores /= math.sqrt(16)
        probs = F.softmax(before + attention_mask, dim=-1)
        return (probs @ v).transpose(1, 2).reshape(1, -1, 64)


class Autocast(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        with torch.autocast(hidden_states.device.type):
            return self.proj(hidden_states)
