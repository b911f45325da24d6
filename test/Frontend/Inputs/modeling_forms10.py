"""Tenth round of forms: unbind of a packed QKV (qkv.unbind(dim=2),
torch.unbind), unflatten of the head dimension, select, nn.Sequential (by
position and of an OrderedDict) and a Python number minus a tensor
(1 - gate)."""
from collections import OrderedDict
import math
import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class PackedUnbind(nn.Module):
    """One packed projection, split by unbind along the qkv dimension."""

    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.Wqkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=True)
        self.out_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        bsz, q_len, _ = hidden_states.shape
        cos, sin = position_embeddings
        qkv = self.Wqkv(hidden_states).view(bsz, q_len, 3, self.num_heads, self.head_dim)
        q, k, v = qkv.transpose(1, 3).unbind(dim=2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        return self.out_proj(o.transpose(1, 2).reshape(bsz, q_len, -1))


class UnflattenSelect(PackedUnbind):
    """torch.unbind, unflatten of the packed width, select of one slot."""

    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        bsz, q_len, _ = hidden_states.shape
        cos, sin = position_embeddings
        qkv = self.Wqkv(hidden_states).unflatten(-1, (3, self.num_heads, -1))
        q, k = torch.unbind(qkv[:, :, :2], 2)
        v = qkv.select(2, 2)
        v = torch.select(qkv, dim=2, index=2) + v
        q, k = apply_rotary_pos_emb(q.transpose(1, 2), k.transpose(1, 2), cos, sin)
        o = F.scaled_dot_product_attention(q, k, v.transpose(1, 2), attn_mask=attention_mask)
        o = o.transpose(1, 2).flatten(2)
        return self.out_proj(o.unflatten(-1, (self.num_heads, self.head_dim)).flatten(-2))


class SequentialMlp(nn.Module):
    """nn.Sequential by position and of an OrderedDict; a gated mix 1 - g."""

    def __init__(self, config, layer_idx=0):
        super().__init__()
        h, i = config.hidden_size, config.intermediate_size
        self.ffn = nn.Sequential(nn.Linear(h, i, bias=False), nn.GELU(), nn.Linear(i, h, bias=False))
        self.named = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(h, i)),
            ("act", nn.SiLU()),
            ("fc2", nn.Linear(i, h)),
        ]))
        self.gate = nn.Linear(h, h)

    def forward(self, hidden_states):
        g = torch.sigmoid(self.gate(hidden_states))
        a = self.ffn(hidden_states)
        b = self.named(hidden_states)
        return g * a + (1 - g) * b + (2.5 - hidden_states)


class Baichuan2Pack(PackedUnbind):
    """Baichuan 2's W_pack split: unflatten, the packed dimension moved
    first, indexed."""

    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        cos, sin = position_embeddings
        proj = self.Wqkv(hidden_states)
        proj = proj.unflatten(-1, (3, self.num_heads * self.head_dim)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        q = proj[0].view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        k = proj[1].view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = proj[2].view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask)
        return self.out_proj(o.transpose(1, 2).reshape(bsz, q_len, -1))


class AppendedLayers(nn.Module):
    """nn.ModuleList().append/extend in __init__ (T5's block), a list
    appended to in forward, config attributes set in __init__."""

    def __init__(self, config, layer_idx=0):
        super().__init__()
        config.half_size = config.hidden_size // 2
        h = config.hidden_size
        self.layers = nn.ModuleList()
        self.layers.append(nn.Linear(h, config.half_size))
        self.layers.extend([nn.Linear(h, config.half_size), nn.Linear(h, h)])

    def forward(self, hidden_states):
        outs = []
        for layer in self.layers[:2]:
            outs.append(layer(hidden_states))
        outs.insert(0, outs.pop())
        return self.layers[2](torch.cat(outs, dim=-1))
