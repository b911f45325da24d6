# A block whose sizes and biases come from config keys a config.json may
# lack (config_class_defaults.test): the config class of the file's
# model_type fills them.
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.head_dim = config.head_dim
        heads = config.num_attention_heads
        kv = config.num_key_value_heads
        bias = getattr(config, "attention_bias", False)
        self.q_proj = nn.Linear(config.hidden_size, heads * self.head_dim, bias=bias)
        self.k_proj = nn.Linear(config.hidden_size, kv * self.head_dim, bias=bias)
        self.window = getattr(config, "sliding_window", None)

    def forward(self, hidden_states):
        q = self.q_proj(hidden_states)
        k = self.k_proj(hidden_states)
        if self.window is not None:
            q = q * 2.0
        return q[..., :8] + k[..., :8]
