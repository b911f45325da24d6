# Module-level statements the frontend cannot evaluate, each changing a name
# forward reads (module-level-unknown.test): Python runs them at import;
# the frontend makes what they may change unknown, and a read of it is an
# error naming the statement, never the value before it.
import random

import torch
from torch import nn

SCALE = 2.0


def set_scale():
    global SCALE
    SCALE = 3.0


set_scale()  # a function of the file that declares `global SCALE`

ITEMS = [2.0]
random.shuffle(ITEMS)  # a call the frontend cannot see into gets ITEMS

LOOPED = 2.0
for _ in range(torch.cuda.device_count()):  # a loop over what is not known
    LOOPED *= 2.0

BRANCHED = 2.0
if torch.cuda.is_available():  # a test that is not known
    BRANCHED = 3.0

TRIED = 2.0
try:
    import flash_attn  # noqa: F401
    TRIED = 3.0
except ImportError:
    pass


def scaled(x, s=BRANCHED):  # its default is not known
    return x * s


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)


class GlobalBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * SCALE


class CallBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * ITEMS[0]


class LoopBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * LOOPED


class IfBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * BRANCHED


class TryBlock(Base):
    def forward(self, hidden_states):
        return self.up(hidden_states) * TRIED


class DefaultBlock(Base):
    def forward(self, hidden_states):
        return scaled(self.up(hidden_states))


class PatchedBlock(Base):
    k = 2.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


def patch(cls):
    cls.k = 3.0


patch(PatchedBlock)  # a function of the file that sets attributes of a class
