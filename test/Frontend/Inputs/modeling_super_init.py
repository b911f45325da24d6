# A subclass whose __init__ calls the __init__ of a class of the file
# (found by the blind test: MiniCPM3's MiniCPMLongRoPE, Exaone's
# ExaoneSdpaAttention are written so). PyTorch runs the base class's
# __init__; the frontend took super().__init__(...) for nn.Module's and
# skipped it, so what the base __init__ sets was missing (an error at the
# use) or, as here, something else was read instead, silently:
# - DerivedClassAttr: `self.scale` fell back to Base's class attribute
#   (1.0) instead of what Base.__init__ sets (2.0);
# - DerivedSetFirst: the value the subclass set before super().__init__
#   (1.0), which Base.__init__ overwrites (2.0) in PyTorch.
# Both imported, ran, and were off by a factor 2 (5.0e-01 of the largest
# output). The other forms: super(Cls, self).__init__, Base.__init__(self,
# ...), and two levels (Leaf -> Mid -> Base: Mid's super() is Base's).
import torch
from torch import nn


class Base(nn.Module):
    scale = 1.0

    def __init__(self, config):
        super().__init__()
        self.scale = 2.0


class DerivedClassAttr(Base):
    def __init__(self, config):
        super().__init__(config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.scale


class BaseSetsScale(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.scale = 2.0


class DerivedSetFirst(BaseSetsScale):
    def __init__(self, config):
        self.scale = 1.0
        super().__init__(config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.scale


class DerivedSuperArgs(Base):
    def __init__(self, config):
        super(DerivedSuperArgs, self).__init__(config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.scale


class DerivedExplicit(Base):
    def __init__(self, config):
        Base.__init__(self, config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.scale


class Mid(Base):
    def __init__(self, config):
        super().__init__(config)
        self.shift = self.scale + 1.0


class Leaf(Mid):
    def __init__(self, config):
        super().__init__(config)
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.shift
