# Norms written out in forward that are not an RMSNorm or LayerNorm of one
# tensor (written-norms-torch.test): each one class, an error at the use.
import torch
from torch import nn


class OtherTensor(nn.Module):
    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        other = hidden_states * 2.0
        return other * torch.rsqrt(variance + 1e-6)


class ReturnsVariance(nn.Module):
    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return variance


class Unbiased(nn.Module):
    def forward(self, hidden_states):
        mean = hidden_states.mean(-1, keepdim=True)
        var = hidden_states.var(-1, keepdim=True)
        return (hidden_states - mean) / torch.sqrt(var + 1e-5)


class EpsOutside(nn.Module):
    def forward(self, hidden_states):
        rms = torch.sqrt(hidden_states.pow(2).mean(-1, keepdim=True))
        return hidden_states / (rms + 1e-6)


class CentredByRms(nn.Module):
    def forward(self, hidden_states):
        mean = hidden_states.mean(-1, keepdim=True)
        ms = hidden_states.pow(2).mean(-1, keepdim=True)
        return (hidden_states - mean) * torch.rsqrt(ms + 1e-5)


class ScaledStatistic(nn.Module):
    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True) * 2.0
        return hidden_states * torch.rsqrt(variance + 1e-6)


class WrittenBetween(nn.Module):
    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states.mul_(2.0)
        return hidden_states * torch.rsqrt(variance + 1e-6)
