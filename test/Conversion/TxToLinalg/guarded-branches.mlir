// RUN: tx-opt %s -tx-to-linalg | FileCheck %s

// A lowered guard is a constant, and only the branch it takes is kept: the
// call of a None layer in the other (an opaque call, which cannot be
// lowered) goes with that branch.
module {
  tx.none_layer @v_proj
  tx.layer @k_proj : 8 -> 8, f32 {checkpoint = "k"}
  // CHECK-LABEL: func.func @kv
  // CHECK-NOT: scf.if
  // CHECK-NOT: opaque_call
  // CHECK: linalg.matmul
  // CHECK-NOT: scf.if
  // CHECK: return
  func.func @kv(%x: memref<?x8xf32>) -> memref<?x8xf32> {
    %k = tx.linear @k_proj(%x) : memref<?x8xf32> -> memref<?x8xf32>
    %ref = tx.layer_ref @v_proj
    %has = tx.guard is_not_none %ref
    %v = scf.if %has -> (memref<?x8xf32>) {
      %c = tx.opaque_call "self.v_proj is None"(%x) : (memref<?x8xf32>) -> memref<?x8xf32>
      scf.yield %c : memref<?x8xf32>
    } else {
      scf.yield %k : memref<?x8xf32>
    }
    return %v : memref<?x8xf32>
  }
}
