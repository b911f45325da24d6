import math
import torch
from torch import nn


class ArithBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.proj = nn.Linear(h, h, bias=False)
        s = [
            -7 // 2,            # -4
            7 % -3,             # -2
            -7 % 3,             # 2
            round(2.5),         # 2 (banker's)
            round(3.5),         # 4
            round(0.125, 2),    # 0.12
            int(-2.7),          # -2
            -2 ** 2,            # -4
            2 ** -1,            # 0.5
            True + True,        # 2
            0 or 2.5,           # 2.5
            3 and 0.5,          # 0.5
            None or 0 or 3,     # 3
            1 if [] else 2,     # 2
            float(isinstance(True, int)),  # 1.0
            float(isinstance(1.0, int)),   # 0.0
            float((1, 2) < (1, 3)),        # 1.0
            math.floor(-0.5),   # -1
            math.ceil(-0.5),    # 0
            abs(-3) * 0.25,     # 0.75
            len("abc"[::-1] * 2),  # 6
            int("3") + float("1e-1"),  # 3.1
            min([], default=7),  # 7
            10 / 4,              # 2.5
            10 // 4.0,           # 2.0
            -(-9 // 4),          # 3 ceil div
            int(1e3 == 1000),    # 1
            1 << 3,              # 8
            -17 >> 2,            # -5
            5 ^ 3,               # 6
            math.fmod(-7, 3),    # -1.0
            sum([0.5] * 3),      # 1.5
            float(bool(0.0)),    # 0.0
            math.log2(8) + math.sqrt(16),  # 7.0
        ]
        self.weights = s

    def forward(self, hidden_states):
        y = self.proj(hidden_states)
        out = hidden_states
        for i, w in enumerate(self.weights):
            out = out + y * (w * 0.01 * (i + 1))
        return out
