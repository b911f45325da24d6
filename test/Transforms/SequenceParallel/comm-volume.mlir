// Bytes moved per layer by the collectives of a Llama-style TP=2 layer:
// hidden 4096, 2048 tokens, bf16 (S = 2048 * 4096 * 2 B = 16 MiB per
// activation). Ring algorithms, n = 2: all_reduce sends 2 (n-1)/n S = S per
// rank, reduce_scatter and all_gather (n-1)/n S = S/2.
//
// RUN: tx-opt %s -tx-test-comm-volume 2>&1 >/dev/null | FileCheck %s --check-prefix=NOSP
// RUN: tx-opt %s -tx-sequence-parallel -tx-test-comm-volume 2>&1 >/dev/null | FileCheck %s --check-prefix=WITHSP
// RUN: tx-opt %s -tx-sp -tx-test-comm-volume 2>&1 >/dev/null | FileCheck %s --check-prefix=ASYNCTP

// Without sequence parallelism, two all-reduces, 32 MiB of payload, 32 MiB sent per rank.
// NOSP-COUNT-2: remark: all_reduce: payload 16777216 B, ring send per rank 16777216 B
// NOSP: remark: 2 collectives: payload 33554432 B, ring send per rank 33554432 B

// With sequence parallelism each all-reduce is a reduce-scatter plus an all-gather: twice the
// payload, the same 32 MiB sent per rank (and the norms run on half the
// tokens).
// WITHSP: remark: reduce_scatter: payload 16777216 B, ring send per rank 8388608 B
// WITHSP: remark: all_gather: payload 16777216 B, ring send per rank 8388608 B
// WITHSP: remark: reduce_scatter: payload 16777216 B, ring send per rank 8388608 B
// WITHSP: remark: all_gather: payload 16777216 B, ring send per rank 8388608 B
// WITHSP: remark: 4 collectives: payload 67108864 B, ring send per rank 33554432 B

// The tx-sp pipeline with async TP fuses o_proj and down with their
// reduce-scatters and the post-attention gather with gate_up: same bytes.
// ASYNCTP: remark: linear_reduce_scatter: payload 16777216 B, ring send per rank 8388608 B
// ASYNCTP: remark: all_gather_linear: payload 16777216 B, ring send per rank 8388608 B
// ASYNCTP: remark: linear_reduce_scatter: payload 16777216 B, ring send per rank 8388608 B
// ASYNCTP: remark: all_gather: payload 16777216 B, ring send per rank 8388608 B
// ASYNCTP: remark: 4 collectives: payload 67108864 B, ring send per rank 33554432 B

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 1024, hidden_size = 4096, element_size = 2, arch = "sm_90", splitting_ops = []>} {
  // Rank shards: column-parallel qkv (32 heads of 128 / 2) and gate_up
  // (2 x 11008 / 2), row-parallel o_proj and down.
  tx.layer @qkv : 4096 -> 6144, bf16
  tx.layer @o_proj : 2048 -> 4096, bf16
  tx.layer @gate_up : 4096 -> 11008, bf16
  tx.layer @down : 5504 -> 4096, bf16
  tx.param @post_attention_layernorm : memref<4096xbf16>
  tx.param @next_input_layernorm : memref<4096xbf16>

  // %h is this layer's normalised input, %res the residual stream.
  func.func @layer(%h: memref<2048x4096xbf16>, %res: memref<2048x4096xbf16>) -> memref<2048x4096xbf16> {
    %qkv = tx.linear @qkv(%h) : memref<2048x4096xbf16> -> memref<2048x6144xbf16>
    // Stands in for attention over this rank's 16 heads (no communication).
    %a = tx.slice %qkv dim 1 offset 0 size 2048 : memref<2048x6144xbf16> -> memref<2048x2048xbf16, strided<[6144, 1]>>
    %o = tx.linear @o_proj(%a) : memref<2048x2048xbf16, strided<[6144, 1]>> -> memref<2048x4096xbf16>
    %o_sum = tx.all_reduce %o group 2 : memref<2048x4096xbf16> -> memref<2048x4096xbf16>
    %w1 = tx.get_param @post_attention_layernorm : memref<4096xbf16>
    %h2, %res2 = tx.add_rmsnorm %o_sum, %res, %w1 eps 1.0e-05 : memref<2048x4096xbf16>, memref<2048x4096xbf16>, memref<4096xbf16> -> memref<2048x4096xbf16>, memref<2048x4096xbf16>
    %gu = tx.linear @gate_up(%h2) : memref<2048x4096xbf16> -> memref<2048x11008xbf16>
    // Stands in for silu(gate) * up.
    %m = tx.slice %gu dim 1 offset 0 size 5504 : memref<2048x11008xbf16> -> memref<2048x5504xbf16, strided<[11008, 1]>>
    %d = tx.linear @down(%m) : memref<2048x5504xbf16, strided<[11008, 1]>> -> memref<2048x4096xbf16>
    %d_sum = tx.all_reduce %d group 2 : memref<2048x4096xbf16> -> memref<2048x4096xbf16>
    // The next layer's input norm; its residual output goes on scattered.
    %w2 = tx.get_param @next_input_layernorm : memref<4096xbf16>
    %h3, %res3 = tx.add_rmsnorm %d_sum, %res2, %w2 eps 1.0e-05 : memref<2048x4096xbf16>, memref<2048x4096xbf16>, memref<4096xbf16> -> memref<2048x4096xbf16>, memref<2048x4096xbf16>
    return %h3 : memref<2048x4096xbf16>
  }
}
