import torch
from torch import nn

SCALE = 2.0
OFFSET = 0.5


def bump():
    global OFFSET
    OFFSET = OFFSET * 4      # runs at import below: 2.0


OFFSET = OFFSET * 4


class ScopeBlock(nn.Module):
    SCALE = 3.0                           # class attribute: methods see the module's SCALE
    doubled = SCALE * 2                   # class body sees its own SCALE: 6.0

    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.proj = nn.Linear(h, h, bias=False)
        for i in range(3):
            pass
        self.last_i = i                   # 2
        a, b, c = 0, [1, 2, 3], 4
        (d, e), f = (1, 2), 3
        d, e = e, d                       # 2, 1
        self.m = a + len(b) + c + d * 10 + e * 100 + f * 1000   # 0+3+4+20+100+3000 = 3127
        x = y = 0.25
        y += 1.0                          # x stays 0.25 (floats are immutable)
        self.xy = x + y                   # 1.5
        j = 2
        self.j = j                        # 2
        k = 5
        self.w = [k, k + 1][1]
        self.k = k

    def forward(self, hidden_states):
        y = self.proj(hidden_states) * SCALE                 # 2.0
        y = y + hidden_states * self.SCALE                   # 3.0
        y = y * (self.doubled / 6.0) + 2.0 * OFFSET          # + 4.0
        y = y * (self.last_i + self.j) / 4.0                 # * 1
        return y + hidden_states * (self.m / 3127.0 + self.xy + self.w - self.k)   # 1 + 1.5 + 1
