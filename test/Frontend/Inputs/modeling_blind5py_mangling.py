# Private names (__k) are mangled by the class that writes them (found by
# the fifth blind test): Base's self.__k is self._Base__k, the subclass's is
# self._MangledAttrBlock__k, so Base.forward reads 2.0; and Base's
# self.__scale(...) calls Base._Base__scale (h * 2.0), not the subclass's
# __scale. The import did not mangle: it read 3.0 and called the
# subclass's method (h * 3.0), with no error.
import torch
from torch import nn


class AttrBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.__k = 2.0

    def forward(self, hidden_states):
        return self.up(hidden_states) * self.__k


class MangledAttrBlock(AttrBase):
    def __init__(self, config):
        super().__init__(config)
        self.__k = 3.0  # self._MangledAttrBlock__k: AttrBase.forward reads 2.0


class MethodBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def __scale(self, h):
        return h * 2.0

    def forward(self, hidden_states):
        return self.__scale(self.up(hidden_states))  # MethodBase._MethodBase__scale


class MangledMethodBlock(MethodBase):
    def __scale(self, h):
        return h * 3.0
