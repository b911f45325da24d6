// A Llama-style decoder layer, as its PyTorch forward is written:
//
//   h = input_layernorm(x)
//   q, k, v = q_proj(h), k_proj(h), v_proj(h)          # GQA: 4 query heads, 2 kv heads
//   q, k = rotary(q.view(T, 4, 16), cos, sin), rotary(k.view(T, 2, 16), cos, sin)
//   a = attention(q, k, v.view(T, 2, 16), causal)
//   h, residual = post_attention_layernorm(o_proj(a.view(T, 64)), residual=x)
//   out = down_proj(silu(gate_proj(h)) * up_proj(h)) + residual
//
// hidden 64, head_dim 16, intermediate 128, f32. The fusion pipeline merges
// q/k/v into one projection and gate/up into another.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.param @input_layernorm : memref<64xf32> {checkpoint = "model.layers.0.input_layernorm.weight"}
  tx.layer @q_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.q_proj"}
  tx.layer @k_proj : 64 -> 32, f32 {checkpoint = "model.layers.0.self_attn.k_proj"}
  tx.layer @v_proj : 64 -> 32, f32 {checkpoint = "model.layers.0.self_attn.v_proj"}
  tx.layer @o_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.o_proj"}
  tx.param @post_attention_layernorm : memref<64xf32> {checkpoint = "model.layers.0.post_attention_layernorm.weight"}
  tx.layer @gate_proj : 64 -> 128, f32 {checkpoint = "model.layers.0.mlp.gate_proj"}
  tx.layer @up_proj : 64 -> 128, f32 {checkpoint = "model.layers.0.mlp.up_proj"}
  tx.layer @down_proj : 128 -> 64, f32 {checkpoint = "model.layers.0.mlp.down_proj"}

  func.func @forward(%x: memref<?x64xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>) -> memref<?x64xf32> {
    %w_in = tx.get_param @input_layernorm : memref<64xf32>
    %h = tx.rmsnorm %x, %w_in eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>

    %q = tx.linear @q_proj(%h) : memref<?x64xf32> -> memref<?x64xf32>
    %k = tx.linear @k_proj(%h) : memref<?x64xf32> -> memref<?x32xf32>
    %v = tx.linear @v_proj(%h) : memref<?x64xf32> -> memref<?x32xf32>
    %q3 = tx.view %q : memref<?x64xf32> -> memref<?x4x16xf32>
    %k3 = tx.view %k : memref<?x32xf32> -> memref<?x2x16xf32>
    %v3 = tx.view %v : memref<?x32xf32> -> memref<?x2x16xf32>
    %qr = tx.rotary %q3, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %kr = tx.rotary %k3, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    %a = tx.attention %qr, %kr, %v3 scale 0.25 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %a2 = tx.view %a : memref<?x4x16xf32> -> memref<?x64xf32>
    %o = tx.linear @o_proj(%a2) : memref<?x64xf32> -> memref<?x64xf32>

    %w_post = tx.get_param @post_attention_layernorm : memref<64xf32>
    %h2, %res = tx.add_rmsnorm %o, %x, %w_post eps 1.0e-06 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>

    %g = tx.linear @gate_proj(%h2) : memref<?x64xf32> -> memref<?x128xf32>
    %u = tx.linear @up_proj(%h2) : memref<?x64xf32> -> memref<?x128xf32>
    %ga = tx.unary silu %g : memref<?x128xf32> -> memref<?x128xf32>
    %m = tx.binary mul %ga, %u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
    %d = tx.linear @down_proj(%m) : memref<?x128xf32> -> memref<?x64xf32>
    %out = tx.binary add %d, %res : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    return %out : memref<?x64xf32>
  }
}
