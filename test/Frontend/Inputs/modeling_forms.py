# One block using every tensor form docs/guides/frontend.md lists, each
# checked against PyTorch by forms-torch.test: sizes from .size(), views
# (.view/.reshape/.transpose/.permute/.contiguous/.unsqueeze, a reshape
# that copies), slicing with `...`, torch.split and .chunk, torch.cat, the
# in-place methods, `out=` and `inplace=True`, `x += y`, conditional
# expressions, `x or default` on config values, guards on layer attributes
# (`is None`, truthiness, `== None`), an attention mask tested for None,
# and a layer that is None.
import torch
import torch.nn.functional as F
from torch import nn


class FormsRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.variance_epsilon))


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs):
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        scores = scores + attention_mask[:, :, :, : key.shape[-2]]
    probs = F.softmax(scores, dim=-1)
    return torch.matmul(probs, value).transpose(1, 2).contiguous(), probs


class FormsBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        self.half = config.intermediate_size // 2
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=True)
        self.up = nn.Linear(config.hidden_size, 2 * config.intermediate_size, bias=False)
        self.down = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.extra = nn.Linear(config.hidden_size, config.hidden_size, bias=False) if config.use_extra else None
        self.missing = nn.Linear(config.hidden_size, config.hidden_size, bias=False) if not config.use_extra else None
        self.norm = FormsRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.act = nn.GELU(approximate="tanh")
        self.dropout = nn.Dropout(0.1)
        self.scale_back = config.scale_back

    def forward(self, hidden_states, cos, sin, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        residual = hidden_states.clone()
        h = self.norm(hidden_states)

        q, k, v = torch.split(self.qkv(h), self.hidden_size, dim=-1)
        q = q.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.reshape(bsz, q_len, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        v = v.view(bsz, -1, self.num_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        mask = attention_mask if attention_mask is not None else None
        o, _ = eager_attention_forward(self, q, k, v, mask, scaling=self.head_dim**-0.5)
        o = o.reshape(bsz, q_len, -1)
        o = self.o_proj(self.dropout(o))

        if self.extra is not None:
            o = o + self.extra(o)
        if not self.missing:
            o.mul_(0.5)
        if self.missing == None:
            o = o * 2
        o = o - 1.0 if self.missing else o + 1.0

        hidden_states = residual
        hidden_states.add_(o)
        residual = hidden_states
        h = self.norm(hidden_states)

        gate_up = self.up(h)
        gate, up = gate_up.chunk(2, dim=-1)
        g1 = gate[..., : self.half]
        g2 = gate[:, :, self.half :]
        F.silu(g1, inplace=True)
        g2 = self.act(g2)
        gate = torch.cat([g1, g2], dim=-1)
        torch.mul(gate, up, out=up)
        down = self.down(up)
        # A reshape that copies: the first half of each group of 16.
        halves = gate_up.view(bsz, q_len, 6, 16)[..., :8].reshape(bsz, q_len, 48)
        down = down + self.down(halves) * 0.1
        down.sub_(down * 0.25)
        down = down / 0.75 if self.scale_back else down
        torch.add(residual, down, out=residual)
        residual += 1.0
        return residual - 1.0
