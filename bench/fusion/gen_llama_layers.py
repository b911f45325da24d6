#!/usr/bin/env python3
"""Writes a tx module of N Llama-style decoder layers in one forward.

Used to measure the cost of the fusion pipeline on a large module:

  python3 bench/fusion/gen_llama_layers.py 80 > /tmp/big.mlir
  tx-opt /tmp/big.mlir -mlir-timing -o /dev/null
  tx-opt /tmp/big.mlir -tx-fusion -mlir-timing -o /dev/null

Llama-3-8B shapes: hidden 4096, 32 query heads, 8 kv heads, head_dim 128,
intermediate 14336. `--small` writes the same layers with hidden 64, 4 query
heads, 2 kv heads, head_dim 16, intermediate 128 (small enough to run in a
test: test/Execution/Inputs/layers3.mlir is `gen_llama_layers.py 3 --small`).
"""
import sys

H, QH, KVH, D, I = 4096, 32, 8, 128, 14336


def layer(i, x):
    p = f"l{i}_"
    ck = f"model.layers.{i}"
    decls = f"""
  tx.param @{p}input_layernorm : memref<{H}xf32> {{checkpoint = "{ck}.input_layernorm.weight"}}
  tx.layer @{p}q_proj : {H} -> {QH * D}, f32 {{checkpoint = "{ck}.self_attn.q_proj", heads = {QH}}}
  tx.layer @{p}k_proj : {H} -> {KVH * D}, f32 {{checkpoint = "{ck}.self_attn.k_proj", heads = {KVH}}}
  tx.layer @{p}v_proj : {H} -> {KVH * D}, f32 {{checkpoint = "{ck}.self_attn.v_proj", heads = {KVH}}}
  tx.layer @{p}o_proj : {QH * D} -> {H}, f32 {{checkpoint = "{ck}.self_attn.o_proj"}}
  tx.param @{p}post_attention_layernorm : memref<{H}xf32> {{checkpoint = "{ck}.post_attention_layernorm.weight"}}
  tx.layer @{p}gate_proj : {H} -> {I}, f32 {{checkpoint = "{ck}.mlp.gate_proj"}}
  tx.layer @{p}up_proj : {H} -> {I}, f32 {{checkpoint = "{ck}.mlp.up_proj"}}
  tx.layer @{p}down_proj : {I} -> {H}, f32 {{checkpoint = "{ck}.mlp.down_proj"}}"""
    m = f"memref<?x{H}xf32>"
    body = f"""
    %{p}w_in = tx.get_param @{p}input_layernorm : memref<{H}xf32>
    %{p}h = tx.rmsnorm {x}, %{p}w_in eps 1.0e-05 : {m}, memref<{H}xf32> -> {m}
    %{p}q = tx.linear @{p}q_proj(%{p}h) : {m} -> memref<?x{QH * D}xf32>
    %{p}k = tx.linear @{p}k_proj(%{p}h) : {m} -> memref<?x{KVH * D}xf32>
    %{p}v = tx.linear @{p}v_proj(%{p}h) : {m} -> memref<?x{KVH * D}xf32>
    %{p}q3 = tx.view %{p}q : memref<?x{QH * D}xf32> -> memref<?x{QH}x{D}xf32>
    %{p}k3 = tx.view %{p}k : memref<?x{KVH * D}xf32> -> memref<?x{KVH}x{D}xf32>
    %{p}v3 = tx.view %{p}v : memref<?x{KVH * D}xf32> -> memref<?x{KVH}x{D}xf32>
    %{p}qr = tx.rotary %{p}q3, %cos, %sin : memref<?x{QH}x{D}xf32>, memref<?x{D // 2}xf32>, memref<?x{D // 2}xf32> -> memref<?x{QH}x{D}xf32>
    %{p}kr = tx.rotary %{p}k3, %cos, %sin : memref<?x{KVH}x{D}xf32>, memref<?x{D // 2}xf32>, memref<?x{D // 2}xf32> -> memref<?x{KVH}x{D}xf32>
    %{p}a = tx.attention %{p}qr, %{p}kr, %{p}v3 scale 0.088 causal : memref<?x{QH}x{D}xf32>, memref<?x{KVH}x{D}xf32>, memref<?x{KVH}x{D}xf32> -> memref<?x{QH}x{D}xf32>
    %{p}a2 = tx.view %{p}a : memref<?x{QH}x{D}xf32> -> memref<?x{QH * D}xf32>
    %{p}o = tx.linear @{p}o_proj(%{p}a2) : memref<?x{QH * D}xf32> -> {m}
    %{p}w_post = tx.get_param @{p}post_attention_layernorm : memref<{H}xf32>
    %{p}h2, %{p}res = tx.add_rmsnorm %{p}o, {x}, %{p}w_post eps 1.0e-05 : {m}, {m}, memref<{H}xf32> -> {m}, {m}
    %{p}g = tx.linear @{p}gate_proj(%{p}h2) : {m} -> memref<?x{I}xf32>
    %{p}u = tx.linear @{p}up_proj(%{p}h2) : {m} -> memref<?x{I}xf32>
    %{p}ga = tx.unary silu %{p}g : memref<?x{I}xf32> -> memref<?x{I}xf32>
    %{p}mm = tx.binary mul %{p}ga, %{p}u : memref<?x{I}xf32>, memref<?x{I}xf32> -> memref<?x{I}xf32>
    %{p}d = tx.linear @{p}down_proj(%{p}mm) : memref<?x{I}xf32> -> {m}
    %{p}out = tx.binary add %{p}d, %{p}res : {m}, {m} -> {m}"""
    return decls, body, f"%{p}out"


def main():
    global H, QH, KVH, D, I
    args = [a for a in sys.argv[1:] if a != "--small"]
    if "--small" in sys.argv[1:]:
        H, QH, KVH, D, I = 64, 4, 2, 16, 128
    n = int(args[0]) if args else 80
    decls, bodies, x = [], [], "%x"
    for i in range(n):
        d, b, x = layer(i, x)
        decls.append(d)
        bodies.append(b)
    print("module {")
    print("".join(decls))
    print(f"  func.func @forward(%x: memref<?x{H}xf32>, %cos: memref<?x{D // 2}xf32>, "
          f"%sin: memref<?x{D // 2}xf32>) -> memref<?x{H}xf32> {{")
    print("".join(bodies))
    print(f"    return {x} : memref<?x{H}xf32>")
    print("  }")
    print("}")


if __name__ == "__main__":
    main()
