// RUN: tx-opt %s -split-input-file -tx-async-tp -verify-diagnostics | FileCheck %s

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, splitting_ops = []>} {
  tx.layer @gate_up : 64 -> 256, f32
  tx.layer @down : 128 -> 64, f32

  // all_gather -> GEMM and GEMM -> reduce_scatter (sum) become the fused ops.
  // CHECK-LABEL: func.func @both
  // CHECK-SAME: (%[[X:.+]]: memref<8x64xf32>, %[[M:.+]]: memref<16x128xf32>)
  // CHECK: %[[G:.+]] = tx.all_gather_linear @gate_up(%[[X]]) dim 0 group 2 : memref<8x64xf32> -> memref<16x256xf32>
  // CHECK: %[[D:.+]] = tx.linear_reduce_scatter @down(%[[M]]) dim 0 group 2 : memref<16x128xf32> -> memref<8x64xf32>
  // CHECK-NOT: tx.all_gather %
  // CHECK-NOT: tx.reduce_scatter %
  // CHECK: return %[[G]], %[[D]]
  func.func @both(%x: memref<8x64xf32>, %m: memref<16x128xf32>) -> (memref<16x256xf32>, memref<8x64xf32>) {
    %ag = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    %g = tx.linear @gate_up(%ag) : memref<16x64xf32> -> memref<16x256xf32>
    %d = tx.linear @down(%m) : memref<16x128xf32> -> memref<16x64xf32>
    %rs = tx.reduce_scatter %d dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    return %g, %rs : memref<16x256xf32>, memref<8x64xf32>
  }

  // A gather with several readers, and a GEMM output read elsewhere, stay.
  // CHECK-LABEL: func.func @shared
  // CHECK: tx.all_gather %
  // CHECK: tx.linear @gate_up
  // CHECK: tx.linear @down
  // CHECK: tx.reduce_scatter %
  // CHECK-NOT: all_gather_linear
  // CHECK-NOT: linear_reduce_scatter
  func.func @shared(%x: memref<8x64xf32>, %m: memref<16x128xf32>) -> (memref<16x256xf32>, memref<16x64xf32>, memref<8x64xf32>, memref<16x64xf32>) {
    // expected-remark @below {{not fused with @gate_up: the gathered buffer has other readers, and fusing would gather it once per reader}}
    %ag = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    %g = tx.linear @gate_up(%ag) : memref<16x64xf32> -> memref<16x256xf32>
    %d = tx.linear @down(%m) : memref<16x128xf32> -> memref<16x64xf32>
    // expected-remark @below {{not fused with @down: its unreduced output has other readers}}
    %rs = tx.reduce_scatter %d dim 0 group 2 : memref<16x64xf32> -> memref<8x64xf32>
    return %g, %ag, %rs, %d : memref<16x256xf32>, memref<16x64xf32>, memref<8x64xf32>, memref<16x64xf32>
  }
}

// -----

// async_tp off: nothing is fused.
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.layer @gate_up : 64 -> 256, f32
  // CHECK-LABEL: func.func @off
  // CHECK: tx.all_gather %
  // CHECK: tx.linear @gate_up
  func.func @off(%x: memref<8x64xf32>) -> memref<16x256xf32> {
    %ag = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    %g = tx.linear @gate_up(%ag) : memref<16x64xf32> -> memref<16x256xf32>
    return %g : memref<16x256xf32>
  }
}
