import torch
from torch import nn


class Sub(nn.Module):
    tags = ["a"]          # shared, mutable
    count = 0

    def __init__(self, h):
        super().__init__()
        self.tags += ["b"]            # extends the class's list in place (then binds self.tags to it)
        pass
        self.idx = 1
        self.n = len(self.tags)       # 2, then 3
        self.proj = nn.Linear(h, h, bias=False)

    def forward(self, x):
        return self.proj(x) * (self.n * 10 + self.idx)


class ClassAttrBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.first = Sub(config.hidden_size)
        self.second = Sub(config.hidden_size)

    def forward(self, hidden_states):
        # first: 21, second: 31; first.tags is the same list: len 3 now
        return self.first(hidden_states) + self.second(hidden_states) + hidden_states * len(self.first.tags)
