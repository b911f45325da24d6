"""Blind round 9: an RMSNorm whose eps is config.rms_norm_eps, for a Mixtral
config.json without that key (MixtralConfig's default is 1e-5, not
LlamaConfig's 1e-6)."""
import torch
from torch import nn


class MixtralRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = MixtralRMSNorm(config.hidden_size, eps=config.rms_norm_eps)

    def forward(self, hidden_states):
        return self.norm(hidden_states)
