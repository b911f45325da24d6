"""`.contiguous()` returns the tensor itself when PyTorch lays it out
contiguously and a copy otherwise, so an in-place write through its result
reaches the original or not (contiguous-torch.test). The frontend keeps
buffers token-major whatever PyTorch's layout, so it tracks PyTorch's
(values.Tensor.tlayout)."""
import torch
from torch import nn


class ContiguousLayer(nn.Module):
    def __init__(self, config, layer_idx=0):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        # (a) .contiguous() of a tensor PyTorch already laid out contiguously: itself
        q = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()
        r = q.contiguous()
        r.mul_(2.0)
        # (b) transposed back: not contiguous in PyTorch, so a copy
        k = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2).contiguous()
        z = k.transpose(1, 2).contiguous()
        z.mul_(3.0)
        # (c) an elementwise result of a contiguous tensor is contiguous: itself
        e = (k * 0.5).contiguous()
        f = e.contiguous()
        f.add_(1.0)
        return (q + k + e).transpose(1, 2).reshape(bsz, q_len, self.hidden_size) + z.reshape(bsz, q_len, self.hidden_size)
