// Existence guards fold when the layer is known: identity tests and boolean
// context only. `== None` / `!= None` never fold (__eq__ may be overridden).
// RUN: tx-opt %s -split-input-file -canonicalize | FileCheck %s

tx.layer @v_proj : 8 -> 8, f32
tx.none_layer @k_norm

// CHECK-LABEL: func.func @defined
// CHECK-DAG: %[[T:.+]] = arith.constant true
// CHECK-DAG: %[[F:.+]] = arith.constant false
// CHECK-NOT: tx.guard
// CHECK: return %[[F]], %[[T]], %[[T]], %[[F]]
func.func @defined() -> (i1, i1, i1, i1) {
  %r = tx.layer_ref @v_proj
  %a = tx.guard is_none %r
  %b = tx.guard is_not_none %r
  %c = tx.guard truthy %r
  %d = tx.guard falsy %r
  return %a, %b, %c, %d : i1, i1, i1, i1
}

// CHECK-LABEL: func.func @none
// CHECK-DAG: %[[T:.+]] = arith.constant true
// CHECK-DAG: %[[F:.+]] = arith.constant false
// CHECK: return %[[T]], %[[F]], %[[F]], %[[T]]
func.func @none() -> (i1, i1, i1, i1) {
  %r = tx.layer_ref @k_norm
  %a = tx.guard is_none %r
  %b = tx.guard is_not_none %r
  %c = tx.guard truthy %r
  %d = tx.guard falsy %r
  return %a, %b, %c, %d : i1, i1, i1, i1
}

// CHECK-LABEL: func.func @equality
// CHECK: %[[R:.+]] = tx.layer_ref @v_proj
// CHECK: %[[E:.+]] = tx.guard eq_none %[[R]]
// CHECK: %[[N:.+]] = tx.guard ne_none %[[R]]
// CHECK: return %[[E]], %[[N]]
func.func @equality() -> (i1, i1) {
  %r = tx.layer_ref @v_proj
  %a = tx.guard eq_none %r
  %b = tx.guard ne_none %r
  return %a, %b : i1, i1
}

// -----

// A guarded branch on a None layer disappears with its call.
tx.layer @k_proj : 8 -> 8, f32
tx.none_layer @v_proj

// CHECK-LABEL: func.func @branch
// CHECK-SAME: (%[[X:.+]]: memref<4x8xf32>)
// CHECK-NOT: scf.if
// CHECK: %[[K:.+]] = tx.linear @k_proj(%[[X]])
// CHECK-NEXT: return %[[K]], %[[K]]
func.func @branch(%x: memref<4x8xf32>) -> (memref<4x8xf32>, memref<4x8xf32>) {
  %k = tx.linear @k_proj(%x) : memref<4x8xf32> -> memref<4x8xf32>
  %r = tx.layer_ref @v_proj
  %has = tx.guard is_not_none %r
  %v = scf.if %has -> memref<4x8xf32> {
    %0 = tx.opaque_call "v_proj_forward"(%x) : (memref<4x8xf32>) -> memref<4x8xf32>
    scf.yield %0 : memref<4x8xf32>
  } else {
    scf.yield %k : memref<4x8xf32>
  }
  return %k, %v : memref<4x8xf32>, memref<4x8xf32>
}
