// RUN: tx-opt %s -tx-sequence-parallel | FileCheck %s
// RUN: tx-opt %s -tx-sp | FileCheck %s --check-prefix=PIPE
// RUN: sed 's/sp_min_tokens = 16, //' %s | tx-opt -tx-sp 2>&1 | FileCheck %s --check-prefix=INFER
// INFER: warning: hidden_size is unset: inferred 64 from the rmsnorm weights

// The SP rewrite of norms without a weight (an RMSNorm without a scale):
// the local norm stays weightless, on this rank's 8 of 16 tokens, then the
// first layer's and the middle layer's (add_rmsnorm) results are gathered.
// The pass pipeline's config finalisation infers the hidden size from the
// normalised dimension (64, no weight to read it from).

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 16, splitting_ops = []>} {
  tx.layer @up : 64 -> 64, f32

  // CHECK-LABEL: func.func @weightless
  // CHECK-SAME: (%[[P:.+]]: memref<16x64xf32>)
  // CHECK: %[[RS:.+]] = tx.reduce_scatter %[[P]] dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
  // CHECK: %[[N:.+]] = tx.rmsnorm %[[RS]] eps {{.*}} : memref<8x64xf32> -> memref<8x64xf32>
  // CHECK: %[[NG:.+]] = tx.all_gather %[[N]] dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
  // CHECK: %[[U:.+]] = tx.linear @up(%[[NG]])
  // CHECK: %[[RS2:.+]] = tx.reduce_scatter %[[U]] dim 0 group 2
  // CHECK: %[[Y:.+]], %[[R:.+]] = tx.add_rmsnorm %[[RS2]], %[[RS]] eps {{.*}} : memref<8x64xf32>, memref<8x64xf32> -> memref<8x64xf32>, memref<8x64xf32>
  // CHECK: tx.all_gather %[[Y]] dim 0 group 2
  // PIPE-LABEL: func.func @weightless
  // PIPE: tx.reduce_scatter
  // PIPE: tx.rmsnorm %{{[^,]+}} eps {{.*}} : memref<8x64xf32> -> memref<8x64xf32>
  func.func @weightless(%p: memref<16x64xf32>) -> (memref<16x64xf32>, memref<16x64xf32>) {
    %ar = tx.all_reduce %p group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar eps 1.0e-06 : memref<16x64xf32> -> memref<16x64xf32>
    %u = tx.linear @up(%h) : memref<16x64xf32> -> memref<16x64xf32>
    %ar2 = tx.all_reduce %u group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %y, %r = tx.add_rmsnorm %ar2, %ar eps 1.0e-06 : memref<16x64xf32>, memref<16x64xf32> -> memref<16x64xf32>, memref<16x64xf32>
    return %y, %r : memref<16x64xf32>, memref<16x64xf32>
  }
}
