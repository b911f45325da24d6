// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s

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

// -----

// The guard combined with a runtime flag (`self.v_proj is not None and
// is_shared`): `andi %false, %flag` folds to false, so the branch with the
// None layer's call goes too (it was kept, and "cannot be lowered").
module {
  tx.none_layer @v_proj
  // CHECK-LABEL: func.func @guard_and_flag
  // CHECK-NOT: opaque_call
  // CHECK-NOT: scf.if
  // CHECK: return
  func.func @guard_and_flag(%x: memref<?x8xf32>, %flag: i1) -> memref<?x8xf32> {
    %ref = tx.layer_ref @v_proj
    %has = tx.guard is_not_none %ref
    %both = arith.andi %has, %flag : i1
    %v = scf.if %both -> (memref<?x8xf32>) {
      %c = tx.opaque_call "self.v_proj is None"(%x) : (memref<?x8xf32>) -> memref<?x8xf32>
      scf.yield %c : memref<?x8xf32>
    } else {
      %r = tx.unary relu %x : memref<?x8xf32> -> memref<?x8xf32>
      scf.yield %r : memref<?x8xf32>
    }
    return %v : memref<?x8xf32>
  }
}
