import torch
import torch.nn.functional as F
from torch import nn


class Base(nn.Module):
    def __init__(self, config):
        super().__init__()
        h = config.hidden_size
        self.up = nn.Linear(h, h, bias=False)
        self.down = nn.Linear(h, h, bias=False)


class AliasResidual(Base):
    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states += self.up(hidden_states)     # residual sees it too
        return self.down(hidden_states) + residual


class AliasView(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        v = y.view(1, -1, 4, 16)
        v.mul_(2.0)                                  # y doubled too
        return self.down(y) + v.view(1, -1, 64)


class AliasSlice(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        s = y[..., :32]
        s += 1.0                                     # first half of y + 1
        return self.down(y)


class AliasChunk(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        a, b = y.chunk(2, dim=-1)
        a *= 3.0                                     # y's first half tripled
        return self.down(y) + torch.cat([b, a], dim=-1)


class CloneNoAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        z = y.clone()
        z += 1.0                                     # y unchanged
        return self.down(y) + z


class ReshapeAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        r = y.reshape(1, -1, 8, 8)                   # contiguous: a view
        r.sub_(0.5)
        return self.down(y)


class TransposeAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states).view(1, -1, 4, 16)
        t = y.transpose(1, 2)
        t.mul_(0.5)                                  # y halved
        return self.down(y.reshape(1, -1, 64))


class InplaceAct(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        z = y
        F.silu(y, inplace=True)                      # z is silu(y) too
        return self.down(z)


class SliceAssign(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        z = self.down(hidden_states)
        y[..., :16] = z[..., 16:32]
        return y


class CopyInto(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        w = y
        y.copy_(self.down(hidden_states))
        return w + hidden_states


class ListAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        outs = [y, hidden_states]
        outs[0] += outs[1]                            # y += x
        return self.down(y)


class RebindNoAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        z = y
        y = y + 1.0                                   # z unchanged
        z2 = z
        z2 = z2 * 2.0
        return self.down(z) + y + z2


class ClampInplace(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        w = y.view(-1, 64)
        y.clamp_(min=-0.1, max=0.2)
        return self.down(w.view(1, -1, 64))


class FloatAlias(Base):
    def forward(self, hidden_states):
        y = self.up(hidden_states)
        f = y.float()
        f.mul_(4.0)                                   # y (f32) changes
        return self.down(y)
