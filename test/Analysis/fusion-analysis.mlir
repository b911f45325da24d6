// RUN: tx-opt %s -split-input-file -tx-test-print-fusion-analysis -o /dev/null | FileCheck %s

// The answers of the shared stacked-linear checks, on their own: the groups
// found, the insertion point chosen, the input's alias set, and the ops
// judged to write the input with the reason.

// Gemma-4 shape: the insertion point is q's call in the entry block; the
// container write after the calls and the container_get are not writes of
// the input.
tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK-LABEL: group in @gemma4: 'q_proj', 'k_proj', 'v_proj'
// CHECK-NEXT: call: 'tx.linear' at line [[# @LINE + 11]] 'q_proj'
// CHECK-NEXT: call: 'tx.linear' at line [[# @LINE + 15]] 'k_proj'
// CHECK-NEXT: call: 'tx.linear' at line [[# @LINE + 18]] 'v_proj'
// CHECK-NEXT: single calls: ok, 1 guard reference(s) to fold
// CHECK-NEXT: insertion point: before 'tx.linear' at line [[# @LINE + 7]] in the entry block
// CHECK-NEXT: input: %arg0
// CHECK-NEXT: may alias the input: %arg0(must) %2#0(may) %2#1(may) %1#0(may) %1#1(may)
// CHECK-NEXT: writes the input: none
// CHECK-NOT: group
func.func @gemma4(%x: memref<?x64xf32>, %states: !tx.container, %shared: i1) -> memref<?x64xf32> {
  %idx = arith.constant 0 : index
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k, %v = scf.if %shared -> (memref<?x16xf32>, memref<?x16xf32>) {
    %ks, %vs = tx.container_get %states[%idx] : memref<?x16xf32>, memref<?x16xf32>
    scf.yield %ks, %vs : memref<?x16xf32>, memref<?x16xf32>
  } else {
    %k0 = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    %r = tx.layer_ref @v_proj
    %has_v = tx.guard is_not_none %r
    %v0 = scf.if %has_v -> (memref<?x16xf32>) {
      %v1 = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
      scf.yield %v1 : memref<?x16xf32>
    } else {
      scf.yield %k0 : memref<?x16xf32>
    }
    scf.yield %k0, %v0 : memref<?x16xf32>, memref<?x16xf32>
  }
  tx.container_set %states[%idx] = %k, %v : memref<?x16xf32>, memref<?x16xf32>
  return %q : memref<?x64xf32>
}

// -----

// Every writer is listed with its reason: a view of the input written in
// place (may alias: a reshape is not the same buffer as an input), an opaque call (no effects), an out= write to an
// unknown argument (may alias); the fresh-buffer write is not listed.
tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: group in @writers: 'q_proj', 'k_proj'
// CHECK: insertion point: before 'tx.linear' at line [[# @LINE + 9]] in the entry block
// CHECK-NEXT: input: %arg0
// CHECK-NEXT: may alias the input: %arg0(must) %arg1(may) %1(may)
// CHECK-NEXT: writes the input: 'tx.binary_into' at line [[# @LINE + 8]]: writes a buffer that may alias the input
// CHECK-NEXT: writes the input: 'tx.opaque_call' at line [[# @LINE + 9]]: declares no memory effects, so it may write anything
// CHECK-NEXT: writes the input: 'tx.unary_into' at line [[# @LINE + 9]]: writes a buffer that may alias the input
// CHECK-NOT: writes the input
func.func @writers(%x: memref<?x64xf32>, %y: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %c2 = arith.constant 2.0 : f32
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %xv = tx.view %x : memref<?x64xf32> -> memref<?x4x16xf32>
  tx.binary_into mul %xv, %c2 into %xv : memref<?x4x16xf32>, f32, memref<?x4x16xf32>
  tx.unary_into relu %q into %q : memref<?x64xf32>, memref<?x64xf32>
  tx.opaque_call "hook"() : () -> ()
  tx.unary_into relu %q into %y : memref<?x64xf32>, memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  tx.unary_into relu %q into %x : memref<?x64xf32>, memref<?x64xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// Group finding: same input (or x.data), same in-features, element type and
// bias make a group, in program order; another input, a bias mismatch, or
// a lone projection do not.
tx.layer @a : 64 -> 8, f32
tx.layer @b : 64 -> 8, f32
tx.layer @c : 64 -> 8, f32 bias
tx.layer @d : 64 -> 8, f32 bias
tx.layer @e : 64 -> 8, f32
tx.layer @f : 8 -> 8, f32

// CHECK-LABEL: group in @groups: 'a', 'b', 'e'
// CHECK: single calls: refused at 'tx.linear' at line [[# @LINE + 18]]: 'e' is called twice
// CHECK: group in @groups: 'c', 'd'
// CHECK-NEXT: call: 'tx.linear' at line [[# @LINE + 11]] 'c'
// CHECK-NEXT: call: 'tx.linear' at line [[# @LINE + 12]] 'd'
// CHECK-NEXT: single calls: ok, 0 guard reference(s) to fold
// CHECK: insertion point: refused at 'tx.linear' at line [[# @LINE + 10]]: 'd' is called inside a loop ('scf.for') the merged projection would be hoisted out of
// CHECK-NOT: group
func.func @groups(%x: memref<4x64xf32>, %y: memref<4x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = tx.linear @a(%x) : memref<4x64xf32> -> memref<4x8xf32>
  %xd = tx.alias %x : memref<4x64xf32>
  %b = tx.linear @b(%xd) : memref<4x64xf32> -> memref<4x8xf32>
  %c = tx.linear @c(%x) : memref<4x64xf32> -> memref<4x8xf32>
  scf.for %i = %c0 to %n step %c1 {
    %d = tx.linear @d(%x) : memref<4x64xf32> -> memref<4x8xf32>
  }
  %e = tx.linear @e(%x) : memref<4x64xf32> -> memref<4x8xf32>
  %e2 = tx.linear @e(%y) : memref<4x64xf32> -> memref<4x8xf32>
  %f = tx.linear @f(%a) : memref<4x8xf32> -> memref<4x8xf32>
  return
}
