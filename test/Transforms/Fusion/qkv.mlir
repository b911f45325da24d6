// RUN: tx-opt %s -split-input-file -verify-diagnostics -tx-fuse-stacked-linears | FileCheck %s
// RUN: tx-opt %s -split-input-file -tx-fuse-stacked-linears 2>/dev/null | tx-opt -split-input-file | FileCheck %s --check-prefix=REPARSE

// The QKV fuser and the checks every fuser shares. Refused groups keep the
// IR as it was: their original layers and calls are checked below.

// Gemma 4: q outside the branch, k and v inside it, v_proj behind an
// existence guard, a container write after the calls. The merged GEMM goes
// into the entry block before q's call; the guard folds to true.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK: tx.layer @qkv_proj : 64 -> 96, f32 stacking [#tx.stack<source = "q_proj", offset = 0, size = 64, unknown_heads = true>, #tx.stack<source = "k_proj", offset = 64, size = 16, unknown_heads = true>, #tx.stack<source = "v_proj", offset = 80, size = 16, unknown_heads = true>]
// CHECK-NOT: tx.layer
// CHECK-LABEL: func.func @gemma4
// CHECK-SAME: (%[[X:[^:]+]]: memref<?x64xf32>
// CHECK-NEXT: %[[IDX:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[QKV:.+]] = tx.linear @qkv_proj(%[[X]]) : memref<?x64xf32> -> memref<?x96xf32>
// CHECK-NEXT: tx.slice %[[QKV]] dim 1 offset 0 size 64 : memref<?x96xf32> -> memref<?x64xf32, strided<[96, 1]>>
// CHECK: scf.if
// CHECK: tx.container_get
// CHECK: } else {
// CHECK: %[[K:.+]] = tx.slice %[[QKV]] dim 1 offset 64 size 16 : memref<?x96xf32> -> memref<?x16xf32, strided<[96, 1], offset: 64>>
// CHECK: %[[KC:.+]] = memref.alloc(%{{.+}}) : memref<?x16xf32>
// CHECK-NEXT: tx.copy %[[K]] into %[[KC]]
// CHECK-NEXT: %[[TRUE:.+]] = arith.constant true
// CHECK-NEXT: scf.if %[[TRUE]]
// CHECK-NEXT: %[[V:.+]] = tx.slice %[[QKV]] dim 1 offset 80 size 16
// CHECK-NOT: tx.linear
// CHECK-NOT: tx.guard
// CHECK: tx.container_set
// REPARSE-LABEL: func.func @gemma4
// REPARSE: tx.linear @qkv_proj
func.func @gemma4(%x: memref<?x64xf32>, %states: !tx.container, %shared: i1) -> memref<?x64xf32> {
  %idx = arith.constant 0 : index
  // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
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

// Gemma 4 with `x.view(...).mul_(2)` between q's call and the branch: the
// write goes through a view of the input.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK: tx.layer @q_proj
// CHECK: tx.layer @k_proj
// CHECK: tx.layer @v_proj
// CHECK-LABEL: func.func @gemma4_view_write
// CHECK: tx.linear @q_proj
// CHECK: tx.binary_into mul
// CHECK: tx.linear @k_proj
// CHECK: tx.guard is_not_none
// CHECK: tx.linear @v_proj
func.func @gemma4_view_write(%x: memref<?x64xf32>, %states: !tx.container, %shared: i1) -> memref<?x64xf32> {
  %idx = arith.constant 0 : index
  %c2 = arith.constant 2.0 : f32
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %xv = tx.view %x : memref<?x64xf32> -> memref<?x4x16xf32>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj', 'v_proj' (qkv): input may be written by 'tx.binary_into' before the last call (writes a buffer that may alias the input)}}
  tx.binary_into mul %xv, %c2 into %xv : memref<?x4x16xf32>, f32, memref<?x4x16xf32>
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

// F.relu(x, inplace=True) between the calls.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @inplace_activation
// CHECK: tx.linear @q_proj
// CHECK: tx.unary_into relu
// CHECK: tx.linear @k_proj
func.func @inplace_activation(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): input may be written by 'tx.unary_into' before the last call}}
  tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// torch.add(a, b, out=x) between the calls.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @out_write
// CHECK: tx.linear @q_proj
// CHECK: tx.binary_into add
// CHECK: tx.linear @k_proj
func.func @out_write(%x: memref<?x64xf32>, %y: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{input may be written by 'tx.binary_into' before the last call (writes a buffer that must alias the input)}}
  tx.binary_into add %q, %y into %x : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// The input itself stored into a container between the calls: it escapes
// where later code may write through it.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @container_write_of_input
// CHECK: tx.linear @q_proj
// CHECK: tx.container_set
// CHECK: tx.linear @k_proj
func.func @container_write_of_input(%x: memref<?x64xf32>, %states: !tx.container) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %idx = arith.constant 0 : index
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{input may be written by 'tx.container_set' before the last call (writes a buffer that must alias the input)}}
  tx.container_set %states[%idx] = %x : memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// A container write of a fresh projection output between the calls writes
// neither the input nor anything aliasing it: fused (the container is not
// tensor storage, TxAliasAnalysis).

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @container_write_of_fresh
// CHECK: tx.linear @qkv_proj
// CHECK: tx.container_set
// CHECK-NOT: tx.linear
func.func @container_write_of_fresh(%x: memref<?x64xf32>, %states: !tx.container) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %idx = arith.constant 0 : index
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  tx.container_set %states[%idx] = %q : memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// An opaque call between the calls may write anything.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @opaque_call
// CHECK: tx.linear @q_proj
// CHECK: tx.opaque_call "hook"
// CHECK: tx.linear @k_proj
func.func @opaque_call(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{input may be written by 'tx.opaque_call' before the last call (declares no memory effects, so it may write anything)}}
  tx.opaque_call "hook"(%q) : (memref<?x64xf32>) -> ()
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// `self.v_proj == None`: __eq__ may be overridden, the guard cannot fold.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @eq_none
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
// CHECK: tx.guard eq_none
// CHECK: tx.linear @v_proj
func.func @eq_none(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %r = tx.layer_ref @v_proj
  // expected-remark @below {{not fusing 'q_proj', 'k_proj', 'v_proj' (qkv): 'v_proj' is compared with == None}}
  %none = tx.guard eq_none %r
  %v = scf.if %none -> (memref<?x16xf32>) {
    scf.yield %k : memref<?x16xf32>
  } else {
    %v0 = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    scf.yield %v0 : memref<?x16xf32>
  }
  return %q, %k, %v : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// -----

// `self.v_proj != None`.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @ne_none
// CHECK: tx.linear @q_proj
// CHECK: tx.guard ne_none
// CHECK: tx.linear @v_proj
func.func @ne_none(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %r = tx.layer_ref @v_proj
  // expected-remark @below {{'v_proj' is compared with != None}}
  %has = tx.guard ne_none %r
  %v = scf.if %has -> (memref<?x16xf32>) {
    %v0 = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    scf.yield %v0 : memref<?x16xf32>
  } else {
    scf.yield %k : memref<?x16xf32>
  }
  return %q, %k, %v : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// -----

// `if self.v_proj:` and `not self.v_proj` are pure boolean contexts: they
// fold to "exists" (true and false).

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @truthy_falsy
// CHECK: tx.linear @qkv_proj
// CHECK-DAG: %[[T:.+]] = arith.constant true
// CHECK-DAG: %[[F:.+]] = arith.constant false
// CHECK: scf.if %[[T]]
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[F]]
// CHECK-NOT: tx.guard
func.func @truthy_falsy(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>, i1) {
  // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %r = tx.layer_ref @v_proj
  %has = tx.guard truthy %r
  %r2 = tx.layer_ref @v_proj
  %absent = tx.guard falsy %r2
  %v = scf.if %has -> (memref<?x16xf32>) {
    %v0 = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    scf.yield %v0 : memref<?x16xf32>
  } else {
    scf.yield %k : memref<?x16xf32>
  }
  return %q, %k, %v, %absent : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>, i1
}

// -----

// A reference to v_proj handed to a call escapes: v_proj cannot be removed.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @escaping_ref
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
// CHECK: tx.linear @v_proj
func.func @escaping_ref(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %r = tx.layer_ref @v_proj
  // expected-remark @below {{not fusing 'q_proj', 'k_proj', 'v_proj' (qkv): reference to 'v_proj' escapes into 'tx.opaque_call'}}
  tx.opaque_call "register"(%r) : (!tx.layer_ref) -> ()
  return %q, %k, %v : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// -----

// A write to a fresh buffer between the calls (a projection's own output
// and a view of it) is not a write to the input.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @fresh_write
// CHECK: %[[QKV:.+]] = tx.linear @qkv_proj
// CHECK: %[[Q:.+]] = tx.slice %[[QKV]] dim 1 offset 0 size 64
// CHECK: %[[QV:.+]] = tx.view %[[Q]] : memref<?x64xf32, strided<[80, 1]>> -> memref<?x4x16xf32, strided<[80, 16, 1]>>
// CHECK: tx.unary_into silu %[[QV]] into %[[QV]]
// CHECK: %[[T:.+]] = tx.unary relu
// CHECK: tx.binary_into mul %[[T]], %{{.+}} into %[[T]]
// CHECK: tx.slice %[[QKV]] dim 1 offset 64 size 16
func.func @fresh_write(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %c2 = arith.constant 2.0 : f32
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %qv = tx.view %q : memref<?x64xf32> -> memref<?x4x16xf32>
  tx.unary_into silu %qv into %qv : memref<?x4x16xf32>, memref<?x4x16xf32>
  %t = tx.unary relu %x : memref<?x64xf32> -> memref<?x64xf32>
  tx.binary_into mul %t, %c2 into %t : memref<?x64xf32>, f32, memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %t, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// The input comes out of a container (it may alias anything stored there,
// so local alias analysis cannot separate it from other buffers); a buffer
// allocated after the insertion point still cannot be the input.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @fresh_write_unknown_input
// CHECK: tx.linear @qkv_proj
// CHECK-NOT: tx.linear @q_proj
func.func @fresh_write_unknown_input(%states: !tx.container) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %idx = arith.constant 0 : index
  %x = tx.container_get %states[%idx] : memref<?x64xf32>
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %t = tx.unary relu %q : memref<?x64xf32> -> memref<?x64xf32>
  %tv = tx.view %t : memref<?x64xf32> -> memref<?x4x16xf32>
  tx.unary_into silu %tv into %tv : memref<?x4x16xf32>, memref<?x4x16xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %t, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// The same input, written through a buffer that existed before the
// insertion point (a function argument): may alias, refused.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @old_write_unknown_input
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
func.func @old_write_unknown_input(%states: !tx.container, %y: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %idx = arith.constant 0 : index
  %x = tx.container_get %states[%idx] : memref<?x64xf32>
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{input may be written by 'tx.unary_into' before the last call (writes a buffer that may alias the input)}}
  tx.unary_into silu %y into %y : memref<?x64xf32>, memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// Writes to the input before the first call and after the last one do not
// change what the projections read.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @write_outside
// CHECK: tx.unary_into relu
// CHECK-NEXT: %[[QKV:.+]] = tx.linear @qkv_proj
// CHECK: tx.unary_into silu
func.func @write_outside(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  tx.unary_into silu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// A write after the last call, inside the branch that holds it, is not
// between the calls either.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @write_after_in_branch
// CHECK: tx.linear @qkv_proj
func.func @write_after_in_branch(%x: memref<?x64xf32>, %c: i1) -> memref<?x64xf32> {
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  scf.if %c {
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  }
  return %q : memref<?x64xf32>
}

// -----

// A write in the branch exclusive with the last call runs instead of it:
// it is never between the merged GEMM and a call that reads its result.
// (A write in the branch before a call is: see soundness.mlir.)

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @write_in_other_branch
// CHECK: tx.linear @qkv_proj
// CHECK-NOT: tx.linear
func.func @write_in_other_branch(%x: memref<?x64xf32>, %c: i1) -> memref<?x64xf32> {
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  scf.if %c {
    tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  } else {
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  }
  return %q : memref<?x64xf32>
}

// -----

// A projection called twice: one merged call cannot stand for both.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @called_twice
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
// CHECK: tx.linear @k_proj
func.func @called_twice(%x: memref<?x64xf32>, %y: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): 'k_proj' is called twice}}
  %k2 = tx.linear @k_proj(%y) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k, %k2 : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// -----

// A call inside a loop: hoisting it would change how often it runs.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @call_in_loop
// CHECK: tx.linear @q_proj
// CHECK: scf.for
// CHECK: tx.linear @k_proj
func.func @call_in_loop(%x: memref<?x64xf32>, %n: index) -> memref<?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  scf.for %i = %c0 to %n step %c1 {
    // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): 'k_proj' is called inside a loop ('scf.for') the merged projection would be hoisted out of}}
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  }
  return %q : memref<?x64xf32>
}

// -----

// Both calls in one loop body: the merged call stays in the loop.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @calls_in_same_loop
// CHECK: scf.for
// CHECK-NEXT: tx.linear @qkv_proj
func.func @calls_in_same_loop(%x: memref<?x64xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  }
  return
}

// -----

// GQA widths (4 query heads, 1 kv head of 16), heads from the layers'
// `heads` attributes; bias stacked.

tx.layer @q_proj : 64 -> 64, f32 bias {checkpoint = "model.layers.0.self_attn.q_proj", heads = 4}
tx.layer @k_proj : 64 -> 16, f32 bias {checkpoint = "model.layers.0.self_attn.k_proj", heads = 1}
tx.layer @v_proj : 64 -> 16, f32 bias {checkpoint = "model.layers.0.self_attn.v_proj", heads = 1}

// CHECK: tx.layer @qkv_proj : 64 -> 96, f32 bias stacking [#tx.stack<source = "model.layers.0.self_attn.q_proj", offset = 0, size = 64, heads = 4>, #tx.stack<source = "model.layers.0.self_attn.k_proj", offset = 64, size = 16, heads = 1>, #tx.stack<source = "model.layers.0.self_attn.v_proj", offset = 80, size = 16, heads = 1>]
// CHECK-LABEL: func.func @gqa_bias
// CHECK: %[[QKV:.+]] = tx.linear @qkv_proj(%{{.+}}) : memref<8x64xf32> -> memref<8x96xf32>
// CHECK: %[[V:.+]] = tx.slice %[[QKV]] dim 1 offset 80 size 16 : memref<8x96xf32> -> memref<8x16xf32, strided<[96, 1], offset: 80>>
// CHECK: tx.view %[[V]] : memref<8x16xf32, strided<[96, 1], offset: 80>> -> memref<8x1x16xf32, strided<[96, 16, 1], offset: 80>>
func.func @gqa_bias(%x: memref<8x64xf32>) -> (memref<8x4x16xf32>, memref<8x1x16xf32>) {
  // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<8x64xf32> -> memref<8x64xf32>
  %k = tx.linear @k_proj(%x) : memref<8x64xf32> -> memref<8x16xf32>
  %v = tx.linear @v_proj(%x) : memref<8x64xf32> -> memref<8x16xf32>
  %q3 = tx.view %q : memref<8x64xf32> -> memref<8x4x16xf32>
  %k3 = tx.view %k : memref<8x16xf32> -> memref<8x1x16xf32>
  %v3 = tx.view %v : memref<8x16xf32> -> memref<8x1x16xf32>
  %a = tx.attention %q3, %k3, %v3 scale 0.25 : memref<8x4x16xf32>, memref<8x1x16xf32>, memref<8x1x16xf32> -> memref<8x4x16xf32>
  %kc = tx.unary neg %k3 : memref<8x1x16xf32> -> memref<8x1x16xf32>
  return %a, %kc : memref<8x4x16xf32>, memref<8x1x16xf32>
}

// -----

// Heads from the pass options; layers with different bias presence are not
// siblings.

tx.layer @layers_0_q_proj : 64 -> 64, f32
tx.layer @layers_0_k_proj : 64 -> 32, f32
tx.layer @layers_0_v_proj : 64 -> 32, f32 bias

// CHECK: tx.layer @layers_0_qkv_proj : 64 -> 96, f32 stacking [#tx.stack<source = "layers_0_q_proj", offset = 0, size = 64, unknown_heads = true>, #tx.stack<source = "layers_0_k_proj", offset = 64, size = 32, unknown_heads = true>]
// CHECK: tx.layer @layers_0_v_proj
// CHECK-LABEL: func.func @bias_mismatch
// CHECK: tx.linear @layers_0_qkv_proj
// CHECK: tx.linear @layers_0_v_proj
func.func @bias_mismatch(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>) {
  // expected-remark @below {{fused 'layers_0_q_proj', 'layers_0_k_proj' into 'layers_0_qkv_proj' (qkv)}}
  %q = tx.linear @layers_0_q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @layers_0_k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
  %v = tx.linear @layers_0_v_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return %q, %k, %v : memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>
}

// -----

// Inputs that must alias (x and x.data) make one group.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @must_alias_inputs
// CHECK-SAME: (%[[X:[^:]+]]: memref<?x64xf32>
// CHECK: tx.linear @qkv_proj(%[[X]])
func.func @must_alias_inputs(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %xd = tx.alias %x : memref<?x64xf32>
  %k = tx.linear @k_proj(%xd) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// Calls in different blocks of a CFG region: refused (the stability check
// walks structured regions only).

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @cfg_blocks
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
func.func @cfg_blocks(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  cf.br ^bb1
^bb1:
  // expected-remark @below {{'k_proj' is called in another block of an unstructured region than the other projections}}
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}
