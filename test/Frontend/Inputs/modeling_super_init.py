# A subclass whose __init__ calls super().__init__(config) of a class of
# the file (found by the blind test: MiniCPM3's MiniCPMLongRoPE, Exaone's
# ExaoneSdpaAttention are written so). PyTorch runs the base class's
# __init__; the frontend treats that super().__init__(...) as
# nn.Module's and skips it, so what the base __init__ sets is missing
# (an error at the use: "module 'X' has no attribute ... (set in __init__)")
# or, as here, something else is read instead, silently:
# - DerivedClassAttr: `self.scale` falls back to Base's class attribute
#   (1.0) instead of what Base.__init__ set (2.0);
# - DerivedSetFirst: the value the subclass set before super().__init__
#   (1.0), which Base.__init__ overwrites (2.0) in PyTorch.
# Both import, run, and are off by a factor 2 (5.0e-01 of the largest output).
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
