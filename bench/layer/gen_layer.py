#!/usr/bin/env python3
"""A Llama decoder layer as a tx module, its weights and inputs as .npy.

Shared by bench/layer/bench_layer.py (which imports it) and usable alone:

  python3 bench/layer/gen_layer.py 8b > /tmp/l8b.mlir

Shapes ("configs"):
  bundled  examples/llama_decoder_layer.mlir as it is (hidden 64, GQA 4/2
           heads of 16, intermediate 128, eps 1e-6, scale 0.25)
  8b       Llama-3-8B: hidden 4096, GQA 32/8 heads of 128, intermediate
           14336, eps 1e-5, scale 1/sqrt(128)
  tiny     hidden 128, GQA 4/2 heads of 32, intermediate 256 (the lit test)
All f32, one layer, checkpoint names model.layers.0.*, a dynamic token count.
"""
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CONFIGS = {
    "bundled": dict(hidden=64, heads=4, kv_heads=2, head_dim=16,
                    intermediate=128, eps=1e-6, scale=0.25,
                    file=os.path.join(ROOT, "examples", "llama_decoder_layer.mlir")),
    "8b": dict(hidden=4096, heads=32, kv_heads=8, head_dim=128,
               intermediate=14336, eps=1e-5, scale=1 / math.sqrt(128)),
    "tiny": dict(hidden=128, heads=4, kv_heads=2, head_dim=32,
                 intermediate=256, eps=1e-5, scale=1 / math.sqrt(32)),
}

PREFIX = "model.layers.0."


def module_text(c):
    """The layer as tx (the bundled config: the example file itself)."""
    if "file" in c:
        with open(c["file"]) as f:
            return f.read()
    H, QH, KVH, D, I = (c["hidden"], c["heads"], c["kv_heads"], c["head_dim"],
                        c["intermediate"])
    m, q, kv, i = (f"memref<?x{H}xf32>", f"memref<?x{QH * D}xf32>",
                   f"memref<?x{KVH * D}xf32>", f"memref<?x{I}xf32>")
    q3, kv3, t = (f"memref<?x{QH}x{D}xf32>", f"memref<?x{KVH}x{D}xf32>",
                  f"memref<?x{D // 2}xf32>")
    w = f"memref<{H}xf32>"
    eps, scale = "%.8e" % c["eps"], "%.8e" % c["scale"]
    ck = PREFIX.rstrip(".")
    return f"""module attributes {{tx.config = #tx.config<tp_size = 1>}} {{
  tx.param @input_layernorm : {w} {{checkpoint = "{ck}.input_layernorm.weight"}}
  tx.layer @q_proj : {H} -> {QH * D}, f32 {{checkpoint = "{ck}.self_attn.q_proj"}}
  tx.layer @k_proj : {H} -> {KVH * D}, f32 {{checkpoint = "{ck}.self_attn.k_proj"}}
  tx.layer @v_proj : {H} -> {KVH * D}, f32 {{checkpoint = "{ck}.self_attn.v_proj"}}
  tx.layer @o_proj : {QH * D} -> {H}, f32 {{checkpoint = "{ck}.self_attn.o_proj"}}
  tx.param @post_attention_layernorm : {w} {{checkpoint = "{ck}.post_attention_layernorm.weight"}}
  tx.layer @gate_proj : {H} -> {I}, f32 {{checkpoint = "{ck}.mlp.gate_proj"}}
  tx.layer @up_proj : {H} -> {I}, f32 {{checkpoint = "{ck}.mlp.up_proj"}}
  tx.layer @down_proj : {I} -> {H}, f32 {{checkpoint = "{ck}.mlp.down_proj"}}

  func.func @forward(%x: {m}, %cos: {t}, %sin: {t}) -> {m} {{
    %w_in = tx.get_param @input_layernorm : {w}
    %h = tx.rmsnorm %x, %w_in eps {eps} : {m}, {w} -> {m}
    %q = tx.linear @q_proj(%h) : {m} -> {q}
    %k = tx.linear @k_proj(%h) : {m} -> {kv}
    %v = tx.linear @v_proj(%h) : {m} -> {kv}
    %q3 = tx.view %q : {q} -> {q3}
    %k3 = tx.view %k : {kv} -> {kv3}
    %v3 = tx.view %v : {kv} -> {kv3}
    %qr = tx.rotary %q3, %cos, %sin : {q3}, {t}, {t} -> {q3}
    %kr = tx.rotary %k3, %cos, %sin : {kv3}, {t}, {t} -> {kv3}
    %a = tx.attention %qr, %kr, %v3 scale {scale} causal : {q3}, {kv3}, {kv3} -> {q3}
    %a2 = tx.view %a : {q3} -> {q}
    %o = tx.linear @o_proj(%a2) : {q} -> {m}
    %w_post = tx.get_param @post_attention_layernorm : {w}
    %h2, %res = tx.add_rmsnorm %o, %x, %w_post eps {eps} : {m}, {m}, {w} -> {m}, {m}
    %g = tx.linear @gate_proj(%h2) : {m} -> {i}
    %u = tx.linear @up_proj(%h2) : {m} -> {i}
    %ga = tx.unary silu %g : {i} -> {i}
    %mm = tx.binary mul %ga, %u : {i}, {i} -> {i}
    %d = tx.linear @down_proj(%mm) : {i} -> {m}
    %out = tx.binary add %d, %res : {m}, {m} -> {m}
    return %out : {m}
  }}
}}
"""


def weight_shapes(c):
    """Checkpoint tensor name -> shape."""
    H, QH, KVH, D, I = (c["hidden"], c["heads"], c["kv_heads"], c["head_dim"],
                        c["intermediate"])
    a, m = PREFIX + "self_attn.", PREFIX + "mlp."
    return {
        PREFIX + "input_layernorm.weight": (H,),
        a + "q_proj.weight": (QH * D, H),
        a + "k_proj.weight": (KVH * D, H),
        a + "v_proj.weight": (KVH * D, H),
        a + "o_proj.weight": (H, QH * D),
        PREFIX + "post_attention_layernorm.weight": (H,),
        m + "gate_proj.weight": (I, H),
        m + "up_proj.weight": (I, H),
        m + "down_proj.weight": (H, I),
    }


def write_weights(c, directory, seed=0):
    """Writes <directory>/<tensor>.npy (uniform, scaled by 1/sqrt(fan-in) so
    that activations stay of order one; norms near 1). Kept when present."""
    import numpy as np
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name, shape in weight_shapes(c).items():
        path = os.path.join(directory, name + ".npy")
        if os.path.exists(path):
            continue
        if len(shape) == 1:
            w = 1 + 0.1 * rng.standard_normal(shape, dtype=np.float32)
        else:
            bound = 1 / math.sqrt(shape[1])
            w = rng.uniform(-bound, bound, size=shape).astype(np.float32)
        np.save(path + ".tmp.npy", w)
        os.replace(path + ".tmp.npy", path)


def write_inputs(c, tokens, directory, seed=1):
    """x [T, hidden] and the rotary tables cos, sin [T, head_dim/2] of
    positions 0..T-1 (base 500000, Llama 3's); returns the three paths."""
    import numpy as np
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed + tokens)
    x = rng.standard_normal((tokens, c["hidden"]), dtype=np.float32)
    half = c["head_dim"] // 2
    inv = 500000.0 ** (-np.arange(half, dtype=np.float64) / half)
    ang = np.arange(tokens, dtype=np.float64)[:, None] * inv[None, :]
    paths = []
    for name, a in (("x", x), ("cos", np.cos(ang).astype(np.float32)),
                    ("sin", np.sin(ang).astype(np.float32))):
        p = os.path.join(directory, f"{name}.T{tokens}.npy")
        np.save(p, a)
        paths.append(p)
    return paths


if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else "8b"
    if name not in CONFIGS:
        sys.exit(f"gen_layer.py: unknown config '{name}' (have: {', '.join(CONFIGS)})")
    sys.stdout.write(module_text(CONFIGS[name]))
