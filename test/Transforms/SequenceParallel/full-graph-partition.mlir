// With graph_partition the module is one compiled graph even with
// splitting ops: the SP rewrite and async TP run.
// RUN: tx-opt %s -tx-sequence-parallel -tx-async-tp | FileCheck %s

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, splitting_ops = ["tx.attention"], graph_partition = true>} {
  tx.param @ln : memref<64xf32>
  tx.layer @up : 64 -> 64, f32
  // CHECK-LABEL: func.func @partitioned
  // CHECK: %[[RS:.+]] = tx.reduce_scatter
  // CHECK: %[[N:.+]] = tx.rmsnorm %[[RS]]
  // CHECK: tx.all_gather_linear @up(%[[N]]) dim 0 group 2
  func.func @partitioned(%o: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    %u = tx.linear @up(%h) : memref<16x64xf32> -> memref<16x64xf32>
    return %u : memref<16x64xf32>
  }
}
