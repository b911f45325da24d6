// RUN: not tx-opt %s -tx-fuse-stacked-linears=fusers=qkv,bogus 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tx-opt %s -tx-fusion="q-pattern=wq k-pattern=wk v-pattern=wv q-heads=4 kv-heads=2" 2>&1 | FileCheck %s

// BAD: unknown fuser 'bogus' (expected qkv, mla, glu or merged-column)

// Role names and heads from the pipeline options.
// CHECK: remark: fused 'attn_wq', 'attn_wk', 'attn_wv' into 'attn_qkv_proj' (qkv)
// CHECK: tx.layer @attn_qkv_proj : 64 -> 128, f32 stacking [#tx.stack<source = "attn_wq", offset = 0, size = 64, heads = 4>, #tx.stack<source = "attn_wk", offset = 64, size = 32, heads = 2>, #tx.stack<source = "attn_wv", offset = 96, size = 32, heads = 2>]
tx.layer @attn_wq : 64 -> 64, f32
tx.layer @attn_wk : 64 -> 32, f32
tx.layer @attn_wv : 64 -> 32, f32
func.func @f(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>) {
  %q = tx.linear @attn_wq(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @attn_wk(%x) : memref<?x64xf32> -> memref<?x32xf32>
  %v = tx.linear @attn_wv(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return %q, %k, %v : memref<?x64xf32>, memref<?x32xf32>, memref<?x32xf32>
}
