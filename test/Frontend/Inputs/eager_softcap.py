# Soft-capping and a file's own eager attention (errors.test). Capped:
# softcap= reaches a body that caps (its own parameter): tx.attention
# softcap. Ignored: the function takes softcap only in **kwargs and its body
# never reads it, as HF's Llama function: no cap. The third form caps from
# module.config without a softcap parameter: an error, not a guess.
import torch
from torch import nn


def eager_attention_forward(module, query, key, value, attention_mask, scaling, dropout=0.0, softcap=None, **kwargs):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = attn_weights / softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * softcap
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask[:, :, :, : key.shape[-2]]
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


class CappedAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.scaling = 16 ** -0.5
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask):
        shape = (1, -1, 4, 16)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        out, _ = eager_attention_forward(self, q, k, v, attention_mask, scaling=self.scaling, softcap=30.0)
        return out.reshape(1, -1, 64)
