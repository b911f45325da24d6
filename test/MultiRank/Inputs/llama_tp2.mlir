// Rank shard of examples/llama_decoder_layer.mlir under tensor parallelism
// 2 (Megatron-style): column-parallel q/k/v (2 of 4 query heads, 1 of 2 kv
// heads) and gate/up (64 of 128 rows), row-parallel o_proj and down_proj
// (half of the input columns) followed by an all-reduce. The checkpoint
// names are the unsharded model's; each rank reads its shard of them
// (make_weights.py). Sequence parallelism is on for >= 4 tokens.
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 4>} {
  tx.param @input_layernorm : memref<64xf32> {checkpoint = "model.layers.0.input_layernorm.weight"}
  tx.layer @q_proj : 64 -> 32, f32 {checkpoint = "model.layers.0.self_attn.q_proj"}
  tx.layer @k_proj : 64 -> 16, f32 {checkpoint = "model.layers.0.self_attn.k_proj"}
  tx.layer @v_proj : 64 -> 16, f32 {checkpoint = "model.layers.0.self_attn.v_proj"}
  tx.layer @o_proj : 32 -> 64, f32 {checkpoint = "model.layers.0.self_attn.o_proj"}
  tx.param @post_attention_layernorm : memref<64xf32> {checkpoint = "model.layers.0.post_attention_layernorm.weight"}
  tx.layer @gate_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.mlp.gate_proj"}
  tx.layer @up_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.mlp.up_proj"}
  tx.layer @down_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.mlp.down_proj"}

  func.func @forward(%x: memref<?x64xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>) -> memref<?x64xf32> {
    %w_in = tx.get_param @input_layernorm : memref<64xf32>
    %h = tx.rmsnorm %x, %w_in eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>

    %q = tx.linear @q_proj(%h) : memref<?x64xf32> -> memref<?x32xf32>
    %k = tx.linear @k_proj(%h) : memref<?x64xf32> -> memref<?x16xf32>
    %v = tx.linear @v_proj(%h) : memref<?x64xf32> -> memref<?x16xf32>
    %q3 = tx.view %q : memref<?x32xf32> -> memref<?x2x16xf32>
    %k3 = tx.view %k : memref<?x16xf32> -> memref<?x1x16xf32>
    %v3 = tx.view %v : memref<?x16xf32> -> memref<?x1x16xf32>
    %qr = tx.rotary %q3, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    %kr = tx.rotary %k3, %cos, %sin : memref<?x1x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x1x16xf32>
    %a = tx.attention %qr, %kr, %v3 scale 0.25 causal : memref<?x2x16xf32>, memref<?x1x16xf32>, memref<?x1x16xf32> -> memref<?x2x16xf32>
    %a2 = tx.view %a : memref<?x2x16xf32> -> memref<?x32xf32>
    %o = tx.linear @o_proj(%a2) : memref<?x32xf32> -> memref<?x64xf32>
    %o_sum = tx.all_reduce %o group 2 : memref<?x64xf32> -> memref<?x64xf32>

    %w_post = tx.get_param @post_attention_layernorm : memref<64xf32>
    %h2, %res = tx.add_rmsnorm %o_sum, %x, %w_post eps 1.0e-06 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>

    %g = tx.linear @gate_proj(%h2) : memref<?x64xf32> -> memref<?x64xf32>
    %u = tx.linear @up_proj(%h2) : memref<?x64xf32> -> memref<?x64xf32>
    %ga = tx.unary silu %g : memref<?x64xf32> -> memref<?x64xf32>
    %m = tx.binary mul %ga, %u : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    %d = tx.linear @down_proj(%m) : memref<?x64xf32> -> memref<?x64xf32>
    %d_sum = tx.all_reduce %d group 2 : memref<?x64xf32> -> memref<?x64xf32>
    %out = tx.binary add %d_sum, %res : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    return %out : memref<?x64xf32>
  }
}
