import torch
from torch import nn


class HeadScale(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.heads = config.num_attention_heads
        self.v = nn.Linear(h, h, bias=False)
        self.head_scale = nn.Parameter(torch.ones(self.heads))

    def forward(self, hidden_states):
        v = self.v(hidden_states).view(1, -1, self.heads, 4)     # [1, T, heads 4, head_dim 4]
        v = v * self.head_scale.unsqueeze(-1)                    # [4, 1]: one scale per head
        return v.view(1, -1, 16)


class HeadScaleIndex(HeadScale):
    def forward(self, hidden_states):
        v = self.v(hidden_states).view(1, -1, self.heads, 4)
        v = v * self.head_scale[:, None]                         # Mamba2's `self.D[..., None]` form
        return v.view(1, -1, 16)


class HeadDimScale(HeadScale):
    def forward(self, hidden_states):
        v = self.v(hidden_states).view(1, -1, self.heads, 4)
        v = v * self.head_scale.view(1, 1, 1, -1)                # [1, 1, 1, 4]: along head_dim
        return v.view(1, -1, 16)


class TokenGate(HeadScale):
    def forward(self, hidden_states):
        g = self.v(hidden_states)[..., :1]                       # [1, T, 1]: one gate per token
        return self.v(hidden_states) * g
