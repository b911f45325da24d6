# Arguments of PyTorch calls that change what they compute (alpha, inplace
# given by position or to a module, out=, .contiguous() copying or not,
# .to(copy=True)): each must be honoured (or rejected, Inputs/bad_arguments.py),
# never dropped. Written as a modeling file would use them; forward returns
# one tensor that every piece reaches.
import torch
import torch.nn.functional as F
from torch import nn


class ArgumentsBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        hidden = config.hidden_size
        self.a_proj = nn.Linear(hidden, hidden, bias=False)
        self.b_proj = nn.Linear(hidden, hidden, bias=True)
        self.act = nn.ReLU(inplace=True)
        self.act2 = nn.SiLU(True)

    def forward(self, hidden_states):
        a = self.a_proj(hidden_states)
        b = self.b_proj(hidden_states)
        # alpha: a + 2 b, a - 0.5 b, and in place.
        s = torch.add(a, b, alpha=2)
        d = a.sub(b, alpha=0.5)
        c = b.clone()
        c.add_(a, alpha=-3)
        c.sub_(1.0, alpha=2)
        # An in-place module and inplace by position write their input.
        r = a.clone()
        self.act(r)
        g = b.clone()
        self.act2(g)
        h = b.clone()
        F.silu(h, True)
        F.relu(h, True)
        # out= of torch.cat into a fresh tensor.
        o = a.clone()
        torch.cat([b[..., :8], a[..., 8:]], dim=-1, out=o)
        # .contiguous() of a slice is a copy: the write leaves a alone; of a
        # contiguous tensor it is the tensor: the write reaches r.
        y = a[..., 0:8].contiguous()
        y.mul_(2.0)
        z = r.contiguous()
        z.mul_(3.0)
        w = a.to(torch.float32, copy=True)
        w.add_(1.0)
        first = torch.cat([y, y], dim=-1)
        return s + d + c + r + g + h + o + a + w + first
