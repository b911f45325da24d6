import torch
from torch import nn


class ChunkBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.up = nn.Linear(h, 66, bias=False)
        self.down = nn.Linear(22, h, bias=False)

    def forward(self, hidden_states):
        y = self.up(hidden_states)                 # [1, T, 66]
        a, b, c = y.chunk(3, dim=-1)               # 22 each
        p, q, r = torch.split(y, 24, dim=-1)       # 24, 24, 18
        u, v = y[..., :64].chunk(3, -1)[1:]        # 64 into 3: 22, 22, 20 -> take [22, 20]
        w = torch.chunk(y[..., :43], 2, dim=2)[1]  # 43 into 2: 22, 21 -> second is 21 wide
        out = a + b * 0.5 - c * 0.25 + p[..., :22] + q[..., 2:] * 0.125 + torch.cat([r, r[..., :4]], dim=-1)
        out = out + u * 0.1 
        out = out + torch.cat([v, w[..., :2]], dim=-1) * 0.3
        return self.down(out)
