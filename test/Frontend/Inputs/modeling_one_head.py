"""A one-head projection (head_dim 8 of an 8-wide projection): its
[batch, 1, tokens, head_dim] view is a buffer with an axis of size 1, and
views of it must keep that axis (test/Frontend/one-head-torch.test)."""
import torch
from torch import nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class OneHeadLayer(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.head_dim = config.head_dim
        self.q_proj = nn.Linear(config.hidden_size, self.head_dim, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, self.head_dim, bias=False)

    def forward(self, hidden_states, position_embeddings):
        bsz, q_len, _ = hidden_states.shape
        q = self.q_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(hidden_states).view(bsz, q_len, -1, self.head_dim).transpose(1, 2)
        cos, sin = position_embeddings
        q_rot, k_rot = apply_rotary_pos_emb(q, k, cos, sin)
        q_out = q_rot.transpose(1, 2).reshape(bsz, q_len, -1)
        k_out = k_rot.transpose(1, 2).reshape(bsz, q_len, -1)
        return q_out + k_out
