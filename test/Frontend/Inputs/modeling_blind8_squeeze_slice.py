import torch
from torch import nn


class SqueezeHeadCat(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.heads = config.num_attention_heads
        self.hd = h // self.heads
        self.a = nn.Linear(h, h, bias=False)

    def forward(self, hidden_states):
        x = self.a(hidden_states).view(1, -1, self.heads, self.hd)   # [1, T, 4, 4]
        p = x[:, :, :1].squeeze(2)                                   # head 0: [1, T, 4]
        q = x[:, :, 3:].squeeze(2)                                   # head 3: [1, T, 4]
        z = torch.cat([q, p], dim=2)                                 # [1, T, 8]: head 3, head 0
        return torch.cat([z, z], dim=-1)                             # [1, T, 16]


class SqueezeSplitLinear(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.heads = config.num_attention_heads
        self.hd = h // self.heads
        self.a = nn.Linear(h, h, bias=False)
        self.c = nn.Linear(self.hd, h, bias=False)

    def forward(self, hidden_states):
        x = self.a(hidden_states).view(1, -1, self.heads, self.hd)
        p, _ = x.split([1, 3], dim=2)                                # p [1, T, 1, 4]
        return self.c(p.squeeze(2))                                  # [1, T, 16]


class SqueezeLastNorm(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.heads = config.num_attention_heads
        self.hd = h // self.heads
        self.a = nn.Linear(h, h, bias=False)

    def forward(self, hidden_states):
        x = self.a(hidden_states).view(1, -1, self.heads, self.hd)
        y = x[..., :1].squeeze(-1)                     # [1, T, heads]: feature 0 of every head
        v = y.pow(2).mean(-1, keepdim=True)            # over the heads
        y = y * torch.rsqrt(v + 1e-6)
        return y.reshape(1, -1, self.heads)
