// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s

// Layers and params become uninitialized globals tagged with their
// checkpoint tensors; a 2-D linear is a transposed-B matmul accumulating
// into the broadcast bias.
// CHECK: memref.global @__tx_w_proj : memref<24x16xf32> = uninitialized {{.*}}tx.checkpoint = "model.proj.weight"
// CHECK: memref.global @__tx_b_proj : memref<24xf32> = uninitialized {{.*}}tx.checkpoint = "model.proj.bias"
// CHECK: memref.global @__tx_p_norm : memref<16xf32> = uninitialized {{.*}}tx.checkpoint = "norm"
// CHECK-NOT: tx.layer
// CHECK-NOT: tx.param
// CHECK-LABEL: func.func @linear_bias
// CHECK-SAME: (%[[X:.+]]: memref<?x16xf32>)
// CHECK: %[[DIM:.+]] = memref.dim %[[X]]
// CHECK: %[[OUT:.+]] = memref.alloc(%[[DIM]]) : memref<?x24xf32>
// CHECK: %[[W:.+]] = memref.get_global @__tx_w_proj : memref<24x16xf32>
// CHECK: %[[B:.+]] = memref.get_global @__tx_b_proj : memref<24xf32>
// CHECK: linalg.generic {{.*}} ins(%[[B]] : memref<24xf32>) outs(%[[OUT]] : memref<?x24xf32>)
// CHECK: linalg.matmul indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}] ins(%[[X]], %[[W]] : memref<?x16xf32>, memref<24x16xf32>) outs(%[[OUT]] : memref<?x24xf32>)
// CHECK: return %[[OUT]]
module {
  tx.layer @proj : 16 -> 24, f32 bias {checkpoint = "model.proj"}
  tx.param @norm : memref<16xf32>
  func.func @linear_bias(%x: memref<?x16xf32>) -> memref<?x24xf32> {
    %y = tx.linear @proj(%x) : memref<?x16xf32> -> memref<?x24xf32>
    return %y : memref<?x24xf32>
  }
  func.func @param() -> memref<16xf32> {
    %p = tx.get_param @norm : memref<16xf32>
    return %p : memref<16xf32>
  }
}

// -----

// A merged layer keeps its stacking map on the weight global; leading dims
// of a contiguous 3-D input are collapsed into one GEMM; no bias: zero fill.
// CHECK: memref.global @__tx_w_qkv : memref<96x64xf32> = uninitialized {{.*}}tx.stacking = [#tx.stack<source = "q_proj", offset = 0, size = 64, heads = 4>
// CHECK-LABEL: func.func @linear_3d
// CHECK-SAME: (%[[X:.+]]: memref<?x2x64xf32>)
// CHECK: %[[OUT:.+]] = memref.alloc({{.*}}) : memref<?x2x96xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] : memref<?x2x96xf32>)
// CHECK: %[[X2:.+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : memref<?x2x64xf32> into memref<?x64xf32>
// CHECK: %[[O2:.+]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1], [2]] : memref<?x2x96xf32> into memref<?x96xf32>
// CHECK: linalg.matmul {{.*}} ins(%[[X2]], %{{.+}} : memref<?x64xf32>, memref<96x64xf32>) outs(%[[O2]] : memref<?x96xf32>)
module {
  tx.layer @qkv : 64 -> 96, f32 stacking [
    #tx.stack<source = "q_proj", offset = 0, size = 64, heads = 4>,
    #tx.stack<source = "k_proj", offset = 64, size = 16, heads = 1>,
    #tx.stack<source = "v_proj", offset = 80, size = 16, heads = 1>]
  func.func @linear_3d(%x: memref<?x2x64xf32>) -> memref<?x2x96xf32> {
    %y = tx.linear @qkv(%x) : memref<?x2x64xf32> -> memref<?x2x96xf32>
    return %y : memref<?x2x96xf32>
  }
}

// -----

// A strided input whose leading dims cannot collapse is copied into a
// contiguous buffer and multiplied by the same 2-D matmul as a contiguous
// input (the same sums in the same order, so a fused program's slice and
// the unfused program's buffer give the same bits).
// CHECK-LABEL: func.func @linear_strided
// CHECK: %[[S:.+]] = memref.subview
// CHECK: %[[C:.+]] = memref.alloc(%{{.+}}) : memref<?x4x16xf32>
// CHECK: linalg.copy ins(%[[S]] : memref<?x4x16xf32, strided<[96, 16, 1], offset: 16>>) outs(%[[C]] : memref<?x4x16xf32>)
// CHECK: %[[X2:.+]] = memref.collapse_shape %[[C]] {{\[\[}}0, 1], [2]] : memref<?x4x16xf32> into memref<?x16xf32>
// CHECK: linalg.matmul {{.*}} ins(%[[X2]], %{{.+}} : memref<?x16xf32>, memref<12x16xf32>)
module {
  tx.layer @l : 16 -> 12, f32
  func.func @linear_strided(%x: memref<?x6x16xf32>) -> memref<?x4x12xf32> {
    %s = tx.slice %x dim 1 offset 1 size 4 : memref<?x6x16xf32> -> memref<?x4x16xf32, strided<[96, 16, 1], offset: 16>>
    %y = tx.linear @l(%s) : memref<?x4x16xf32, strided<[96, 16, 1], offset: 16>> -> memref<?x4x12xf32>
    return %y : memref<?x4x12xf32>
  }
}

// -----

// bf16 accumulates in f32 (as PyTorch's and cuBLAS's GEMMs do): the bias
// is widened into an f32 buffer, the matmul reads bf16 and widens in its
// body, and the sum is rounded to bf16 once, at the end.
// CHECK-LABEL: func.func @linear_bf16
// CHECK-SAME: (%[[X:.+]]: memref<?x16xbf16>)
// CHECK: %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<?x24xbf16>
// CHECK: %[[ACC:.+]] = memref.alloc(%{{.+}}) : memref<?x24xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : memref<24xbf16>) outs(%[[ACC]] : memref<?x24xf32>)
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.matmul {{.*}} ins(%[[X]], %{{.+}} : memref<?x16xbf16>, memref<24x16xbf16>) outs(%[[ACC]] : memref<?x24xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[ACC]] : memref<?x24xf32>) outs(%[[OUT]] : memref<?x24xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
// CHECK-NOT: memref.dealloc
// CHECK: return %[[OUT]]
module {
  tx.layer @proj : 16 -> 24, bf16 bias {checkpoint = "model.proj"}
  func.func @linear_bf16(%x: memref<?x16xbf16>) -> memref<?x24xbf16> {
    %y = tx.linear @proj(%x) : memref<?x16xbf16> -> memref<?x24xbf16>
    return %y : memref<?x24xbf16>
  }
}

// -----

// Fused GEMM+collective forms and collectives over one rank are the GEMM
// and copies; tx.rank over one rank is 0.
// CHECK-LABEL: func.func @single_rank
// CHECK: linalg.matmul
// CHECK: %[[A:.+]] = memref.alloc
// CHECK: linalg.copy ins(%{{.+}} : memref<4x8xf32>) outs(%[[A]] : memref<4x8xf32>)
// CHECK: %[[R:.+]] = arith.constant 0 : index
// CHECK-NOT: tx.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @l : 8 -> 8, f32
  func.func @single_rank(%x: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>, index) {
    %y = tx.all_gather_linear @l(%x) dim 0 group 1 : memref<4x8xf32> -> memref<4x8xf32>
    %z = tx.all_reduce %y group 1 : memref<4x8xf32> -> memref<4x8xf32>
    %r = tx.rank group 1
    return %y, %z, %r : memref<4x8xf32>, memref<4x8xf32>, index
  }
}

