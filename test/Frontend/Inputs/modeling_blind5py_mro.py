# Python's method resolution order (C3) with several bases of the file
# (found by the fifth blind test): class B(L, R) with L(A) and R(A) looks in
# B, L, R, A; the import followed first bases only (B, L, A), so R's method,
# class attribute and __init__ (reached by L's cooperative super().__init__)
# were skipped, with no error.
import torch
from torch import nn


class MethodA(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def scale(self, h):
        return h * 2.0

    def forward(self, hidden_states):
        return self.scale(self.up(hidden_states))


class MethodL(MethodA):
    pass


class MethodR(MethodA):
    def scale(self, h):
        return h * 3.0  # MRO: DiamondMethodBlock, MethodL, MethodR, MethodA


class DiamondMethodBlock(MethodL, MethodR):
    pass


class AttrA(nn.Module):
    k = 2.0

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k


class AttrL(AttrA):
    pass


class AttrR(AttrA):
    k = 3.0


class DiamondAttrBlock(AttrL, AttrR):
    pass


class InitA(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k = 2.0


class InitL(InitA):
    def __init__(self, config):
        super().__init__(config)  # InitR.__init__ for a DiamondInitBlock


class InitR(InitA):
    def __init__(self, config):
        super().__init__(config)
        self.k = 3.0


class DiamondInitBlock(InitL, InitR):
    def __init__(self, config):
        super().__init__(config)

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.k
