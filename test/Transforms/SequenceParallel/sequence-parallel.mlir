// RUN: tx-opt %s -split-input-file -tx-sequence-parallel -verify-diagnostics | FileCheck %s

// First layer: the all-reduced value is both the norm's input and the
// residual. The norm runs on this rank's 8 of 16 tokens and its output is
// gathered before the GEMM; the residual stays scattered into the next
// norm (a middle-layer add_rmsnorm) and is gathered only for the return.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 16, splitting_ops = []>} {
  tx.layer @up : 64 -> 64, f32
  tx.param @ln1 : memref<64xf32>
  tx.param @ln2 : memref<64xf32>

  // CHECK-LABEL: func.func @first_then_middle
  // CHECK-SAME: (%[[P:.+]]: memref<16x64xf32>)
  func.func @first_then_middle(%p: memref<16x64xf32>) -> (memref<16x64xf32>, memref<16x64xf32>) {
    %w1 = tx.get_param @ln1 : memref<64xf32>
    %w2 = tx.get_param @ln2 : memref<64xf32>
    // CHECK-NOT: tx.all_reduce
    // CHECK: %[[RS:.+]] = tx.reduce_scatter %[[P]] dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    // CHECK: %[[N:.+]] = tx.rmsnorm %[[RS]], %{{.+}} eps {{.*}} : memref<8x64xf32>, memref<64xf32> -> memref<8x64xf32>
    // CHECK: %[[NG:.+]] = tx.all_gather %[[N]] dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    // CHECK: %[[U:.+]] = tx.linear @up(%[[NG]])
    // CHECK: %[[RS2:.+]] = tx.reduce_scatter %[[U]] dim 0 group 2
    // CHECK: %[[Y:.+]], %[[R:.+]] = tx.add_rmsnorm %[[RS2]], %[[RS]], %{{.+}} eps {{.*}} : memref<8x64xf32>, memref<8x64xf32>, memref<64xf32> -> memref<8x64xf32>, memref<8x64xf32>
    // CHECK: %[[YG:.+]] = tx.all_gather %[[Y]] dim 0 group 2
    // CHECK: %[[RG:.+]] = tx.all_gather %[[R]] dim 0 group 2
    // CHECK: return %[[YG]], %[[RG]]
    %ar = tx.all_reduce %p group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w1 eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    %u = tx.linear @up(%h) : memref<16x64xf32> -> memref<16x64xf32>
    %ar2 = tx.all_reduce %u group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %y, %r = tx.add_rmsnorm %ar2, %ar, %w2 eps 1.0e-06 : memref<16x64xf32>, memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>, memref<16x64xf32>
    return %y, %r : memref<16x64xf32>, memref<16x64xf32>
  }
}

// -----

// Middle layer with a replicated residual (a function input): the residual
// is sliced where this rank's reduce-scatter block starts, rank * 8, not 0.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  // CHECK-LABEL: func.func @middle
  // CHECK-SAME: (%[[O:.+]]: memref<16x64xf32>, %[[RES:.+]]: memref<16x64xf32>)
  // CHECK: %[[RANK:.+]] = tx.rank group 2
  // CHECK: %[[RS:.+]] = tx.reduce_scatter %[[O]] dim 0 group 2
  // CHECK: %[[C8:.+]] = arith.constant 8 : index
  // CHECK: %[[OFF:.+]] = arith.muli %[[RANK]], %[[C8]] : index
  // CHECK: %[[SL:.+]] = memref.subview %[[RES]][%[[OFF]], 0] [8, 64] [1, 1] : memref<16x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
  // CHECK: %[[Y:.+]], %[[R:.+]] = tx.add_rmsnorm %[[RS]], %[[SL]], %{{.+}} eps
  // CHECK: tx.all_gather %[[Y]] dim 0 group 2
  // CHECK: tx.all_gather %[[R]] dim 0 group 2
  func.func @middle(%o: memref<16x64xf32>, %res: memref<16x64xf32>) -> (memref<16x64xf32>, memref<16x64xf32>) {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %y, %r = tx.add_rmsnorm %ar, %res, %w eps 1.0e-06 : memref<16x64xf32>, memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>, memref<16x64xf32>
    return %y, %r : memref<16x64xf32>, memref<16x64xf32>
  }
}

// -----

// Last layer (the model's final norm): the residual output is dead, so
// nothing gathers it; only the normalised output is gathered.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  tx.param @final : memref<64xf32>
  // CHECK-LABEL: func.func @last
  // CHECK: %[[RS1:.+]] = tx.reduce_scatter
  // CHECK: tx.rmsnorm %[[RS1]]
  // CHECK: %[[RS2:.+]] = tx.reduce_scatter
  // CHECK: %[[Y:.+]], %{{.+}} = tx.add_rmsnorm %[[RS2]], %[[RS1]]
  // CHECK: %[[YG:.+]] = tx.all_gather %[[Y]] dim 0 group 2
  // CHECK-NOT: tx.all_gather
  // CHECK: return %[[YG]]
  func.func @last(%e: memref<16x64xf32>, %d: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %wf = tx.get_param @final : memref<64xf32>
    %ar = tx.all_reduce %e group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    %ar2 = tx.all_reduce %d group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %y, %r = tx.add_rmsnorm %ar2, %ar, %wf eps 1.0e-06 : memref<16x64xf32>, memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>, memref<16x64xf32>
    return %y : memref<16x64xf32>
  }
}

// -----

// Below the threshold and not divisible: left alone, with a remark each.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 32, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  // CHECK-LABEL: func.func @small
  // CHECK: tx.all_reduce
  // CHECK-NOT: tx.reduce_scatter
  func.func @small(%o: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    // expected-remark @below {{not sequence-parallel: 16 tokens is below sp_min_tokens 32}}
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    return %h : memref<16x64xf32>
  }
  // CHECK-LABEL: func.func @odd
  // CHECK: tx.all_reduce
  // CHECK-NOT: tx.reduce_scatter
  func.func @odd(%o: memref<33x64xf32>) -> memref<33x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    // expected-remark @below {{not sequence-parallel: 33 tokens is not divisible by tp_size 2}}
    %ar = tx.all_reduce %o group 2 : memref<33x64xf32> -> memref<33x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<33x64xf32>, memref<64xf32> -> memref<33x64xf32>
    return %h : memref<33x64xf32>
  }
}

// -----

// An all-reduce that feeds no norm (the block's final residual add) stays.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  // CHECK-LABEL: func.func @no_norm
  // CHECK: tx.all_reduce
  // CHECK-NOT: tx.reduce_scatter
  func.func @no_norm(%d: memref<16x64xf32>, %res: memref<16x64xf32>) -> memref<16x64xf32> {
    %ar = tx.all_reduce %d group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %out = tx.binary add %ar, %res : memref<16x64xf32>, memref<16x64xf32> -> memref<16x64xf32>
    return %out : memref<16x64xf32>
  }
}

// -----

// Sequence parallelism off: nothing changes (even on a piecewise module).

module attributes {tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"]>} {
  tx.param @ln : memref<64xf32>
  // CHECK-LABEL: func.func @off
  // CHECK: tx.all_reduce
  // CHECK-NOT: tx.reduce_scatter
  func.func @off(%o: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    return %h : memref<16x64xf32>
  }
}
