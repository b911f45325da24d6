// RUN: tx-opt %s -split-input-file -tx-lower-collectives-to-runtime -verify-diagnostics | FileCheck %s

module attributes {tx.config = #tx.config<tp_size = 2>} {
  tx.layer @up : 64 -> 128, bf16
  // CHECK-DAG: func.func private @tx_rt_all_reduce_f32(memref<*xf32>, memref<*xf32>, i64) attributes {llvm.emit_c_interface}
  // CHECK-DAG: func.func private @tx_rt_reduce_scatter_f16(memref<*xf16>, memref<*xf16>, i64, i64) attributes {llvm.emit_c_interface}
  // CHECK-DAG: func.func private @tx_rt_all_gather_bf16(memref<*xbf16>, memref<*xbf16>, i64, i64) attributes {llvm.emit_c_interface}
  // CHECK-DAG: func.func private @tx_rt_rank(i64) -> i64

  // CHECK-LABEL: func.func @all_reduce
  // CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>)
  // CHECK: %[[C0:.+]] = arith.constant 0 : index
  // CHECK: %[[T:.+]] = memref.dim %[[X]], %[[C0]]
  // CHECK: %[[OUT:.+]] = memref.alloc(%[[T]]) : memref<?x64xf32>
  // CHECK: %[[IU:.+]] = memref.cast %[[X]] : memref<?x64xf32> to memref<*xf32>
  // CHECK: %[[OU:.+]] = memref.cast %[[OUT]] : memref<?x64xf32> to memref<*xf32>
  // CHECK: %[[G:.+]] = arith.constant 2 : i64
  // CHECK: call @tx_rt_all_reduce_f32(%[[IU]], %[[OU]], %[[G]])
  // CHECK: return %[[OUT]]
  func.func @all_reduce(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    %y = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    return %y : memref<?x64xf32>
  }

  // The scattered token count is the input's divided by the group.
  // CHECK-LABEL: func.func @reduce_scatter
  // CHECK: %[[T:.+]] = memref.dim %{{.+}}, %{{.+}} : memref<?x64xf16>
  // CHECK: %[[TWO:.+]] = arith.constant 2 : index
  // CHECK: %[[L:.+]] = arith.divui %[[T]], %[[TWO]] : index
  // CHECK: memref.alloc(%[[L]]) : memref<?x64xf16>
  // CHECK: call @tx_rt_reduce_scatter_f16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) : (memref<*xf16>, memref<*xf16>, i64, i64) -> ()
  func.func @reduce_scatter(%x: memref<?x64xf16>) -> memref<?x64xf16> {
    %y = tx.reduce_scatter %x dim 0 group 2 : memref<?x64xf16> -> memref<?x64xf16>
    return %y : memref<?x64xf16>
  }

  // A strided input goes to the runtime as it is (the runtime packs it).
  // CHECK-LABEL: func.func @all_gather_strided
  // CHECK: %[[OUT:.+]] = memref.alloc() : memref<8x64xbf16>
  // CHECK: memref.cast %{{.+}} : memref<4x64xbf16, strided<[128, 1], offset: 64>> to memref<*xbf16>
  // CHECK: call @tx_rt_all_gather_bf16
  func.func @all_gather_strided(%x: memref<4x128xbf16>) -> memref<8x64xbf16> {
    %s = tx.slice %x dim 1 offset 64 size 64 : memref<4x128xbf16> -> memref<4x64xbf16, strided<[128, 1], offset: 64>>
    %y = tx.all_gather %s dim 0 group 2 : memref<4x64xbf16, strided<[128, 1], offset: 64>> -> memref<8x64xbf16>
    return %y : memref<8x64xbf16>
  }

  // Fused ops are split back into the collective and tx.linear.
  // CHECK-LABEL: func.func @fused
  // CHECK: %[[G:.+]] = memref.alloc() : memref<8x64xbf16>
  // CHECK: call @tx_rt_all_gather_bf16
  // CHECK: %[[Y:.+]] = tx.linear @up(%[[G]]) : memref<8x64xbf16> -> memref<8x128xbf16>
  // CHECK: %[[F:.+]] = tx.linear @up(%{{.+}}) : memref<8x64xbf16> -> memref<8x128xbf16>
  // CHECK: %[[S:.+]] = memref.alloc() : memref<4x128xbf16>
  // CHECK: memref.cast %[[F]]
  // CHECK: call @tx_rt_reduce_scatter_bf16
  // CHECK: return %[[Y]], %[[S]]
  func.func @fused(%x: memref<4x64xbf16>, %z: memref<8x64xbf16>) -> (memref<8x128xbf16>, memref<4x128xbf16>) {
    %y = tx.all_gather_linear @up(%x) dim 0 group 2 : memref<4x64xbf16> -> memref<8x128xbf16>
    %s = tx.linear_reduce_scatter @up(%z) dim 0 group 2 : memref<8x64xbf16> -> memref<4x128xbf16>
    return %y, %s : memref<8x128xbf16>, memref<4x128xbf16>
  }

  // CHECK-LABEL: func.func @rank
  // CHECK: %[[G:.+]] = arith.constant 2 : i64
  // CHECK: %[[R:.+]] = call @tx_rt_rank(%[[G]]) : (i64) -> i64
  // CHECK: %[[I:.+]] = arith.index_cast %[[R]] : i64 to index
  // CHECK: return %[[I]]
  func.func @rank() -> index {
    %r = tx.rank group 2
    return %r : index
  }
}

// -----

// A group of one needs no runtime: a copy.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  // CHECK-LABEL: func.func @single
  // CHECK-NOT: call
  // CHECK: %[[OUT:.+]] = memref.alloc() : memref<4x64xf32>
  // CHECK: memref.copy %{{.+}}, %[[OUT]]
  // CHECK: %[[ZERO:.+]] = arith.constant 0 : index
  // CHECK: return %[[OUT]], %[[ZERO]]
  func.func @single(%x: memref<4x64xf32>) -> (memref<4x64xf32>, index) {
    %y = tx.all_reduce %x group 1 : memref<4x64xf32> -> memref<4x64xf32>
    %r = tx.rank group 1
    return %y, %r : memref<4x64xf32>, index
  }
}

// -----

// An element type the runtime has no function for is an error.
module attributes {tx.config = #tx.config<tp_size = 2>} {
  func.func @f8(%x: memref<4x64xf8E4M3FN>) -> memref<4x64xf8E4M3FN> {
    // expected-error @below {{'tx.all_reduce' op cannot be lowered: the collectives runtime handles f32, f64, f16 and bf16, not 'f8E4M3FN'}}
    %y = tx.all_reduce %x group 2 : memref<4x64xf8E4M3FN> -> memref<4x64xf8E4M3FN>
    return %y : memref<4x64xf8E4M3FN>
  }
}
