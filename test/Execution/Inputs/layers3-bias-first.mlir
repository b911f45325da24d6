// layers3.mlir's shape (norm, q/k/v, their negations into one buffer, o,
// residual) where only the first layer's q/k/v have a bias: the outlined
// segments are not the layers (found by the fusion soundness hunt, round 9).
module {
  tx.layer @l0_q_proj : 16 -> 8, f32 bias
  tx.layer @l0_k_proj : 16 -> 8, f32 bias
  tx.layer @l0_v_proj : 16 -> 8, f32 bias
  tx.layer @l0_o : 24 -> 16, f32
  tx.param @l0_n : memref<16xf32>
  tx.layer @l1_q_proj : 16 -> 8, f32
  tx.layer @l1_k_proj : 16 -> 8, f32
  tx.layer @l1_v_proj : 16 -> 8, f32
  tx.layer @l1_o : 24 -> 16, f32
  tx.param @l1_n : memref<16xf32>
  tx.layer @l2_q_proj : 16 -> 8, f32
  tx.layer @l2_k_proj : 16 -> 8, f32
  tx.layer @l2_v_proj : 16 -> 8, f32
  tx.layer @l2_o : 24 -> 16, f32
  tx.param @l2_n : memref<16xf32>
  func.func @forward(%x: memref<?x16xf32>) -> memref<?x16xf32> {
    %c0 = arith.constant 0 : index
    %l0_w = tx.get_param @l0_n : memref<16xf32>
    %l0_h = tx.rmsnorm %x, %l0_w eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %l0_p0 = tx.linear @l0_q_proj(%l0_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l0_p1 = tx.linear @l0_k_proj(%l0_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l0_p2 = tx.linear @l0_v_proj(%l0_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l0_T = memref.dim %l0_h, %c0 : memref<?x16xf32>
    %l0_cat = memref.alloc(%l0_T) : memref<?x24xf32>
    %l0_s0 = tx.slice %l0_cat dim 1 offset 0 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1]>>
    tx.unary_into neg %l0_p0 into %l0_s0 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1]>>
    %l0_s1 = tx.slice %l0_cat dim 1 offset 8 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 8>>
    tx.unary_into neg %l0_p1 into %l0_s1 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 8>>
    %l0_s2 = tx.slice %l0_cat dim 1 offset 16 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 16>>
    tx.unary_into neg %l0_p2 into %l0_s2 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 16>>
    %l0_o = tx.linear @l0_o(%l0_cat) : memref<?x24xf32> -> memref<?x16xf32>
    %l0_out = tx.binary add %l0_o, %x : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %l1_w = tx.get_param @l1_n : memref<16xf32>
    %l1_h = tx.rmsnorm %l0_out, %l1_w eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %l1_p0 = tx.linear @l1_q_proj(%l1_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l1_p1 = tx.linear @l1_k_proj(%l1_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l1_p2 = tx.linear @l1_v_proj(%l1_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l1_T = memref.dim %l1_h, %c0 : memref<?x16xf32>
    %l1_cat = memref.alloc(%l1_T) : memref<?x24xf32>
    %l1_s0 = tx.slice %l1_cat dim 1 offset 0 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1]>>
    tx.unary_into neg %l1_p0 into %l1_s0 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1]>>
    %l1_s1 = tx.slice %l1_cat dim 1 offset 8 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 8>>
    tx.unary_into neg %l1_p1 into %l1_s1 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 8>>
    %l1_s2 = tx.slice %l1_cat dim 1 offset 16 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 16>>
    tx.unary_into neg %l1_p2 into %l1_s2 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 16>>
    %l1_o = tx.linear @l1_o(%l1_cat) : memref<?x24xf32> -> memref<?x16xf32>
    %l1_out = tx.binary add %l1_o, %l0_out : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %l2_w = tx.get_param @l2_n : memref<16xf32>
    %l2_h = tx.rmsnorm %l1_out, %l2_w eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %l2_p0 = tx.linear @l2_q_proj(%l2_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l2_p1 = tx.linear @l2_k_proj(%l2_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l2_p2 = tx.linear @l2_v_proj(%l2_h) : memref<?x16xf32> -> memref<?x8xf32>
    %l2_T = memref.dim %l2_h, %c0 : memref<?x16xf32>
    %l2_cat = memref.alloc(%l2_T) : memref<?x24xf32>
    %l2_s0 = tx.slice %l2_cat dim 1 offset 0 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1]>>
    tx.unary_into neg %l2_p0 into %l2_s0 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1]>>
    %l2_s1 = tx.slice %l2_cat dim 1 offset 8 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 8>>
    tx.unary_into neg %l2_p1 into %l2_s1 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 8>>
    %l2_s2 = tx.slice %l2_cat dim 1 offset 16 size 8 : memref<?x24xf32> -> memref<?x8xf32, strided<[24, 1], offset: 16>>
    tx.unary_into neg %l2_p2 into %l2_s2 : memref<?x8xf32>, memref<?x8xf32, strided<[24, 1], offset: 16>>
    %l2_o = tx.linear @l2_o(%l2_cat) : memref<?x24xf32> -> memref<?x16xf32>
    %l2_out = tx.binary add %l2_o, %l1_out : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    return %l2_out : memref<?x16xf32>
  }
}
