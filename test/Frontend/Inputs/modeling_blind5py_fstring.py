# f-strings in __init__/forward with a format spec or a conversion (found by
# the fifth blind test): f"s{0:02d}" is "s00" and f"{'a'!r}" is "'a'"; the
# import dropped both ("s0", "a") and read the other entry of the dict, with
# no error (at module level they were right).
import torch
from torch import nn

SCALES = {"s00": 3.0, "s0": 2.0, "'a'": 3.0, "a": 2.0}


class FstringSpecBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.i = 0

    def forward(self, hidden_states):
        return self.up(hidden_states) * SCALES[f"s{self.i:02d}"]


class FstringConversionBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.name = "a"

    def forward(self, hidden_states):
        return self.up(hidden_states) * SCALES[f"{self.name!r}"]
