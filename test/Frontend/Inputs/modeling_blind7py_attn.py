import math
import torch
import torch.nn.functional as F
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class AttnBase(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.num_kv = config.num_key_value_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_kv * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_kv * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)


class RopeBeforeTranspose(AttnBase):
    """rotary on [b, t, h, d] with unsqueeze_dim=2, then transposed."""

    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        b, t, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(b, t, -1, self.head_dim)
        k = self.k_proj(hidden_states).view(b, t, -1, self.head_dim)
        v = self.v_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=2)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        k = torch.repeat_interleave(k, self.num_heads // self.num_kv, dim=1)
        v = torch.repeat_interleave(v, self.num_heads // self.num_kv, dim=1)
        s = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        s = s + attention_mask
        p = F.softmax(s, dim=-1, dtype=torch.float32).to(q.dtype)
        o = torch.matmul(p, v).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(o)


class TiledRepeat(AttnBase):
    """k/v heads tiled with Tensor.repeat: head j reads kv head j % kv (not j // groups)."""

    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        b, t, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        n = self.num_heads // self.num_kv
        k = k.repeat(1, n, 1, 1)
        v = v.repeat(1, n, 1, 1)
        s = torch.matmul(q, k.transpose(-1, -2)) * self.head_dim ** -0.5
        s = s + attention_mask
        p = s.softmax(-1)
        o = (p @ v).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(o)


class SdpaGqa(AttnBase):
    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        b, t, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        k = k.repeat_interleave(self.num_heads // self.num_kv, dim=1)
        v = v.repeat_interleave(self.num_heads // self.num_kv, dim=1)
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, dropout_p=0.0, scale=0.3)
        o = o.transpose(1, 2).contiguous().view(b, t, self.hidden_size)
        return self.o_proj(o)


class MaskBeforeScale(AttnBase):
    def forward(self, hidden_states, position_embeddings, attention_mask=None):
        b, t, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, t, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        n = self.num_heads // self.num_kv
        k = torch.repeat_interleave(k, n, dim=1)
        v = torch.repeat_interleave(v, n, dim=1)
        s = torch.matmul(q, k.transpose(2, 3))
        s = s + attention_mask
        s = s / math.sqrt(self.head_dim)
        p = F.softmax(s, dim=-1)
        o = torch.matmul(p, v).permute(0, 2, 1, 3).reshape(b, t, -1)
        return self.o_proj(o)
