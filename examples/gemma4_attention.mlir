// Gemma 4's attention, the case that motivated vLLM's guarded, branched QKV
// fusion (see the first seed document):
//
//   q = q_norm(q_proj(x).view(T, 4, 16)); q = rotary(q)
//   if self.is_kv_shared_layer:
//       k, v = shared_kv_states[self.kv_shared_layer_index]
//   else:
//       k = k_proj(x).view(T, 2, 16)
//       v = v_proj(x).view(T, 2, 16) if self.v_proj is not None else k
//       k = rotary(k_norm(k))
//   shared_kv_states[self.layer_idx] = (k, v)
//   return o_proj(attention(q, k, v).view(T, 64))
//
// q is computed outside the branch, k and v inside it, v_proj behind an
// existence guard, and the container write comes after every projection call:
// all three projections may be fused, with the merged GEMM placed before q's.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 64 -> 64, f32 {checkpoint = "model.layers.3.self_attn.q_proj"}
  tx.layer @k_proj : 64 -> 32, f32 {checkpoint = "model.layers.3.self_attn.k_proj"}
  tx.layer @v_proj : 64 -> 32, f32 {checkpoint = "model.layers.3.self_attn.v_proj"}
  tx.layer @o_proj : 64 -> 64, f32 {checkpoint = "model.layers.3.self_attn.o_proj"}
  tx.param @q_norm : memref<16xf32> {checkpoint = "model.layers.3.self_attn.q_norm.weight"}
  tx.param @k_norm : memref<16xf32> {checkpoint = "model.layers.3.self_attn.k_norm.weight"}

  func.func @forward(%x: memref<?x64xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>,
                     %shared_kv_states: !tx.container, %is_kv_shared_layer: i1) -> memref<?x64xf32> {
    %shared_index = arith.constant 1 : index
    %layer_idx = arith.constant 3 : index

    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %q3 = tx.view %q : memref<?x64xf32> -> memref<?x4x16xf32>
    %wq = tx.get_param @q_norm : memref<16xf32>
    %qn = tx.rmsnorm %q3, %wq eps 1.0e-06 : memref<?x4x16xf32>, memref<16xf32> -> memref<?x4x16xf32>
    %qr = tx.rotary %qn, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>

    %k, %v = scf.if %is_kv_shared_layer -> (memref<?x2x16xf32>, memref<?x2x16xf32>) {
      %ks, %vs = tx.container_get %shared_kv_states[%shared_index] : memref<?x2x16xf32>, memref<?x2x16xf32>
      scf.yield %ks, %vs : memref<?x2x16xf32>, memref<?x2x16xf32>
    } else {
      %k0 = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
      %k3 = tx.view %k0 : memref<?x32xf32> -> memref<?x2x16xf32>
      %v_ref = tx.layer_ref @v_proj
      %has_v = tx.guard is_not_none %v_ref
      %v3 = scf.if %has_v -> (memref<?x2x16xf32>) {
        %v0 = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
        %v0_3 = tx.view %v0 : memref<?x32xf32> -> memref<?x2x16xf32>
        scf.yield %v0_3 : memref<?x2x16xf32>
      } else {
        scf.yield %k3 : memref<?x2x16xf32>
      }
      %wk = tx.get_param @k_norm : memref<16xf32>
      %kn = tx.rmsnorm %k3, %wk eps 1.0e-06 : memref<?x2x16xf32>, memref<16xf32> -> memref<?x2x16xf32>
      %kr = tx.rotary %kn, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
      scf.yield %kr, %v3 : memref<?x2x16xf32>, memref<?x2x16xf32>
    }
    tx.container_set %shared_kv_states[%layer_idx] = %k, %v : memref<?x2x16xf32>, memref<?x2x16xf32>

    %a = tx.attention %qr, %k, %v scale 0.25 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %a2 = tx.view %a : memref<?x4x16xf32> -> memref<?x64xf32>
    %o = tx.linear @o_proj(%a2) : memref<?x64xf32> -> memref<?x64xf32>
    return %o : memref<?x64xf32>
  }
}
