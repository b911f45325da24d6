# Casts to another float type (found by the fifth blind test). In PyTorch a
# cast to another dtype rounds (to bf16 / f16 in an f32 model) and makes a
# new tensor, so an in-place write to the result does not reach the source;
# the import took .to(dtype) / .type(dtype) / .float() as no ops: no
# rounding, and the result an alias of the source, with no error.
import torch
from torch import nn


class ToBf16Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        return h.to(torch.bfloat16).to(torch.float32)  # rounded to bf16


class TypeF16Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        return h.type(torch.float16).type_as(hidden_states)  # rounded to f16


class CastCopyInplaceBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        y = h.to(torch.bfloat16)  # a new tensor: h is not changed below
        y.mul_(3.0)
        return h


class FloatCopyBf16Block(nn.Module):
    """Imported with --dtype bf16 (torch_ref --compute bf16): h.float() of a
    bf16 tensor is a new f32 tensor; the import aliased it to h."""

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        y = h.float()
        y.mul_(3.0)
        return h


class WidenCopyBlock(nn.Module):
    """f32 import: .double() is a new tensor (f64 in PyTorch); a write to it
    does not reach h, and a cast back is a new tensor again."""

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        y = h.double()
        y.mul_(3.0)
        z = y.to(torch.float32)
        z.add_(1.0)
        return h + y.float() + z


class SameDtypeAliasBlock(nn.Module):
    """f32 import: .float() / .to(x.dtype) of an f32 tensor is the tensor
    itself: the in-place write through it reaches h."""

    def __init__(self, config):
        super().__init__()
        self.up = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        h = self.up(hidden_states)
        y = h.float().to(hidden_states.dtype)
        y.mul_(3.0)
        return h
