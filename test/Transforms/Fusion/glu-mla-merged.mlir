// RUN: tx-opt %s -split-input-file -verify-diagnostics -tx-fuse-stacked-linears | FileCheck %s

// The GLU, MLA and merged-column fusers on the shared mechanism.

// gate/up feeding silu(gate) * up: merged, the activation kept on the gate
// slice.

tx.layer @gate_proj : 64 -> 128, f32 {checkpoint = "mlp.gate_proj"}
tx.layer @up_proj : 64 -> 128, f32 {checkpoint = "mlp.up_proj"}

// CHECK: tx.layer @gate_up_proj : 64 -> 256, f32 stacking [#tx.stack<source = "mlp.gate_proj", offset = 0, size = 128>, #tx.stack<source = "mlp.up_proj", offset = 128, size = 128>]
// CHECK-LABEL: func.func @glu
// CHECK: %[[GU:.+]] = tx.linear @gate_up_proj(%{{.+}}) : memref<?x64xf32> -> memref<?x256xf32>
// CHECK-NEXT: %[[G:.+]] = tx.slice %[[GU]] dim 1 offset 0 size 128
// CHECK-NEXT: %[[U:.+]] = tx.slice %[[GU]] dim 1 offset 128 size 128
// CHECK-NEXT: %[[A:.+]] = tx.unary silu %[[G]] : memref<?x128xf32, strided<[256, 1]>> -> memref<?x128xf32>
// CHECK-NEXT: tx.binary mul %[[A]], %[[U]] : memref<?x128xf32>, memref<?x128xf32, strided<[256, 1], offset: 128>> -> memref<?x128xf32>
func.func @glu(%h: memref<?x64xf32>) -> memref<?x128xf32> {
  // expected-remark @below {{fused 'gate_proj', 'up_proj' into 'gate_up_proj' (glu)}}
  %g = tx.linear @gate_proj(%h) : memref<?x64xf32> -> memref<?x128xf32>
  %u = tx.linear @up_proj(%h) : memref<?x64xf32> -> memref<?x128xf32>
  %a = tx.unary silu %g : memref<?x128xf32> -> memref<?x128xf32>
  %m = tx.binary mul %a, %u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
  return %m : memref<?x128xf32>
}

// -----

// gate/up not in act(gate) * up shape: not a GLU, the merged-column
// fallback takes them.

tx.layer @gate_proj : 64 -> 128, f32
tx.layer @up_proj : 64 -> 128, f32

// CHECK-LABEL: func.func @not_glu
// CHECK: tx.linear @gate_proj_up_proj
func.func @not_glu(%h: memref<?x64xf32>) -> memref<?x128xf32> {
  // expected-remark @below {{fused 'gate_proj', 'up_proj' into 'gate_proj_up_proj' (merged-column)}}
  %g = tx.linear @gate_proj(%h) : memref<?x64xf32> -> memref<?x128xf32>
  %u = tx.linear @up_proj(%h) : memref<?x64xf32> -> memref<?x128xf32>
  %m = tx.binary add %g, %u : memref<?x128xf32>, memref<?x128xf32> -> memref<?x128xf32>
  return %m : memref<?x128xf32>
}

// -----

// MLA with q-LoRA: q_a_proj + kv_a_proj_with_mqa (DeepSeek's
// fused_qkv_a_proj).

tx.layer @q_a_proj : 64 -> 24, f32 {checkpoint = "attn.q_a_proj"}
tx.layer @kv_a_proj_with_mqa : 64 -> 40, f32 {checkpoint = "attn.kv_a_proj_with_mqa"}

// CHECK: tx.layer @fused_qkv_a_proj : 64 -> 64, f32 stacking [#tx.stack<source = "attn.q_a_proj", offset = 0, size = 24, heads = 1>, #tx.stack<source = "attn.kv_a_proj_with_mqa", offset = 24, size = 40, heads = 1>]
// CHECK-LABEL: func.func @mla_q_lora
// CHECK: %[[F:.+]] = tx.linear @fused_qkv_a_proj
// CHECK: tx.slice %[[F]] dim 1 offset 24 size 40
func.func @mla_q_lora(%h: memref<?x64xf32>) -> (memref<?x24xf32>, memref<?x40xf32>) {
  // expected-remark @below {{fused 'q_a_proj', 'kv_a_proj_with_mqa' into 'fused_qkv_a_proj' (mla)}}
  %qa = tx.linear @q_a_proj(%h) : memref<?x64xf32> -> memref<?x24xf32>
  %kva = tx.linear @kv_a_proj_with_mqa(%h) : memref<?x64xf32> -> memref<?x40xf32>
  %qn = tx.unary neg %qa : memref<?x24xf32> -> memref<?x24xf32>
  %kn = tx.unary neg %kva : memref<?x40xf32> -> memref<?x40xf32>
  return %qn, %kn : memref<?x24xf32>, memref<?x40xf32>
}

// -----

// MLA without q-LoRA: q_proj + kv_a_proj_with_mqa. The kv projection is
// listed first in the source; the stacking puts q first.

tx.layer @q_proj : 64 -> 48, f32
tx.layer @kv_a_proj_with_mqa : 64 -> 40, f32

// CHECK: tx.layer @fused_qkv_a_proj : 64 -> 88, f32 stacking [#tx.stack<source = "q_proj", offset = 0, size = 48, unknown_heads = true>, #tx.stack<source = "kv_a_proj_with_mqa", offset = 48, size = 40, heads = 1>]
// CHECK-LABEL: func.func @mla_no_q_lora
// CHECK: tx.linear @fused_qkv_a_proj
func.func @mla_no_q_lora(%h: memref<?x64xf32>) -> (memref<?x48xf32>, memref<?x40xf32>) {
  // expected-remark @below {{fused 'q_proj', 'kv_a_proj_with_mqa' into 'fused_qkv_a_proj' (mla)}}
  %kva = tx.linear @kv_a_proj_with_mqa(%h) : memref<?x64xf32> -> memref<?x40xf32>
  %q = tx.linear @q_proj(%h) : memref<?x64xf32> -> memref<?x48xf32>
  %qn = tx.unary neg %q : memref<?x48xf32> -> memref<?x48xf32>
  %kn = tx.unary neg %kva : memref<?x40xf32> -> memref<?x40xf32>
  return %qn, %kn : memref<?x48xf32>, memref<?x40xf32>
}

// -----

// Merged-column: any projections of one input, in program order; others
// of another input stay apart.

tx.layer @blk_w1 : 32 -> 16, f32
tx.layer @blk_w3 : 32 -> 16, f32
tx.layer @blk_w2 : 16 -> 32, f32

// CHECK: tx.layer @blk_w1_w3 : 32 -> 32, f32 stacking [#tx.stack<source = "blk_w1", offset = 0, size = 16>, #tx.stack<source = "blk_w3", offset = 16, size = 16>]
// CHECK: tx.layer @blk_w2
// CHECK-LABEL: func.func @merged_column
// CHECK: tx.linear @blk_w1_w3
// CHECK: tx.linear @blk_w2
func.func @merged_column(%h: memref<4x32xf32>) -> memref<4x32xf32> {
  // expected-remark @below {{fused 'blk_w1', 'blk_w3' into 'blk_w1_w3' (merged-column)}}
  %a = tx.linear @blk_w1(%h) : memref<4x32xf32> -> memref<4x16xf32>
  %b = tx.linear @blk_w3(%h) : memref<4x32xf32> -> memref<4x16xf32>
  %m = tx.binary mul %a, %b : memref<4x16xf32>, memref<4x16xf32> -> memref<4x16xf32>
  %o = tx.linear @blk_w2(%m) : memref<4x16xf32> -> memref<4x32xf32>
  return %o : memref<4x32xf32>
}

// -----

// A refused QKV group is not offered again, piecemeal, to merged-column.

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32

// CHECK-LABEL: func.func @refused_once
// CHECK: tx.linear @q_proj
// CHECK: tx.linear @k_proj
func.func @refused_once(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{not fusing 'q_proj', 'k_proj' (qkv)}}
  tx.opaque_call "hook"() : () -> ()
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k : memref<?x64xf32>, memref<?x16xf32>
}

// -----

// Fusing twice: merged layers are flattened into the new stacking map.

tx.layer @a : 8 -> 4, f32
tx.layer @b : 8 -> 4, f32
tx.layer @ab : 8 -> 8, f32 stacking [#tx.stack<source = "m.a", offset = 0, size = 4>, #tx.stack<source = "m.b", offset = 4, size = 4>]

// CHECK: tx.layer @a_b_ab : 8 -> 16, f32 stacking [#tx.stack<source = "a", offset = 0, size = 4>, #tx.stack<source = "b", offset = 4, size = 4>, #tx.stack<source = "m.a", offset = 8, size = 4>, #tx.stack<source = "m.b", offset = 12, size = 4>]
// CHECK-LABEL: func.func @flatten
func.func @flatten(%x: memref<2x8xf32>) -> (memref<2x4xf32>, memref<2x4xf32>, memref<2x8xf32>) {
  // expected-remark @below {{fused 'a', 'b', 'ab' into 'a_b_ab' (merged-column)}}
  %a = tx.linear @a(%x) : memref<2x8xf32> -> memref<2x4xf32>
  %b = tx.linear @b(%x) : memref<2x8xf32> -> memref<2x4xf32>
  %ab = tx.linear @ab(%x) : memref<2x8xf32> -> memref<2x8xf32>
  return %a, %b, %ab : memref<2x4xf32>, memref<2x4xf32>, memref<2x8xf32>
}

// -----

// The fusers named in `fusers` run alone.
// RUN: tx-opt %s -split-input-file -tx-fuse-stacked-linears=fusers=glu 2>&1 >/dev/null | FileCheck %s --check-prefix=ONLY-GLU
// ONLY-GLU-NOT: (qkv)
// ONLY-GLU-NOT: (merged-column)
// ONLY-GLU: fused 'gate_proj', 'up_proj' into 'gate_up_proj' (glu)
