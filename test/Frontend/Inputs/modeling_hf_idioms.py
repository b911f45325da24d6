# A Llama-style layer written with the Python idioms HF modeling files use
# around the model (each taken at import, with this config): module-level
# logger calls and warnings.warn, isinstance on caches and tuples, assert,
# a @staticmethod and a @classmethod helper, a class attribute, Falcon's
# multi-query split (x[..., [-2], :]) and reshapes of transposed tensors to
# the sizes they have, PretrainedConfig attributes config.json leaves out,
# `^` of bools, the
# attention class from a module-level dict, @deprecate_kwarg renaming a
# keyword the caller still passes under its old name, `self.training and`
# guards, a rotary module the attention builds (and never calls), and a
# `(hidden_states, None)` return. Checked against PyTorch by
# hf-idioms-torch.test.
import math
import warnings
from typing import Optional, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from ...activations import ACT2FN
from ...cache_utils import Cache, DynamicCache
from ...modeling_layers import GradientCheckpointingLayer
from ...utils import logging
from ...utils.deprecation import deprecate_kwarg

logger = logging.get_logger(__name__)


class IdiomRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.variance_epsilon))


class IdiomRotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class IdiomAttention(nn.Module):
    is_causal = True

    def __init__(self, config, layer_idx: Optional[int] = None):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // self.num_heads
        assert self.head_dim * self.num_heads == config.hidden_size, "hidden_size must be divisible by num_heads"
        if self.head_dim % 8:
            warnings.warn(f"head_dim {self.head_dim} is not a multiple of 8")
        # Falcon's multi-query packing: the heads' queries, then one key, one value.
        self.query_key_value = nn.Linear(config.hidden_size, config.hidden_size + 2 * self.head_dim, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.rotary_emb = IdiomRotaryEmbedding(self.head_dim, base=config.rope_theta)

    def _split_heads(self, fused_qkv: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2, self.head_dim)
        return fused_qkv[..., :-2, :], fused_qkv[..., [-2], :], fused_qkv[..., [-1], :]

    @staticmethod
    def _shape(tensor: torch.Tensor, seq_len: int, bsz: int, num_heads: int, head_dim: int) -> torch.Tensor:
        return tensor.view(bsz, seq_len, num_heads, head_dim).transpose(1, 2)

    @classmethod
    def _merge_heads(cls, tensor, num_attention_heads, attn_head_size):
        tensor = tensor.transpose(1, 2).contiguous()
        return tensor.reshape(tensor.size(0), tensor.size(1), num_attention_heads * attn_head_size)

    @deprecate_kwarg("rotary_embeddings", new_name="position_embeddings", version="4.60")
    @deprecate_kwarg("position_embeddings", version="4.60.0")  # HF only warns: still passed
    def forward(
        self,
        hidden_states: torch.Tensor,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        attention_mask: Optional[torch.Tensor] = None,
        past_key_value: Optional[Union[Cache, Tuple[torch.Tensor]]] = None,
        output_attentions: bool = False,
        **kwargs,
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        if "padding_mask" in kwargs:
            warnings.warn(
                "Passing `padding_mask` is deprecated and will be removed in v4.37. Please make sure use `attention_mask` instead.`"
            )
        if position_embeddings is None:
            raise ValueError("position_embeddings are required")
        if output_attentions:
            logger.warning_once("output_attentions=True is not supported by this attention")
        bsz, q_len, _ = hidden_states.size()
        assert hidden_states.dim() == 3

        query_states, key_states, value_states = self._split_heads(self.query_key_value(hidden_states))
        query_states = query_states.transpose(1, 2).reshape(bsz, self.num_heads, q_len, self.head_dim)
        key_states = key_states.transpose(1, 2).reshape(bsz, 1, q_len, self.head_dim)
        value_states = value_states.transpose(1, 2).reshape(bsz, 1, q_len, self.head_dim)
        value_states = self._shape(value_states.transpose(1, 2), -1, bsz, 1, self.head_dim)

        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)

        if isinstance(past_key_value, Cache):
            key_states, value_states = past_key_value.update(key_states, value_states, self.layer_idx)
        elif isinstance(past_key_value, tuple):
            key_states = torch.cat([past_key_value[0], key_states], dim=2)
            value_states = torch.cat([past_key_value[1], value_states], dim=2)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None and self.is_causal:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        if self.training and self.config.attention_dropout > 0:
            attn_weights = F.dropout(attn_weights, p=self.config.attention_dropout)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.view(bsz, self.num_heads, q_len, self.head_dim)

        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.o_proj(attn_output)
        return attn_output, (attn_weights if output_attentions else None)


IDIOM_ATTENTION_CLASSES = {"eager": IdiomAttention}


class IdiomMLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.up_proj = nn.Linear(config.hidden_size, config.intermediate_size, bias=False)
        self.down_proj = nn.Linear(config.intermediate_size, config.hidden_size, bias=False)
        self.act_fn = ACT2FN[config.hidden_act]

    def forward(self, hidden_state):
        return self.down_proj(self.act_fn(self.gate_proj(hidden_state)) * self.up_proj(hidden_state))


class IdiomDecoderLayer(GradientCheckpointingLayer):
    def __init__(self, config, layer_idx: int):
        super().__init__()
        self.self_attn = IDIOM_ATTENTION_CLASSES[config._attn_implementation](config, layer_idx)
        self.mlp = IdiomMLP(config)
        self.input_layernorm = IdiomRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.post_attention_layernorm = IdiomRMSNorm(config.hidden_size, eps=config.rms_norm_eps)
        self.padding_idx = config.pad_token_id  # PretrainedConfig's, not in config.json
        self.return_dict = config.use_return_dict
        if not isinstance(config.rms_norm_eps, float):
            raise TypeError("rms_norm_eps must be a float")

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.Tensor] = None,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        past_key_value: Optional[Cache] = None,
        output_attentions: Optional[bool] = False,
        use_cache: Optional[bool] = False,
        **kwargs,
    ) -> Tuple[torch.FloatTensor, Optional[torch.FloatTensor]]:
        if (position_embeddings is None) ^ (hidden_states is None):
            raise ValueError("You must specify exactly one of position_embeddings or hidden_states")
        if use_cache and not isinstance(past_key_value, Cache):
            logger.warning_once("use_cache=True needs a Cache")
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states, self_attn_weights = self.self_attn(
            hidden_states=hidden_states,
            attention_mask=attention_mask,
            rotary_embeddings=position_embeddings,
            past_key_value=past_key_value,
            output_attentions=output_attentions,
            padding_mask=None,
        )
        if isinstance(hidden_states, tuple):
            hidden_states = hidden_states[0]
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = residual + self.mlp(self.post_attention_layernorm(hidden_states))
        logger.info("layer done")

        outputs = (hidden_states, None)
        if output_attentions:
            outputs += (self_attn_weights,)
        return outputs
