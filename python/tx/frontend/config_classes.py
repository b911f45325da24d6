"""What HF's config classes give for keys a config.json lacks.

A config.json is the config object's attributes as the transformers version
that saved it had them: a checkpoint saved before a key was added to its
config class (Pythia's has no attention_bias, Falcon-7B's no
num_kv_heads or ffn_hidden_size) relies on the class's __init__ default,
and some keys are filled from others when config.json holds null
(LlamaConfig's head_dim, num_key_value_heads). The modeling file reads the
attribute; `config_value` (table.py) gives what the object would hold:

- CLASS_DEFAULTS[model_type][key]: the __init__ default of the config class
  of that `model_type` (transformers 4.4x-4.5x), used when config.json has no
  such key. These win over the default of getattr(config, key, default), as
  on the real object.
- CLASS_FILLS[model_type][key](data): the value __init__ computes when the key
  is absent or null.
- CLASS_PROPERTIES[model_type][name](get): a @property of the config class
  (never in config.json: JambaConfig's layers_num_experts), computed from the
  other keys as `get(key)` reads them (config.json, else the class default).

A config.json without `model_type`, or of a model type not listed, gets
PretrainedConfig's defaults only (table.CONFIG_DEFAULTS): a key it lacks is
an error where forward reads it, and getattr(config, key, default) gives the
default. Add an entry for your own config class:

    from tx.frontend import config_classes
    config_classes.CLASS_DEFAULTS["my_model"] = {"attention_bias": False}
"""


def _heads(data):
    return data.get("num_attention_heads")


def _head_dim(data):
    hidden, heads = data.get("hidden_size"), data.get("num_attention_heads")
    if isinstance(hidden, int) and isinstance(heads, int) and heads > 0:
        return hidden // heads
    return None


def _four_hidden(data):
    hidden = data.get("hidden_size")
    return 4 * hidden if isinstance(hidden, int) else None


# Keys shared by the Llama-like classes (LlamaConfig and the classes
# written from it): their defaults when config.json predates them.
_LLAMA_LIKE = {
    "hidden_act": "silu", "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
    "rope_scaling": None, "attention_bias": False, "attention_dropout": 0.0,
    "pretraining_tp": 1, "tie_word_embeddings": False,
}
_KV_HEADS = {"num_key_value_heads": _heads}

CLASS_DEFAULTS = {
    "llama": dict(_LLAMA_LIKE, mlp_bias=False, max_position_embeddings=2048,
                  num_key_value_heads=None, head_dim=None),
    "mistral": dict(_LLAMA_LIKE, sliding_window=4096, num_key_value_heads=8,
                    head_dim=None, max_position_embeddings=4096 * 32),
    "mixtral": dict(_LLAMA_LIKE, sliding_window=None, num_key_value_heads=8,
                    head_dim=None, max_position_embeddings=4096 * 32, rope_theta=1e6,
                    rms_norm_eps=1e-5,
                    num_experts_per_tok=2, num_local_experts=8),
    "qwen2": dict(_LLAMA_LIKE, use_sliding_window=False, sliding_window=4096,
                  max_window_layers=28, max_position_embeddings=32768,
                  num_key_value_heads=32),
    "qwen3": dict(_LLAMA_LIKE, use_sliding_window=False, sliding_window=4096,
                  max_window_layers=28, max_position_embeddings=32768,
                  num_key_value_heads=32, head_dim=128),
    "granite": dict(_LLAMA_LIKE, mlp_bias=False, max_position_embeddings=2048,
                    num_key_value_heads=None, embedding_multiplier=1.0,
                    logits_scaling=1.0, residual_multiplier=1.0, attention_multiplier=1.0),
    "olmo": dict(_LLAMA_LIKE, clip_qkv=None, max_position_embeddings=2048,
                 num_key_value_heads=None),
    "olmo2": dict(_LLAMA_LIKE, clip_qkv=None, max_position_embeddings=2048,
                  num_key_value_heads=None, rms_norm_eps=1e-5),
    "phi3": {"hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
             "rope_scaling": None, "partial_rotary_factor": 1.0, "sliding_window": None,
             "attention_dropout": 0.0, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
             "num_key_value_heads": None, "max_position_embeddings": 4096,
             "original_max_position_embeddings": 4096, "tie_word_embeddings": False},
    "gemma": {"hidden_act": "gelu_pytorch_tanh", "hidden_activation": None,
              "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "attention_bias": False,
              "attention_dropout": 0.0, "head_dim": 256, "max_position_embeddings": 8192,
              "num_key_value_heads": 16},
    "gemma2": {"hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
               "rope_theta": 10000.0, "attention_bias": False, "attention_dropout": 0.0,
               "head_dim": 256, "max_position_embeddings": 8192, "num_key_value_heads": 4,
               "query_pre_attn_scalar": 256, "sliding_window": 4096,
               "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0},
    "gemma3_text": {"hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-6,
                    "rope_theta": 1_000_000.0, "rope_local_base_freq": 10000.0,
                    "attention_bias": False, "attention_dropout": 0.0, "head_dim": 256,
                    "max_position_embeddings": 131072, "num_key_value_heads": 4,
                    "query_pre_attn_scalar": 256, "sliding_window": 4096,
                    "sliding_window_pattern": 6, "final_logit_softcapping": None,
                    "attn_logit_softcapping": None, "rope_scaling": None},
    "gpt_neox": {"hidden_act": "gelu", "rotary_pct": 0.25, "rotary_emb_base": 10000,
                 "attention_dropout": 0.0, "hidden_dropout": 0.0, "classifier_dropout": 0.1,
                 "max_position_embeddings": 2048, "layer_norm_eps": 1e-5,
                 "use_parallel_residual": True, "rope_scaling": None,
                 "attention_bias": True, "tie_word_embeddings": False,
                 "rope_theta": None, "partial_rotary_factor": None},
    "falcon": {"num_ln_in_parallel_attn": None, "layer_norm_epsilon": 1e-5,
               "hidden_dropout": 0.0, "attention_dropout": 0.0, "num_kv_heads": None,
               "alibi": False, "new_decoder_architecture": False, "multi_query": True,
               "parallel_attn": True, "bias": False, "max_position_embeddings": 2048,
               "rope_theta": 10000.0, "rope_scaling": None, "ffn_hidden_size": None,
               "activation": "gelu"},
    "cohere": dict(_LLAMA_LIKE, layer_norm_eps=1e-5, logit_scale=0.0625, use_qk_norm=False,
                   max_position_embeddings=8192, num_key_value_heads=None,
                   tie_word_embeddings=True),
    "stablelm": {"hidden_act": "silu", "layer_norm_eps": 1e-5, "rope_theta": 10000,
                 "rope_scaling": None, "partial_rotary_factor": 0.25, "use_qkv_bias": False,
                 "qk_layernorm": False, "use_parallel_residual": False,
                 "hidden_dropout": 0.0, "attention_dropout": 0.0,
                 "max_position_embeddings": 4096, "num_key_value_heads": 32},
    "phi": {"hidden_act": "gelu_new", "layer_norm_eps": 1e-5, "rope_theta": 10000.0,
            "rope_scaling": None, "partial_rotary_factor": 0.5, "qk_layernorm": False,
            "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attention_dropout": 0.0,
            "max_position_embeddings": 2048, "num_key_value_heads": None},
    "starcoder2": {"hidden_act": "gelu_pytorch_tanh", "norm_epsilon": 1e-5,
                   "rope_theta": 10000.0, "rope_scaling": None, "sliding_window": None,
                   "attention_dropout": 0.0, "residual_dropout": 0.0,
                   "embedding_dropout": 0.0, "use_bias": True, "num_key_value_heads": 2,
                   "max_position_embeddings": 4096},
}
CLASS_DEFAULTS["gemma3"] = CLASS_DEFAULTS["gemma3_text"]
CLASS_DEFAULTS["jamba"] = dict(
    hidden_act="silu", attention_dropout=0.0, tie_word_embeddings=False, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
    num_attention_heads=32, num_key_value_heads=8, rms_norm_eps=1e-6, num_experts=16,
    num_experts_per_tok=2, expert_layer_period=2, expert_layer_offset=1,
    attn_layer_period=8, attn_layer_offset=4, use_mamba_kernels=True)

# Keys whose null (or absence) __init__ replaces by a value computed from
# other keys.
CLASS_FILLS = {
    "llama": dict(_KV_HEADS, head_dim=_head_dim),
    "mistral": dict(_KV_HEADS, head_dim=_head_dim),
    "mixtral": dict(_KV_HEADS, head_dim=_head_dim),
    "qwen2": dict(_KV_HEADS),
    "qwen3": dict(_KV_HEADS),
    "granite": dict(_KV_HEADS),
    "olmo": dict(_KV_HEADS),
    "olmo2": dict(_KV_HEADS),
    "phi3": dict(_KV_HEADS),
    "cohere": dict(_KV_HEADS),
    "phi": dict(_KV_HEADS),
    "stablelm": dict(_KV_HEADS),
    "falcon": {"num_kv_heads": _heads, "ffn_hidden_size": _four_hidden},
    # GPTNeoXConfig sets rope_theta and partial_rotary_factor from
    # rotary_emb_base and rotary_pct.
    "gpt_neox": {"rope_theta": lambda d: d.get("rotary_emb_base", 10000),
                 "partial_rotary_factor": lambda d: d.get("rotary_pct", 0.25)},
}

# JambaConfig's properties: which layers are attention layers and how many
# experts each layer's feed-forward has.
CLASS_PROPERTIES = {
    "jamba": {
        "layers_block_type": lambda get: [
            "attention" if i % get("attn_layer_period") == get("attn_layer_offset")
            else "mamba" for i in range(get("num_hidden_layers"))],
        "layers_num_experts": lambda get: [
            get("num_experts") if i % get("expert_layer_period") == get("expert_layer_offset")
            else 1 for i in range(get("num_hidden_layers"))],
    },
}

_MISSING = object()


def class_value(data, name):
    """(True, value) where the config class of data's model_type gives
    `name` a value config.json does not (its __init__ default of an absent
    key, or the fill of a null one, the default's null included); (False,
    None) otherwise."""
    model = data.get("model_type")
    if not isinstance(model, str):
        return False, None
    found, value = False, data.get(name, _MISSING)
    prop = CLASS_PROPERTIES.get(model, {}).get(name)
    if value is _MISSING and prop is not None:
        def get(key):
            ok, v = class_value(data, key)
            if ok:
                return v
            if key not in data:
                raise KeyError(key)
            return data[key]
        try:
            return True, prop(get)
        except (KeyError, TypeError, ZeroDivisionError):
            return False, None  # a key it needs is missing: an error where read
    if value is _MISSING:
        defaults = CLASS_DEFAULTS.get(model, {})
        if name not in defaults:
            return False, None
        found, value = True, defaults[name]
    fill = CLASS_FILLS.get(model, {}).get(name)
    if value is None and fill is not None:
        filled = fill(data)
        if filled is not None:
            return True, filled
    return found, value
