// RUN: tx-opt %s -split-input-file -verify-diagnostics -tx-fuse-stacked-linears -o /dev/null
// Each class of program that once made the fusion return wrong numbers,
// and each false refusal it once made. Executed fused against unfused in
// soundness-exec.test.

// Two subviews of one buffer at different dynamic offsets must-alias as far
// as upstream is concerned; they are different inputs: no group.
tx.layer @q_proj : 8 -> 8, f32
tx.layer @k_proj : 8 -> 8, f32
func.func @dynamic_offsets(%x: memref<?x32xf32>, %i: index, %j: index) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %t = memref.dim %x, %c0 : memref<?x32xf32>
  %xi = memref.subview %x[0, %i] [%t, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %xj = memref.subview %x[0, %j] [%t, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %q = tx.linear @q_proj(%xi) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
  %k = tx.linear @k_proj(%xj) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Two identical subviews (same source, offsets, sizes) are one input.
tx.layer @q_proj : 8 -> 8, f32
tx.layer @k_proj : 8 -> 8, f32
func.func @identical_views(%x: memref<?x32xf32>, %i: index) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %t = memref.dim %x, %c0 : memref<?x32xf32>
  %xi = memref.subview %x[0, %i] [%t, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%xi) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
  %t2 = memref.dim %x, %c0 : memref<?x32xf32>
  %xi2 = memref.subview %x[0, %i] [%t2, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %k = tx.linear @k_proj(%xi2) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Same-typed views with different dynamic strides.
tx.layer @q_proj : 8 -> 8, f32
tx.layer @k_proj : 8 -> 8, f32
func.func @dynamic_strides(%x: memref<?x32xf32>, %s: index, %u: index) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %xs = memref.subview %x[0, 0] [2, 8] [%s, 1] : memref<?x32xf32> to memref<2x8xf32, strided<[?, 1]>>
  %xu = memref.subview %x[0, 0] [2, 8] [%u, 1] : memref<?x32xf32> to memref<2x8xf32, strided<[?, 1]>>
  %xsc = memref.cast %xs : memref<2x8xf32, strided<[?, 1]>> to memref<?x8xf32, strided<[?, 1]>>
  %xuc = memref.cast %xu : memref<2x8xf32, strided<[?, 1]>> to memref<?x8xf32, strided<[?, 1]>>
  %q = tx.linear @q_proj(%xsc) : memref<?x8xf32, strided<[?, 1]>> -> memref<?x8xf32>
  %k = tx.linear @k_proj(%xuc) : memref<?x8xf32, strided<[?, 1]>> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// A loop of blocks inside a region: k's call runs once per iteration, and
// the input is written on the back edge. Hoisting k out is refused.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @cfg_loop(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %k = scf.execute_region -> memref<?x8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %two = arith.constant 2.0 : f32
    cf.br ^loop(%c0 : index)
  ^loop(%i: index):
    // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): 'k_proj' is called inside a region of 'scf.execute_region' that may run repeatedly (a loop of blocks or a repetitive region) the merged projection would be hoisted out of}}
    %k0 = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
    %n = arith.addi %i, %c1 : index
    %more = arith.cmpi slt, %n, %c2 : index
    cf.cond_br %more, ^loop(%n : index), ^exit
  ^exit:
    scf.yield %k0 : memref<?x8xf32>
  }
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Blocks without a cycle: k runs at most once, the group fuses.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @cfg_no_loop(%x: memref<?x32xf32>, %c: i1) -> (memref<?x8xf32>, memref<?x8xf32>) {
  // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %k = scf.execute_region -> memref<?x8xf32> {
    cf.cond_br %c, ^a, ^b
  ^a:
    %k0 = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %k0 : memref<?x8xf32>
  ^b:
    scf.yield %q : memref<?x8xf32>
  }
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// A write on a block loop between the calls (no call in the loop).
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @cfg_loop_write_between(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  scf.execute_region {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %two = arith.constant 2.0 : f32
    cf.br ^loop(%c0 : index)
  ^loop(%i: index):
    %n = arith.addi %i, %c1 : index
    %more = arith.cmpi slt, %n, %c2 : index
    cf.cond_br %more, ^body, ^exit
  ^body:
    // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): input may be written by 'tx.binary_into' before the last call (writes a buffer that must alias the input)}}
    tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
    cf.br ^loop(%n : index)
  ^exit:
    scf.yield
  }
  %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Ops with regions that write: a linalg.fill / linalg.generic writing the
// input declares that write itself (its body has none).
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @linalg_fill(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %zero = arith.constant 0.0 : f32
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): input may be written by 'linalg.fill' before the last call (writes a buffer that must alias the input)}}
  linalg.fill ins(%zero : f32) outs(%x : memref<?x32xf32>)
  %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @linalg_generic(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %xs = tx.slice %x dim 1 offset 8 size 8 : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1], offset: 8>>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): input may be written by 'linalg.generic' before the last call (writes a buffer that may alias the input)}}
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%xs : memref<?x8xf32, strided<[32, 1], offset: 8>>) {
  ^bb0(%o: f32):
    %d = arith.addf %o, %o : f32
    linalg.yield %d : f32
  }
  %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// A write after k in the `then` of an `if` whose `else` calls v runs after
// every call that can follow it: not between the insertion point and a
// call, so the group fuses.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
tx.layer @v_proj : 32 -> 8, f32
func.func @exclusive_branches(%x: memref<?x32xf32>, %c: i1) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %two = arith.constant 2.0 : f32
  // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %kv = scf.if %c -> (memref<?x8xf32>) {
    %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
    scf.yield %k : memref<?x8xf32>
  } else {
    %v = tx.linear @v_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %v : memref<?x8xf32>
  }
  return %q, %kv : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// The same write before k in its branch is between: refused.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
tx.layer @v_proj : 32 -> 8, f32
func.func @write_before_branch_call(%x: memref<?x32xf32>, %c: i1) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %two = arith.constant 2.0 : f32
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  %kv = scf.if %c -> (memref<?x8xf32>) {
    // expected-remark @below {{not fusing 'q_proj', 'k_proj', 'v_proj' (qkv): input may be written by 'tx.binary_into' before the last call}}
    tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
    %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %k : memref<?x8xf32>
  } else {
    %v = tx.linear @v_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %v : memref<?x8xf32>
  }
  return %q, %kv : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Disjoint static slices of one buffer do not alias: writing the q slice of
// a merged output does not write the k slice a later group reads.
tx.layer @a_proj : 32 -> 16, f32
tx.layer @g_proj : 8 -> 8, f32
tx.layer @h_proj : 8 -> 8, f32
func.func @disjoint_slices(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %two = arith.constant 2.0 : f32
  %m = tx.linear @a_proj(%x) : memref<?x32xf32> -> memref<?x16xf32>
  %lo = tx.slice %m dim 1 offset 0 size 8 : memref<?x16xf32> -> memref<?x8xf32, strided<[16, 1]>>
  %hi = tx.slice %m dim 1 offset 8 size 8 : memref<?x16xf32> -> memref<?x8xf32, strided<[16, 1], offset: 8>>
  // expected-remark @below {{fused 'g_proj', 'h_proj' into 'g_proj_h_proj' (merged-column)}}
  %g = tx.linear @g_proj(%hi) : memref<?x8xf32, strided<[16, 1], offset: 8>> -> memref<?x8xf32>
  tx.binary_into mul %lo, %two into %lo : memref<?x8xf32, strided<[16, 1]>>, f32, memref<?x8xf32, strided<[16, 1]>>
  %h = tx.linear @h_proj(%hi) : memref<?x8xf32, strided<[16, 1], offset: 8>> -> memref<?x8xf32>
  return %g, %h : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// Every call under a condition, on paths that may call none of them: the
// merged projection would run where the program calls no layer (and check
// its sizes, and read what the condition may protect): refused.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @all_calls_conditional(%x: memref<?x32xf32>, %c: i1, %d: i1) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = scf.if %c -> (memref<?x8xf32>) {
    // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): no call of 'q_proj', 'k_proj' runs on every path from where the merged projection would go (each is under a condition): it would run where the program calls none of them}}
    %r = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %r : memref<?x8xf32>
  } else {
    %r = tx.unary relu %x : memref<?x32xf32> -> memref<?x32xf32>
    %s = tx.slice %r dim 1 offset 0 size 8 : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1]>>
    %t = memref.cast %s : memref<?x8xf32, strided<[32, 1]>> to memref<?x8xf32, strided<[32, 1]>>
    %u = tx.unary relu %t : memref<?x8xf32, strided<[32, 1]>> -> memref<?x8xf32>
    scf.yield %u : memref<?x8xf32>
  }
  %k = scf.if %d -> (memref<?x8xf32>) {
    %r = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %r : memref<?x8xf32>
  } else {
    scf.yield %q : memref<?x8xf32>
  }
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// One call in each branch of an if with an else: one always runs. Fused.
tx.layer @q_proj : 32 -> 8, f32
tx.layer @k_proj : 32 -> 8, f32
func.func @one_call_per_branch(%x: memref<?x32xf32>, %c: i1) -> memref<?x8xf32> {
  %r = scf.if %c -> (memref<?x8xf32>) {
    // expected-remark @below {{fused 'q_proj', 'k_proj' into 'qkv_proj' (qkv)}}
    %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %q : memref<?x8xf32>
  } else {
    %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    scf.yield %k : memref<?x8xf32>
  }
  return %r : memref<?x8xf32>
}

// -----

// Tied layers (one checkpoint tensor) would need it twice in one stacking
// map: refused.
tx.layer @q_proj : 32 -> 8, f32 {checkpoint = "shared"}
tx.layer @k_proj : 32 -> 8, f32 {checkpoint = "shared"}
func.func @tied(%x: memref<?x32xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): 'q_proj' and 'k_proj' load the same checkpoint tensors ('shared')}}
  %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
  return %q, %k : memref<?x8xf32>, memref<?x8xf32>
}

// -----

// A stacked layer loads its map's sources, not its own name: one of them
// shared with a plain layer's checkpoint is tied too (the merged map named
// 'a' twice and the pass failed).
tx.layer @qk : 16 -> 16, f32 stacking [
  #tx.stack<source = "a", offset = 0, size = 8, heads = 0>,
  #tx.stack<source = "b", offset = 8, size = 8, heads = 0>]
tx.layer @v : 16 -> 8, f32 {checkpoint = "a"}
func.func @tied_stacked_source(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x8xf32>) {
  %q = tx.linear @qk(%x) : memref<?x16xf32> -> memref<?x16xf32>
  // expected-remark @below {{not fusing 'qk', 'v' (merged-column): 'qk' and 'v' load the same checkpoint tensors ('a')}}
  %k = tx.linear @v(%x) : memref<?x16xf32> -> memref<?x8xf32>
  return %q, %k : memref<?x16xf32>, memref<?x8xf32>
}

// -----

// Two stacked layers with a source in common.
tx.layer @ab : 16 -> 16, f32 stacking [
  #tx.stack<source = "shared", offset = 0, size = 8, heads = 0>,
  #tx.stack<source = "b", offset = 8, size = 8, heads = 0>]
tx.layer @cd : 16 -> 16, f32 stacking [
  #tx.stack<source = "c", offset = 0, size = 8, heads = 0>,
  #tx.stack<source = "shared", offset = 8, size = 8, heads = 0>]
func.func @tied_two_stacked(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>) {
  %a = tx.linear @ab(%x) : memref<?x16xf32> -> memref<?x16xf32>
  // expected-remark @below {{not fusing 'ab', 'cd' (merged-column): 'ab' and 'cd' load the same checkpoint tensors ('shared')}}
  %c = tx.linear @cd(%x) : memref<?x16xf32> -> memref<?x16xf32>
  return %a, %c : memref<?x16xf32>, memref<?x16xf32>
}
