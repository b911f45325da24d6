# Class-body statements and default values (found by the third blind
# test): Python runs a class body in order (the last binding of a name is
# the class attribute) and evaluates a default argument once, when its def
# runs; the import used the first binding of a class attribute and the
# module name's latest value for the default, with no error.
import torch
from torch import nn

SCALE = 2.0


def scaled(x, s=SCALE):  # s is 2.0: the default is evaluated here
    return x * s


SCALE = 5.0


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)


class ClassAttrTwiceBlock(Base):
    k = 2.0
    k = 3.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


class ClassAttrAugBlock(Base):
    k = 2.0
    k *= 3.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


class DefaultAtDefBlock(Base):
    def forward(self, hidden_states):
        return scaled(self.up(hidden_states))


class DefaultMethodBlock(Base):
    # A method's defaults are evaluated when the class body runs its def:
    # SCALE is 5.0 here (s 5.0, t 6.0), whatever SCALE is later.
    def scale(self, x, s=SCALE, *, t=SCALE + 1.0):
        return x * s + x * t

    def forward(self, hidden_states):
        return self.scale(self.up(hidden_states))


SCALE = 7.0
