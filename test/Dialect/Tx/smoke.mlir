// RUN: tx-opt %s | tx-opt | FileCheck %s

// CHECK-LABEL: tx.layer @q_proj : 64 -> 64, f32
tx.layer @q_proj : 64 -> 64, f32
// CHECK-LABEL: func.func @f
func.func @f(%x: memref<?x64xf32>) -> memref<?x64xf32> {
  // CHECK: tx.linear @q_proj(%{{.*}}) : memref<?x64xf32> -> memref<?x64xf32>
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  return %q : memref<?x64xf32>
}
