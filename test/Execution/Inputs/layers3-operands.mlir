module {

  tx.param @l0_input_layernorm : memref<64xf32> {checkpoint = "model.layers.0.input_layernorm.weight"}
  tx.layer @l0_q_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.q_proj", heads = 4}
  tx.layer @l0_k_proj : 64 -> 32, f32 {checkpoint = "model.layers.0.self_attn.k_proj", heads = 2}
  tx.layer @l0_v_proj : 64 -> 32, f32 {checkpoint = "model.layers.0.self_attn.v_proj", heads = 2}
  tx.layer @l0_o_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.o_proj"}
  tx.param @l0_post_attention_layernorm : memref<64xf32> {checkpoint = "model.layers.0.post_attention_layernorm.weight"}
  tx.layer @l0_gate_proj : 64 -> 128, f32 {checkpoint = "model.layers.0.mlp.gate_proj"}
  tx.layer @l0_up_proj : 64 -> 128, f32 {checkpoint = "model.layers.0.mlp.up_proj"}
  tx.layer @l0_down_proj : 128 -> 64, f32 {checkpoint = "model.layers.0.mlp.down_proj"}
  tx.param @l1_input_layernorm : memref<64xf32> {checkpoint = "model.layers.1.input_layernorm.weight"}
  tx.layer @l1_q_proj : 64 -> 64, f32 {checkpoint = "model.layers.1.self_attn.q_proj", heads = 4}
  tx.layer @l1_k_proj : 64 -> 32, f32 {checkpoint = "model.layers.1.self_attn.k_proj", heads = 2}
  tx.layer @l1_v_proj : 64 -> 32, f32 {checkpoint = "model.layers.1.self_attn.v_proj", heads = 2}
  tx.layer @l1_o_proj : 64 -> 64, f32 {checkpoint = "model.layers.1.self_attn.o_proj"}
  tx.param @l1_post_attention_layernorm : memref<64xf32> {checkpoint = "model.layers.1.post_attention_layernorm.weight"}
  tx.layer @l1_gate_proj : 64 -> 128, f32 {checkpoint = "model.layers.1.mlp.gate_proj"}
  tx.layer @l1_up_proj : 64 -> 128, f32 {checkpoint = "model.layers.1.mlp.up_proj"}
  tx.layer @l1_down_proj : 128 -> 64, f32 {checkpoint = "model.layers.1.mlp.down_proj"}
  tx.param @l2_input_layernorm : memref<64xf32> {checkpoint = "model.layers.2.input_layernorm.weight"}
  tx.layer @l2_q_proj : 64 -> 64, f32 {checkpoint = "model.layers.2.self_attn.q_proj", heads = 4}
  tx.layer @l2_k_proj : 64 -> 32, f32 {checkpoint = "model.layers.2.self_attn.k_proj", heads = 2}
  tx.layer @l2_v_proj : 64 -> 32, f32 {checkpoint = "model.layers.2.self_attn.v_proj", heads = 2}
  tx.layer @l2_o_proj : 64 -> 64, f32 {checkpoint = "model.layers.2.self_attn.o_proj"}
  tx.param @l2_post_attention_layernorm : memref<64xf32> {checkpoint = "model.layers.2.post_attention_layernorm.weight"}
  tx.layer @l2_gate_proj : 64 -> 128, f32 {checkpoint = "model.layers.2.mlp.gate_proj"}
  tx.layer @l2_up_proj : 64 -> 128, f32 {checkpoint = "model.layers.2.mlp.up_proj"}
  tx.layer @l2_down_proj : 128 -> 64, f32 {checkpoint = "model.layers.2.mlp.down_proj"}
  func.func @forward(%x: memref<?x64xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>) -> memref<?x64xf32> {

    %l0_w_in = tx.get_param @l0_input_layernorm : memref<64xf32>
    %l0_h = tx.rmsnorm %x, %l0_w_in eps 1.0e-05 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %l0_q = tx.linear @l0_q_proj(%l0_h) : memref<?x64xf32> -> memref<?x64xf32>
    %l0_k = tx.linear @l0_k_proj(%l0_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l0_v = tx.linear @l0_v_proj(%l0_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l0_q3 = tx.view %l0_q : memref<?x64xf32> -> memref<?x4x16xf32>
    %l0_k3 = tx.view %l0_k : memref<?x32xf32> -> memref<?x2x16xf32>
    %l0_v3 = tx.view %l0_v : memref<?x32xf32> -> memref<?x2x16xf32>
    %l0_qr = tx.rotary %l0_q3, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %l0_kr = tx.rotary %l0_k3, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    %l0_a = tx.attention %l0_qr, %l0_kr, %l0_v3 scale 0.088 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %l0_a2 = tx.view %l0_a : memref<?x4x16xf32> -> memref<?x64xf32>
    %l0_o = tx.linear @l0_o_proj(%l0_a2) : memref<?x64xf32> -> memref<?x64xf32>
    %l0_w_post = tx.get_param @l0_post_attention_layernorm : memref<64xf32>
    %l0_h2, %l0_res = tx.add_rmsnorm %l0_o, %x, %l0_w_post eps 1.0e-05 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %l0_g = tx.linear @l0_gate_proj(%l0_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l0_u = tx.linear @l0_up_proj(%l0_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l0_ga = tx.unary silu %l0_g : memref<?x128xf32> -> memref<?x128xf32>
    %l0_mm = tx.binary mul %l0_ga, %l0_u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
    %l0_d = tx.linear @l0_down_proj(%l0_mm) : memref<?x128xf32> -> memref<?x64xf32>
    %l0_out = tx.binary add %l0_d, %l0_res : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    %l1_w_in = tx.get_param @l1_input_layernorm : memref<64xf32>
    %l1_h = tx.rmsnorm %l0_out, %l1_w_in eps 1.0e-05 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %l1_q = tx.linear @l1_q_proj(%l1_h) : memref<?x64xf32> -> memref<?x64xf32>
    %l1_k = tx.linear @l1_k_proj(%l1_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l1_v = tx.linear @l1_v_proj(%l1_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l1_q3 = tx.view %l1_q : memref<?x64xf32> -> memref<?x4x16xf32>
    %l1_k3 = tx.view %l1_k : memref<?x32xf32> -> memref<?x2x16xf32>
    %l1_v3 = tx.view %l1_v : memref<?x32xf32> -> memref<?x2x16xf32>
    %l1_qr = tx.rotary %l1_q3, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %l1_kr = tx.rotary %l1_k3, %sin, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    %l1_a = tx.attention %l1_qr, %l1_kr, %l1_v3 scale 0.088 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %l1_a2 = tx.view %l1_a : memref<?x4x16xf32> -> memref<?x64xf32>
    %l1_o = tx.linear @l1_o_proj(%l1_a2) : memref<?x64xf32> -> memref<?x64xf32>
    %l1_w_post = tx.get_param @l1_post_attention_layernorm : memref<64xf32>
    %l1_h2, %l1_res = tx.add_rmsnorm %l1_o, %l0_out, %l1_w_post eps 1.0e-05 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %l1_g = tx.linear @l1_gate_proj(%l1_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l1_u = tx.linear @l1_up_proj(%l1_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l1_ga = tx.unary silu %l1_g : memref<?x128xf32> -> memref<?x128xf32>
    %l1_mm = tx.binary mul %l1_ga, %l1_u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
    %l1_d = tx.linear @l1_down_proj(%l1_mm) : memref<?x128xf32> -> memref<?x64xf32>
    %l1_out = tx.binary add %l1_d, %l1_res : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    %l2_w_in = tx.get_param @l2_input_layernorm : memref<64xf32>
    %l2_h = tx.rmsnorm %l1_out, %l2_w_in eps 1.0e-05 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %l2_q = tx.linear @l2_q_proj(%l2_h) : memref<?x64xf32> -> memref<?x64xf32>
    %l2_k = tx.linear @l2_k_proj(%l2_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l2_v = tx.linear @l2_v_proj(%l2_h) : memref<?x64xf32> -> memref<?x32xf32>
    %l2_q3 = tx.view %l2_q : memref<?x64xf32> -> memref<?x4x16xf32>
    %l2_k3 = tx.view %l2_k : memref<?x32xf32> -> memref<?x2x16xf32>
    %l2_v3 = tx.view %l2_v : memref<?x32xf32> -> memref<?x2x16xf32>
    %l2_qr = tx.rotary %l2_q3, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %l2_kr = tx.rotary %l2_k3, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    %l2_a = tx.attention %l2_qr, %l2_kr, %l2_v3 scale 0.088 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %l2_a2 = tx.view %l2_a : memref<?x4x16xf32> -> memref<?x64xf32>
    %l2_o = tx.linear @l2_o_proj(%l2_a2) : memref<?x64xf32> -> memref<?x64xf32>
    %l2_w_post = tx.get_param @l2_post_attention_layernorm : memref<64xf32>
    %l2_h2, %l2_res = tx.add_rmsnorm %l2_o, %l1_out, %l2_w_post eps 1.0e-05 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %l2_g = tx.linear @l2_gate_proj(%l2_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l2_u = tx.linear @l2_up_proj(%l2_h2) : memref<?x64xf32> -> memref<?x128xf32>
    %l2_ga = tx.unary silu %l2_g : memref<?x128xf32> -> memref<?x128xf32>
    %l2_mm = tx.binary mul %l2_ga, %l2_u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
    %l2_d = tx.linear @l2_down_proj(%l2_mm) : memref<?x128xf32> -> memref<?x64xf32>
    %l2_out = tx.binary add %l2_d, %l2_res : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
    return %l2_out : memref<?x64xf32>
  }
}
