// The tx-sp pipeline on a module that was never finalised: the config pass
// computes the threshold and forces full graph, the rewrite and async TP
// run, the contract holds.
// RUN: tx-opt %s -tx-sp -verify-diagnostics | FileCheck %s

// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 1024, splitting_ops = [], cudagraph_mode = full, hidden_size = 8192, element_size = 2, arch = "sm_90">
// expected-warning @below {{sp_min_tokens is unset: computed 1024}}
// expected-warning @below {{clearing splitting_ops}}
// expected-warning @below {{cudagraph_mode full_and_piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, splitting_ops = ["tx.attention"], cudagraph_mode = full_and_piecewise, hidden_size = 8192, element_size = 2, arch = "sm_90">} {
  tx.param @ln : memref<8192xbf16>
  tx.layer @up : 8192 -> 1024, bf16
  tx.layer @down : 1024 -> 8192, bf16

  // CHECK-LABEL: func.func @block
  // CHECK-SAME: (%[[X:.+]]: memref<2048x1024xbf16>, %[[RES:.+]]: memref<2048x8192xbf16>)
  // CHECK: %[[RS:.+]] = tx.linear_reduce_scatter @down(%[[X]]) dim 0 group 2 : memref<2048x1024xbf16> -> memref<1024x8192xbf16>
  // CHECK: %[[SL:.+]] = memref.subview %[[RES]]
  // CHECK: %[[Y:.+]], %{{.+}} = tx.add_rmsnorm %[[RS]], %[[SL]]
  // CHECK: tx.all_gather_linear @up(%[[Y]]) dim 0 group 2 : memref<1024x8192xbf16> -> memref<2048x1024xbf16>
  func.func @block(%x: memref<2048x1024xbf16>, %res: memref<2048x8192xbf16>) -> memref<2048x1024xbf16> {
    %w = tx.get_param @ln : memref<8192xbf16>
    %d = tx.linear @down(%x) : memref<2048x1024xbf16> -> memref<2048x8192xbf16>
    %ar = tx.all_reduce %d group 2 : memref<2048x8192xbf16> -> memref<2048x8192xbf16>
    %y, %r = tx.add_rmsnorm %ar, %res, %w eps 1.0e-05 : memref<2048x8192xbf16>, memref<2048x8192xbf16>, memref<8192xbf16> -> memref<2048x8192xbf16>, memref<2048x8192xbf16>
    %u = tx.linear @up(%y) : memref<2048x8192xbf16> -> memref<2048x1024xbf16>
    return %u : memref<2048x1024xbf16>
  }
}
