# Cohere's interleaved rotary (HF modeling_cohere.py) with the pairs stacked
# the other way round ([x2, -x1]: each pair rotated by minus its angle):
# neither rotation of tx.rotary, so the frontend must not replace it by
# tx.rotary (errors.test; sed variants give the other errors).
import torch
from torch import nn


def rotate_half(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    rot_x = torch.stack([x2, -x1], dim=-1).flatten(-2)
    return rot_x


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    dtype = q.dtype
    q = q.float()
    k = k.float()
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed.to(dtype=dtype), k_embed.to(dtype=dtype)


class CohereStyleRotary(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, position_embeddings):
        q = self.q_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        k = self.k_proj(hidden_states).view(1, -1, 4, 16).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        return (q + k).transpose(1, 2).reshape(1, -1, 64)
