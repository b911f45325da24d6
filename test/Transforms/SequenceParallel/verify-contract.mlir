// RUN: tx-opt %s -split-input-file -tx-verify-sp-contract -verify-diagnostics

// A stray all_reduce -> norm left in a function that SP rewrote.
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  func.func @stray(%a: memref<16x64xf32>, %b: memref<16x64xf32>) -> (memref<16x64xf32>, memref<16x64xf32>) {
    %w = tx.get_param @ln : memref<64xf32>
    %rs = tx.reduce_scatter %a dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    %n = tx.rmsnorm %rs, %w eps 1.0e-06 : memref<8x64xf32>, memref<64xf32> -> memref<8x64xf32>
    %g = tx.all_gather %n dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    // expected-note @below {{all_reduce here}}
    %ar = tx.all_reduce %b group 2 : memref<16x64xf32> -> memref<16x64xf32>
    // expected-error @below {{sequence-parallel contract: norm reads a tx.all_reduce (expected reduce_scatter -> norm -> all_gather)}}
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    return %g, %h : memref<16x64xf32>, memref<16x64xf32>
  }
}

// -----

// The residual sliced at offset 0 on every rank (the unsafe slicing of
// piecewise SP): rank 1 would add rank 0's tokens.
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  func.func @slice_at_zero(%o: memref<16x64xf32>, %res: memref<16x64xf32>) -> memref<8x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %rs = tx.reduce_scatter %o dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    %r0 = tx.slice %res dim 0 offset 0 size 8 : memref<16x64xf32> -> memref<8x64xf32>
    // expected-error @below {{sequence-parallel contract: the norm's input is token-scattered but its residual is not (a replicated residual must be sliced at rank * local_tokens)}}
    %y, %r = tx.add_rmsnorm %rs, %r0, %w eps 1.0e-06 : memref<8x64xf32>, memref<8x64xf32>, memref<64xf32> -> memref<8x64xf32>, memref<8x64xf32>
    return %y : memref<8x64xf32>
  }
}

// -----

// What the SP pass produces satisfies the contract (no diagnostics).
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  func.func @ok(%o: memref<16x64xf32>, %res: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %rank = tx.rank group 2
    %rs = tx.reduce_scatter %o dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    %c8 = arith.constant 8 : index
    %off = arith.muli %rank, %c8 : index
    %sl = memref.subview %res[%off, 0] [8, 64] [1, 1] : memref<16x64xf32> to memref<8x64xf32, strided<[64, 1], offset: ?>>
    %y, %r = tx.add_rmsnorm %rs, %sl, %w eps 1.0e-06 : memref<8x64xf32>, memref<8x64xf32, strided<[64, 1], offset: ?>>, memref<64xf32> -> memref<8x64xf32>, memref<8x64xf32>
    %g = tx.all_gather %y dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    return %g : memref<16x64xf32>
  }
}
