"""Blind round 9: ModernBERT's encoder layer (from memory, not for the
frontend, imported unchanged): Wqkv viewed (bs, -1, 3, h, d), transposed and
indexed, GeGLU by chunk, LayerNorm without bias, an Identity norm on layer
0."""
import math
from typing import Optional
import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers.activations import ACT2FN


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


class ModernBertMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.Wi = nn.Linear(config.hidden_size, int(config.intermediate_size) * 2, bias=config.mlp_bias)
        self.act = ACT2FN[config.hidden_activation]
        self.drop = nn.Dropout(config.mlp_dropout)
        self.Wo = nn.Linear(config.intermediate_size, config.hidden_size, bias=config.mlp_bias)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        input, gate = self.Wi(hidden_states).chunk(2, dim=-1)
        return self.Wo(self.drop(self.act(input) * gate))


def sdpa_attention_forward(module, qkv, attention_mask, position_embeddings, bs, dim, **_kwargs):
    cos, sin = position_embeddings
    qkv = qkv.transpose(3, 1)
    query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    query, key = apply_rotary_pos_emb(query, key, cos, sin)
    attn_output = (
        F.scaled_dot_product_attention(query, key, value, dropout_p=0.0, attn_mask=attention_mask)
        .transpose(1, 2)
        .contiguous()
    )
    attn_output = attn_output.view(bs, -1, dim)
    return (attn_output,)


class ModernBertAttention(nn.Module):
    def __init__(self, config, layer_id: Optional[int] = None):
        super().__init__()
        self.config = config
        self.layer_id = layer_id
        self.attention_dropout = config.attention_dropout
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.all_head_size = self.head_dim * self.num_heads
        self.Wqkv = nn.Linear(config.hidden_size, 3 * self.all_head_size, bias=config.attention_bias)
        self.Wo = nn.Linear(config.hidden_size, config.hidden_size, bias=config.attention_bias)
        self.out_drop = nn.Dropout(config.attention_dropout) if config.attention_dropout > 0.0 else nn.Identity()

    def forward(self, hidden_states, position_embeddings, attention_mask=None, output_attentions=False, **kwargs):
        qkv = self.Wqkv(hidden_states)
        bs = hidden_states.shape[0]
        qkv = qkv.view(bs, -1, 3, self.num_heads, self.head_dim)
        attn_outputs = sdpa_attention_forward(self, qkv=qkv, attention_mask=attention_mask,
                                              position_embeddings=position_embeddings, bs=bs, dim=self.all_head_size)
        hidden_states = attn_outputs[0]
        hidden_states = self.out_drop(self.Wo(hidden_states))
        return (hidden_states,) + attn_outputs[1:]


class ModernBertEncoderLayer(nn.Module):
    def __init__(self, config, layer_id: Optional[int] = None):
        super().__init__()
        self.config = config
        if layer_id == 0:
            self.attn_norm = nn.Identity()
        else:
            self.attn_norm = nn.LayerNorm(config.hidden_size, eps=config.norm_eps, bias=config.norm_bias)
        self.attn = ModernBertAttention(config=config, layer_id=layer_id)
        self.mlp_norm = nn.LayerNorm(config.hidden_size, eps=config.norm_eps, bias=config.norm_bias)
        self.mlp = ModernBertMLP(config)

    def forward(self, hidden_states, attention_mask=None, position_embeddings=None, output_attentions=False):
        attn_outputs = self.attn(self.attn_norm(hidden_states), position_embeddings=position_embeddings,
                                 attention_mask=attention_mask, output_attentions=output_attentions)
        hidden_states = hidden_states + attn_outputs[0]
        mlp_output = self.mlp(self.mlp_norm(hidden_states))
        hidden_states = hidden_states + mlp_output
        return (hidden_states,) + attn_outputs[1:]
