#!/usr/bin/env python3
"""Runs a modeling file in PyTorch, and compares tx's outputs with it.

usage: torch_ref.py run MODELING CONFIG DIR [--entry C] [--layer-idx N]
                       [--prefix P] [--tokens T] [--seed S]
                       [--mask causal|none] [--window W] [--checkpoint f32|bf16]
                       [--compute f32|bf16] [--rope halves|interleaved|pairs]
       torch_ref.py compare DIR OUT.npy [--rtol R] [--perturb]
                            [--expected FILE]

`run` imports MODELING as Python, builds the entry class on CONFIG (a
SimpleNamespace of config.json) with random weights, calls forward on
random inputs chosen by parameter name as tx.frontend maps them
(hidden_states [1, T, hidden]; position_embeddings (cos, sin), each
[1, T, head_dim] with the halves repeated, as HF's rotary module gives
them (--rope interleaved: each angle twice in place, repeat_interleave, as
Cohere's does; --rope pairs: [1, T, head_dim/2], one angle per pair, for a
helper that repeats them itself, as GPT-J's), or the table of the model's
own rotary module when it has one: rotary_module_table; position_ids
0..T-1; attention_mask the additive causal mask, with --window W the
sliding-window causal mask HF's model gives a sliding layer (key s visible
to query t when s <= t and t - s < W), or None with --mask none)
and writes, for tx-run:
DIR/x.npy, DIR/cos.npy, DIR/sin.npy (cos/sin as [T, head_dim/2]),
DIR/weights/<prefix><name>.npy, DIR/model.safetensors (the same tensors)
and DIR/expected.npy (and, for a container argument such as
shared_kv_states, DIR/<argument>.<index>.<slot>.npy: what it holds after
forward, as tx-run --output-dir writes it). With --checkpoint bf16 the
weights and inputs are rounded to bf16 by torch and the checkpoint holds
torch's bf16 bits; torch then runs on those values in f32 (--compute f32)
or in bf16. `compare` checks max|tx - torch| <= R * max|torch|
(R = 1e-5) and prints the error; --perturb adds 1e-4 * max|torch| to one
element of tx's output first (to show the check fails)."""
import argparse
import importlib.util
import json
import math
import os
import sys
import types

import numpy as np

FORWARD_ARGS = {
    "hidden_states": "activation", "x": "activation", "hidden": "activation",
    "h": "activation", "inputs_embeds": "activation", "hidden_state": "activation",
    "input": "activation", "input_tensor": "activation",
    "position_embeddings": "rope", "cos": "cos", "sin": "sin",
    "attention_mask": "mask", "mask": "mask", "causal_mask": "mask", "attn_mask": "mask",
    "position_ids": "positions",
    "shared_kv_states": "container",
    "alibi": "alibi",  # None: the config has no ALiBi (Falcon 7B)
    "causal_attention_mask": "mask",  # CLIP's: attention_mask is padding then
    "head_mask": "none", "layer_head_mask": "none", "cross_attn_layer_head_mask": "none",
}


# HF sets _attn_implementation at run time; config.json leaves out
# PretrainedConfig's attributes that have their default.
PRETRAINED_CONFIG_DEFAULTS = {
    "_attn_implementation": "eager",
    "pad_token_id": None, "bos_token_id": None, "eos_token_id": None,
    "sep_token_id": None, "decoder_start_token_id": None,
    "output_attentions": False, "output_hidden_states": False, "return_dict": True,
    "use_return_dict": True, "torchscript": False, "torch_dtype": None,
    "tie_word_embeddings": True, "is_decoder": False, "is_encoder_decoder": False,
    "add_cross_attention": False, "chunk_size_feed_forward": 0, "pruned_heads": {},
    "problem_type": None, "architectures": None,
}


ATTRIBUTE_MAP = {"hidden_size": ("n_embd", "d_model"),
                 "num_attention_heads": ("n_head", "num_heads", "attention_heads",
                                         "encoder_attention_heads"),
                 "num_hidden_layers": ("n_layer", "num_layers"),
                 "max_position_embeddings": "n_positions"}


def transformers_stub():
    """The names of `transformers` HF modeling files import (it is not
    installed here): ACT2FN, the attention registry, Conv1D, the layer base
    class, the decorators (deprecate_kwarg renames as HF's does, the others
    return what they decorate), logging, the typing helpers; any other name
    of any `transformers.*` module is a placeholder class (a type in an
    annotation, a base class, a config class)."""
    import functools
    import importlib.abc
    import importlib.machinery
    if importlib.util.find_spec("transformers") is not None:
        return
    import logging as pylogging
    import torch
    from torch import nn
    class AccurateGELU(nn.Module):
        """transformers' AccurateGELUActivation."""

        def forward(self, x):
            c = math.sqrt(2 / math.pi)
            return 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3))))

    class GELUPython(nn.Module):
        """transformers' GELUActivation(use_gelu_python=True)."""

        def forward(self, x):
            return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))

    class ReLUSquared(nn.Module):
        """transformers' ReLUSquaredActivation ("relu2")."""

        def forward(self, x):
            return torch.square(nn.functional.relu(x))

    class QuickGELU(nn.Module):
        """transformers' QuickGELUActivation (CLIP)."""

        def forward(self, input):
            return input * torch.sigmoid(1.702 * input)

    def apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, *input_tensors):
        """transformers.pytorch_utils.apply_chunking_to_forward."""
        if chunk_size > 0:
            n = input_tensors[0].shape[chunk_dim] // chunk_size
            chunks = tuple(t.chunk(n, dim=chunk_dim) for t in input_tensors)
            return torch.cat([forward_fn(*c) for c in zip(*chunks)], dim=chunk_dim)
        return forward_fn(*input_tensors)

    act2fn = {"relu2": ReLUSquared(), "quick_gelu": QuickGELU(), "silu": nn.SiLU(), "swish": nn.SiLU(), "relu": nn.ReLU(), "gelu": nn.GELU(),
              "gelu_pytorch_tanh": nn.GELU(approximate="tanh"),
              "gelu_new": nn.GELU(approximate="tanh"), "gelu_python": GELUPython(),
              "gelu_accurate": AccurateGELU()}

    class Conv1D(nn.Module):
        """transformers.pytorch_utils.Conv1D (GPT-2): x @ weight + bias, the
        weight [nx, nf]."""

        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)

    def sdpa_attention_forward(module, query, key, value, attention_mask, dropout=0.0,
                               scaling=None, is_causal=None, **kwargs):
        """transformers.integrations.sdpa_attention: keys and values repeated
        to the query heads, the mask cut to the keys, causal without a mask
        when the module is (its is_causal, True by default)."""
        groups = getattr(module, "num_key_value_groups", 1)
        if groups > 1:
            key = key.repeat_interleave(groups, dim=1)
            value = value.repeat_interleave(groups, dim=1)
        if attention_mask is not None and attention_mask.ndim == 4:
            attention_mask = attention_mask[:, :, :, : key.shape[-2]]
        if is_causal is None:
            is_causal = query.shape[2] > 1 and attention_mask is None and \
                getattr(module, "is_causal", True)
        out = nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling,
            is_causal=is_causal)
        return out.transpose(1, 2).contiguous(), None

    class AttentionInterface(dict):
        def get_interface(self, name, default):
            return default if name == "eager" else self[name]

    class GradientCheckpointingLayer(nn.Module):
        gradient_checkpointing = False

    def passthrough(*args, **kwargs):
        """A decorator used bare (@auto_docstring) or with arguments
        (@use_kernel_forward_from_hub("RMSNorm")): returns what it decorates."""
        if len(args) == 1 and not kwargs and callable(args[0]) and \
                not isinstance(args[0], str):
            return args[0]
        return lambda f: f

    def deprecate_kwarg(old_name, version=None, new_name=None, **options):
        def wrap(f):
            @functools.wraps(f)
            def call(*args, **kwargs):
                if old_name in kwargs and new_name is not None:
                    kwargs.setdefault(new_name, kwargs.pop(old_name))
                return f(*args, **kwargs)  # without new_name HF only warns
            return call
        return wrap

    class Logger(pylogging.Logger):
        def warning_once(self, *args, **kwargs):
            pass

        def info_once(self, *args, **kwargs):
            pass

    logging_module = types.SimpleNamespace(
        get_logger=lambda name=None: Logger(name or "transformers"))

    class Typing:
        def __class_getitem__(cls, item):
            return cls

    def default_rope(config=None, device=None, seq_len=None, **rope_kwargs):
        """ROPE_INIT_FUNCTIONS["default"]: (inv_freq, attention scaling 1)."""
        if config is None:
            base, dim = rope_kwargs["base"], rope_kwargs["dim"]
        else:
            base = config.rope_theta
            heads = config.num_attention_heads
            dim = getattr(config, "head_dim", None) or config.hidden_size // heads
            dim = int(dim * (getattr(config, "partial_rotary_factor", None) or 1.0))
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        return inv_freq, 1.0

    names = {
        "ACT2FN": act2fn, "ROPE_INIT_FUNCTIONS": {"default": default_rope},
        "ALL_LAYERNORM_LAYERS": [nn.LayerNorm], "ALL_ATTENTION_FUNCTIONS": AttentionInterface(sdpa=sdpa_attention_forward),
        "Conv1D": Conv1D, "GradientCheckpointingLayer": GradientCheckpointingLayer,
        "get_activation": lambda name: act2fn[name],
        "deprecate_kwarg": deprecate_kwarg, "logging": logging_module,
        "Unpack": Typing, "FlashAttentionKwargs": Typing, "TransformersKwargs": Typing,
        "is_torch_flex_attn_available": lambda: False,
        "is_torch_fx_proxy": lambda x: False, "is_torchdynamo_compiling": lambda: False,
        "is_flash_attn_available": lambda: False,
        "apply_chunking_to_forward": apply_chunking_to_forward,
        # tx.frontend's table.TORCH_VERSION (the version the import assumes).
        "get_torch_version": lambda: "2.6.0",
    }
    # transformers.activations' module-level instances kept for backward
    # compatibility (`from ...activations import gelu_new, silu`: OpenAI
    # GPT's ACT_FNS): get_activation(name).
    for a in ("gelu_python", "gelu_new", "gelu", "quick_gelu", "silu"):
        names[a] = act2fn[a]
    for d in ("auto_docstring", "can_return_tuple", "check_model_inputs",
              "dynamic_rope_update", "torch_int"):
        names[d] = passthrough
    for d in ("use_kernel_forward_from_hub", "use_kernel_func_from_hub",
              "use_kernelized_func", "add_start_docstrings",
              "add_start_docstrings_to_model_forward", "replace_return_docstrings",
              "add_code_sample_docstrings"):
        names[d] = lambda *args, **kwargs: (lambda f: f)

    class Package(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            value = names.get(name)
            if value is None:
                value = type(name, (Typing,), {"__module__": self.__name__})
            setattr(self, name, value)
            return value

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, fullname, path=None, target=None):
            if fullname == "transformers" or fullname.startswith("transformers."):
                return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
            return None

        def create_module(self, spec):
            m = Package(spec.name)
            m.__path__ = []
            return m

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, Finder())


def torch_compat():
    """What later PyTorch versions have, on the PyTorch 1.13 installed here:
    nn.LayerNorm(..., bias=False) (2.1: a LayerNorm whose bias is None) and
    F.scaled_dot_product_attention (2.0, as its documentation defines it)."""
    import inspect
    import torch
    from torch import nn
    if not hasattr(nn.functional, "scaled_dot_product_attention"):
        # PyTorch 2.0's F.scaled_dot_product_attention (its documented
        # reference: an additive or boolean attn_mask, is_causal, scale).
        def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                         is_causal=False, scale=None):
            assert dropout_p == 0.0, "inference only"
            L, S = query.size(-2), key.size(-2)
            scale = 1 / math.sqrt(query.size(-1)) if scale is None else scale
            bias = torch.zeros(L, S, dtype=query.dtype)
            if is_causal:
                assert attn_mask is None
                bias.masked_fill_(~torch.ones(L, S, dtype=torch.bool).tril(), float("-inf"))
            if attn_mask is not None and attn_mask.dtype == torch.bool:
                bias = bias.masked_fill(~attn_mask, float("-inf"))
            elif attn_mask is not None:
                bias = bias + attn_mask
            weights = query @ key.transpose(-2, -1) * scale + bias
            return torch.softmax(weights, dim=-1) @ value

        nn.functional.scaled_dot_product_attention = scaled_dot_product_attention
    if "bias" in inspect.signature(nn.LayerNorm.__init__).parameters:
        return

    class LayerNorm(nn.LayerNorm):
        def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                     device=None, dtype=None):
            super().__init__(normalized_shape, eps, elementwise_affine, device=device,
                             dtype=dtype)
            if elementwise_affine and not bias:
                self.register_parameter("bias", None)

    nn.LayerNorm = LayerNorm


def config_class_defaults(cfg):
    """What HF's config classes derive in __init__ and config.json may lack:
    Gemma2Config's layer_types (sliding on even layers), Qwen2Config's
    sliding_window (None unless use_sliding_window)."""
    if getattr(cfg, "use_sliding_window", None) is False:
        cfg.sliding_window = None
    if getattr(cfg, "layer_types", None) is None and \
            getattr(cfg, "model_type", None) == "gemma2":
        cfg.layer_types = ["sliding_attention" if bool((i + 1) % 2) else "full_attention"
                           for i in range(cfg.num_hidden_layers)]
    if getattr(cfg, "layer_types", None) is None and \
            getattr(cfg, "model_type", None) in ("gemma3", "gemma3_text"):
        # Gemma3TextConfig: one full layer in every sliding_window_pattern.
        pattern = getattr(cfg, "sliding_window_pattern", 6)
        cfg.layer_types = ["sliding_attention" if bool((i + 1) % pattern) else "full_attention"
                           for i in range(cfg.num_hidden_layers)]


# position_embeddings_<suffix>: a rotary table of its own (Gemma 3's
# position_embeddings_global and position_embeddings_local), whose base is
# the config key ROPE_BASE_KEYS gives for the suffix (rope_theta for others),
# written as DIR/cos_<suffix>.npy and DIR/sin_<suffix>.npy.
ROPE_PREFIX = "position_embeddings_"
ROPE_BASE_KEYS = {"local": "rope_local_base_freq"}


class Config(types.SimpleNamespace):
    """config.json's keys as attributes, with PretrainedConfig.update."""

    def update(self, values):
        self.__dict__.update(values)


def kind_of(name):
    if name.startswith(ROPE_PREFIX) and name[len(ROPE_PREFIX):].isidentifier():
        return "rope"
    return FORWARD_ARGS.get(name)


def bf16_args(v):
    import torch
    if isinstance(v, tuple):
        return tuple(bf16_args(x) for x in v)
    return v.to(torch.bfloat16) if hasattr(v, "to") else v


def f32_args(v):
    if isinstance(v, tuple):
        return tuple(f32_args(x) for x in v)
    return v.float() if hasattr(v, "float") else v


def rotary_module_table(model, T, rot, rope="halves"):
    """cos/sin [T, rot / 2] of the model's first rotary embedding module
    (a submodule of a class named *RotaryEmbedding) for positions 0..T-1,
    called as HF's are: forward(x, position_ids) or (x, seq_len=T); one
    angle per pair of its [.., T, rot] output: the first half (HF repeats
    the halves), every other entry with rope "interleaved" (each angle
    repeated in place), all of a [.., T, rot / 2] one with "pairs"; None
    when the model has none."""
    import torch
    rotary = next((m for _, m in model.named_modules()
                   if type(m).__name__.endswith("RotaryEmbedding")), None)
    if rotary is None:
        return None
    x = torch.zeros(1, 1, T, rot)
    import inspect
    with torch.no_grad():
        if "position_ids" in inspect.signature(rotary.forward).parameters:
            cos, sin = rotary(x, torch.arange(T)[None])
        else:
            cos, sin = rotary(x, seq_len=T)
    # The module's own width (DeepSeek-V2's covers qk_rope_head_dim, not
    # the config's hidden_size / num_attention_heads).
    width = cos.shape[-1]
    if rope == "pairs":
        return tuple(t.reshape(T, width).float() for t in (cos, sin))
    pick = slice(0, None, 2) if rope == "interleaved" else slice(0, width // 2)
    return tuple(t.reshape(T, width)[:, pick].float() for t in (cos, sin))


def run(a):
    import torch
    transformers_stub()
    torch_compat()
    torch.manual_seed(a.seed)
    with open(a.config) as f:
        # HF sets _attn_implementation at run time (tx.frontend's default too).
        cfg = Config(**dict(PRETRAINED_CONFIG_DEFAULTS, **json.load(f)))
    # HF's attribute_map (GPT-2's config.json has n_embd for hidden_size, ...).
    for key, aliases in ATTRIBUTE_MAP.items():
        for alias in (aliases,) if isinstance(aliases, str) else aliases:
            if not hasattr(cfg, key) and hasattr(cfg, alias):
                setattr(cfg, key, getattr(cfg, alias))
    config_class_defaults(cfg)
    # A module of a transformers package, so that HF's relative imports
    # (from ...activations import ACT2FN) resolve to the stub above.
    name = "transformers.models.tx_ref." + os.path.splitext(os.path.basename(a.modeling))[0]
    spec = importlib.util.spec_from_file_location(name, a.modeling)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    cls = getattr(mod, a.entry)
    import inspect
    kwargs = {}
    for name in list(inspect.signature(cls.__init__).parameters)[1:]:
        if name in ("config", "args", "cfg", "params", "model_args"):
            kwargs[name] = cfg
        elif name in ("layer_idx", "layer_id", "layer_index"):
            kwargs[name] = a.layer_idx
    model = cls(**kwargs).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or ".weight" not in name and "norm" in name:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.copy_(torch.randn_like(p) / math.sqrt(p.shape[-1]))
    T = a.tokens
    hidden = getattr(cfg, "hidden_size", None) or getattr(cfg, "dim")
    heads = getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_heads")
    head_dim = getattr(cfg, "head_dim", None) or hidden // heads
    x = torch.randn(1, T, hidden)
    # Partial rotary (as HF's rotary modules read the config): cos/sin cover
    # the rotated features only.
    fraction = next((getattr(cfg, k) for k in ("partial_rotary_factor", "rotary_pct")
                     if getattr(cfg, k, None) is not None), 1.0)
    # GPT-J and CodeGen give the rotated width itself (config.rotary_dim).
    rot = getattr(cfg, "rotary_dim", None) or int(head_dim * fraction)
    # The base a rotary module of the file reads (when forward computes
    # cos/sin itself from position_ids, tx still takes them as inputs).
    base = next((float(getattr(cfg, k)) for k in ("rope_theta", "rotary_emb_base", "rope_base")
                 if getattr(cfg, k, None) is not None), 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, rot, 2).float() / rot))
    ang = torch.arange(T).float()[:, None] * inv[None, :]
    cos_h, sin_h = ang.cos(), ang.sin()
    table = rotary_module_table(model, T, rot, a.rope)
    if table is not None:
        # forward computes cos/sin with its own rotary module (scaled ones
        # too): tx takes that module's table as its inputs.
        cos_h, sin_h = table
    def layout(c, s):
        """(cos, sin) [T, rot / 2] as position_embeddings gives them."""
        if a.rope == "halves":
            return torch.cat([c, c], -1)[None], torch.cat([s, s], -1)[None]
        if a.rope == "interleaved":
            return (torch.repeat_interleave(c, 2, dim=-1)[None],
                    torch.repeat_interleave(s, 2, dim=-1)[None])
        return c[None], s[None]
    cos, sin = layout(cos_h, sin_h)
    # position_embeddings_<suffix> pairs: [T, rot / 2] each, from the base
    # ROPE_BASE_KEYS names.
    tables = {}
    for name in inspect.signature(model.forward).parameters:
        if kind_of(name) == "rope" and name != "position_embeddings":
            suffix = name[len(ROPE_PREFIX):]
            key = ROPE_BASE_KEYS.get(suffix, "rope_theta")
            b = float(getattr(cfg, key, None) or base)
            f = torch.arange(T).float()[:, None] * \
                (1.0 / (b ** (torch.arange(0, rot, 2).float() / rot)))[None, :]
            tables[name] = (suffix, f.cos(), f.sin())
    mask = torch.full((T, T), float("-inf")).triu(1)
    if a.window is not None:
        # HF's sliding-window causal mask (masking_utils: kv > q - window;
        # the older _prepare_4d_causal_attention_mask: tril(diagonal=-window)).
        mask = mask.masked_fill(torch.ones(T, T, dtype=torch.bool).tril(-a.window),
                                float("-inf"))
    mask = mask[None, None]
    call = {}
    for name in list(inspect.signature(model.forward).parameters):
        kind = kind_of(name)
        if kind == "activation":
            # A copy: forward may write hidden_states in place, and x.npy
            # must hold what it was given.
            call[name] = x.clone()
        elif kind == "rope" and name in tables:
            call[name] = layout(tables[name][1], tables[name][2])
        elif kind == "rope":
            call[name] = (cos, sin)
        elif kind in ("cos", "sin"):
            call[name] = cos if kind == "cos" else sin
        elif kind == "mask":
            padding = name == "attention_mask" and any(
                n in ("causal_attention_mask", "causal_mask")
                for n in inspect.signature(model.forward).parameters)
            call[name] = mask if a.mask == "causal" and not padding else None
        elif kind == "none":
            call[name] = None
        elif kind == "container":
            call[name] = {}
        elif kind == "positions":
            call[name] = torch.arange(T)[None]
        elif kind == "alibi":
            assert not getattr(cfg, "alibi", False), "ALiBi is not supported"
            call[name] = None
    if a.checkpoint == "bf16":
        # A bf16 checkpoint: the weights and inputs rounded to bf16 by torch;
        # the model runs on exactly those values, in f32 or (--compute bf16)
        # in bf16.
        model.to(torch.bfloat16)
        x, cos_h, sin_h = (t.to(torch.bfloat16) for t in (x, cos_h, sin_h))
        tables = {n: (sfx, c.to(torch.bfloat16), s.to(torch.bfloat16))
                  for n, (sfx, c, s) in tables.items()}
        for name, v in list(call.items()):
            if kind_of(name) in ("activation", "rope", "cos", "sin", "mask"):
                call[name] = bf16_args(v)
        if a.compute == "f32":
            model.float()
            call = {n: f32_args(v) for n, v in call.items()}
    with torch.no_grad():
        out = model(**call)
    while isinstance(out, (tuple, list)):
        out = out[0]
    os.makedirs(os.path.join(a.dir, "weights"), exist_ok=True)
    np.save(os.path.join(a.dir, "x.npy"), x[0].float().numpy())
    np.save(os.path.join(a.dir, "cos.npy"), cos_h.float().numpy())
    np.save(os.path.join(a.dir, "sin.npy"), sin_h.float().numpy())
    for suffix, c, s in tables.values():
        np.save(os.path.join(a.dir, "cos_%s.npy" % suffix), c.float().numpy())
        np.save(os.path.join(a.dir, "sin_%s.npy" % suffix), s.float().numpy())
    np.save(os.path.join(a.dir, "expected.npy"), out[0].float().numpy())
    save_containers(a.dir, call)
    state = {a.prefix + k: v for k, v in model.state_dict().items()}
    tensors = {k: v.float().numpy() for k, v in state.items()}
    for k, v in tensors.items():
        np.save(os.path.join(a.dir, "weights", k + ".npy"), v)
    try:
        from tx.safetensors import BF16, save_file
        if a.checkpoint == "bf16":
            # torch's own bf16 bits, as torch's safetensors writer stores them.
            tensors = {k: BF16(v.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
                       for k, v in state.items()}
        save_file(tensors, os.path.join(a.dir, "model.safetensors"))
    except ImportError:
        pass
    print("torch: %s forward on %d tokens, %d weight tensors, output %s"
          % (a.entry, T, len(tensors), "x".join(map(str, out[0].shape))))


def save_containers(d, call):
    """What each container argument holds after forward, as tx-run's
    --output-dir writes it: DIR/<argument>.<index>.<slot>.npy, in tx's
    token-major layout (batch dropped; [1, heads, T, d] -> [T, heads, d])."""
    for name, v in call.items():
        if kind_of(name) != "container":
            continue
        for index, values in v.items():
            if not isinstance(values, (tuple, list)):
                values = (values,)
            for slot, t in enumerate(values):
                t = t[0]
                if t.dim() == 3:
                    t = t.transpose(0, 1)
                np.save(os.path.join(d, "%s.%s.%d.npy" % (name, index, slot)),
                        t.float().contiguous().numpy())


def compare(a):
    ref = np.load(os.path.join(a.dir, a.expected)).astype(np.float64)
    got = np.load(a.out).astype(np.float64)
    if a.perturb:
        got.flat[got.size // 2] += 1e-4 * np.abs(ref).max()
    if ref.shape != got.shape:
        sys.exit("FAIL: shape %s, torch gives %s" % (got.shape, ref.shape))
    err = np.abs(got - ref).max() / np.abs(ref).max()
    ok = err <= a.rtol
    print("%s: max error %.2e of max |torch| (tolerance %.0e)"
          % ("OK" if ok else "FAIL", err, a.rtol))
    sys.exit(0 if ok else 1)


p = argparse.ArgumentParser()
sub = p.add_subparsers(dest="cmd", required=True)
r = sub.add_parser("run")
r.add_argument("modeling")
r.add_argument("config")
r.add_argument("dir")
r.add_argument("--entry", required=True)
r.add_argument("--layer-idx", type=int, default=0)
r.add_argument("--prefix", default="")
r.add_argument("--tokens", type=int, default=7)
r.add_argument("--seed", type=int, default=0)
r.add_argument("--mask", choices=["causal", "none"], default="causal",
               help="attention_mask: the additive causal mask, or None")
r.add_argument("--window", type=int, default=None,
               help="attention_mask: the sliding-window causal mask of this window "
                    "(what HF's model passes a sliding layer)")
r.add_argument("--checkpoint", choices=["f32", "bf16"], default="f32",
               help="dtype of model.safetensors (bf16: weights and inputs rounded by torch)")
r.add_argument("--compute", choices=["f32", "bf16"], default="f32",
               help="dtype torch computes in (with --checkpoint bf16)")
r.add_argument("--rope", choices=["halves", "interleaved", "pairs"], default="halves",
               help="layout of position_embeddings' cos/sin (tx always gets one "
                    "angle per pair)")
c = sub.add_parser("compare")
c.add_argument("dir")
c.add_argument("out")
c.add_argument("--rtol", type=float, default=1e-5)
c.add_argument("--perturb", action="store_true")
c.add_argument("--expected", default="expected.npy",
               help="the file of DIR to compare with (e.g. a container "
                    "value, shared_kv_states.3.0.npy)")
a = p.parse_args()
run(a) if a.cmd == "run" else compare(a)
