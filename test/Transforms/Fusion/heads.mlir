// Head counts in stacking maps: they reach whichever fuser merges the
// layers, a part made of heads is never split across ranks, and odd counts
// are refused with a remark instead of printing IR that does not verify.
// RUN: tx-opt %s -split-input-file -verify-diagnostics -tx-fuse-stacked-linears="kv-heads=2" | FileCheck %s
// Fused, then exported for 4 ranks in one go:
// RUN: tx-opt %s -split-input-file -tx-fuse-stacked-linears="kv-heads=2" -tx-export-stacking-maps=tp-size=4 -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=TP4
// RUN: not tx-opt %s -split-input-file -tx-fuse-stacked-linears=q-heads=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEG

// NEG: error: q-heads and kv-heads must not be negative, got -1 and 0

// Only q has a bias, so q is left alone and k/v merge through the
// merged-column fallback: kv-heads still reaches them. With 4 ranks each of
// the 2 KV heads is replicated on two ranks instead of each rank getting
// half a head.
module attributes {tx.config = #tx.config<tp_size = 4>} {
  tx.layer @q_proj : 64 -> 64, f32 bias {checkpoint = "l0.q_proj"}
  tx.layer @k_proj : 64 -> 32, f32 {checkpoint = "l0.k_proj"}
  tx.layer @v_proj : 64 -> 32, f32 {checkpoint = "l0.v_proj"}
  // CHECK: tx.layer @k_proj_v_proj : 64 -> 64, f32 stacking [#tx.stack<source = "l0.k_proj", offset = 0, size = 32, heads = 2>, #tx.stack<source = "l0.v_proj", offset = 32, size = 32, heads = 2>]
  // TP4: {"name":"k_proj_v_proj",
  // TP4-SAME: {"rank":0,"parts":[{"source":"l0.k_proj","rows":[0,16],"offset":0},{"source":"l0.v_proj","rows":[0,16],"offset":16}],"rows":32},
  // TP4-SAME: {"rank":1,"parts":[{"source":"l0.k_proj","rows":[0,16],"offset":0},{"source":"l0.v_proj","rows":[0,16],"offset":16}],"rows":32},
  // TP4-SAME: {"rank":2,"parts":[{"source":"l0.k_proj","rows":[16,32],"offset":0},{"source":"l0.v_proj","rows":[16,32],"offset":16}],"rows":32},
  // TP4-SAME: {"rank":3,"parts":[{"source":"l0.k_proj","rows":[16,32],"offset":0},{"source":"l0.v_proj","rows":[16,32],"offset":16}],"rows":32}]}
  func.func @bias_only_on_q(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>) {
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    // expected-remark @below {{fused 'k_proj', 'v_proj' into 'k_proj_v_proj' (merged-column)}}
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    return %q, %k, %v : memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>
  }
}

// -----

// A QKV group with no head count for q (no attribute, no q-heads, no view
// of its result into heads) under tp_size 4: refused, never split blindly.
module attributes {tx.config = #tx.config<tp_size = 4>} {
  tx.layer @q_proj : 64 -> 64, f32
  tx.layer @k_proj : 64 -> 32, f32
  tx.layer @v_proj : 64 -> 32, f32
  // CHECK-LABEL: func.func @no_heads_tp4
  // CHECK-COUNT-3: tx.linear @{{[qkv]}}_proj
  // TP4-NOT: "name":"qkv_proj"
  func.func @no_heads_tp4(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>) {
    // expected-remark @below {{not fusing 'q_proj', 'k_proj', 'v_proj' (qkv): 'q_proj' is made of attention heads but has no head count under tp_size 4, so its stacking map could split a head across ranks (give the layer a `heads` attribute or set q-heads/kv-heads)}}
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    return %q, %k, %v : memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>
  }
}

// -----

// The same group with its q result viewed as (T, 4, 16): the heads come
// from the IR and the group fuses under tp_size 4.
module attributes {tx.config = #tx.config<tp_size = 4>} {
  tx.layer @q_proj : 64 -> 64, f32
  tx.layer @k_proj : 64 -> 32, f32
  tx.layer @v_proj : 64 -> 32, f32
  // CHECK: tx.layer @qkv_proj : 64 -> 128, f32 stacking [#tx.stack<source = "q_proj", offset = 0, size = 64, heads = 4>, #tx.stack<source = "k_proj", offset = 64, size = 32, heads = 2>, #tx.stack<source = "v_proj", offset = 96, size = 32, heads = 2>]
  // TP4: {"name":"qkv_proj",
  // TP4-SAME: {"rank":3,"parts":[{"source":"q_proj","rows":[48,64],"offset":0},{"source":"k_proj","rows":[16,32],"offset":16},{"source":"v_proj","rows":[16,32],"offset":32}],"rows":48}]}
  func.func @heads_from_view(%x: memref<?x64xf32>) -> (memref<?x4x16xf32>, memref<?x32xf32>, memref<?x32xf32>) {
    // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %q3 = tx.view %q : memref<?x64xf32> -> memref<?x4x16xf32>
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
    return %q3, %k, %v : memref<?x4x16xf32>, memref<?x32xf32>, memref<?x32xf32>
  }
}

// -----

// Heads that do not divide a part's rows would make a stack entry that does
// not verify: refused at any tp_size (here none: 1).
tx.layer @q_proj : 64 -> 64, f32 {heads = 6}
tx.layer @k_proj : 64 -> 32, f32 {heads = 2}
// CHECK-LABEL: func.func @heads_do_not_divide
// CHECK-COUNT-2: tx.linear @{{[qk]}}_proj
func.func @heads_do_not_divide(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x32xf32>) {
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv): 'q_proj' has 64 rows, not a multiple of its 6 heads}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return %q, %k : memref<?x64xf32>, memref<?x32xf32>
}

// -----

tx.layer @gate_proj : 64 -> 64, f32 {heads = -2}
tx.layer @up_proj : 64 -> 64, f32
// CHECK-LABEL: func.func @negative_heads
// CHECK-COUNT-2: tx.linear @{{gate|up}}_proj
func.func @negative_heads(%x: memref<?x64xf32>) -> memref<?x64xf32> {
  // expected-remark @below {{not fusing 'gate_proj', 'up_proj' (merged-column): 'gate_proj' has a negative `heads` attribute (-2)}}
  %g = tx.linear @gate_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %u = tx.linear @up_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %m = tx.binary mul %g, %u : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>
  return %m : memref<?x64xf32>
}

// -----

// Rows that overflow 64 bits when stacked: refused, not a wrapped-around
// layer size.
tx.layer @a_proj : 64 -> 9223372036854775807, f32
tx.layer @b_proj : 64 -> 2, f32
// CHECK-LABEL: func.func @rows_overflow
func.func @rows_overflow(%x: memref<?x64xf32>) -> (memref<?x9223372036854775807xf32>, memref<?x2xf32>) {
  %a = tx.linear @a_proj(%x) : memref<?x64xf32> -> memref<?x9223372036854775807xf32>
  // expected-remark @below {{not fusing 'a_proj', 'b_proj' (merged-column): 'b_proj' would make the merged layer's rows overflow 64 bits}}
  %b = tx.linear @b_proj(%x) : memref<?x64xf32> -> memref<?x2xf32>
  return %a, %b : memref<?x9223372036854775807xf32>, memref<?x2xf32>
}
