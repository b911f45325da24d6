import torch
from torch import nn


class SliceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.up = nn.Linear(h, 2 * h, bias=False)   # 128
        self.down = nn.Linear(h, h, bias=False)

    def forward(self, hidden_states):
        y = self.up(hidden_states)                 # [1, T, 128]
        a = y[..., -64:]                           # last 64
        b = y[..., :-64]                           # first 64
        c = y[..., 32:-32]                         # middle 64
        d = y[..., 40:200]                         # clamps: 88 -> [40:128]
        d = d[..., :64]                            # 40..104
        e = y[..., -200:64]                        # clamps: 0..64
        return self.down(a * 0.5 + b * 0.25 + c * 2.0 + d - e * 0.125)
