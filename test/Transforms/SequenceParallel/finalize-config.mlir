// vLLM's decision table, one row per case.
// RUN: tx-opt %s -split-input-file -tx-finalize-config -verify-diagnostics | FileCheck %s

// Row: async TP (fuse GEMM+comms) turns SP on.
// The splitting ops are unset (the default, attention), so SP also clears
// them: see the splitting-op rows below.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 512, splitting_ops = []>
// expected-warning @below {{async_tp requires sequence_parallel: enabling sequence_parallel}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, async_tp = true, sp_min_tokens = 512>} {}

// -----

// Row: SP with TP size 1 turns SP and async TP off.
// CHECK: tx.config = #tx.config<sp_min_tokens = 512, splitting_ops = ["tx.attention"]>
// expected-warning @below {{sequence parallelism requires tp_size > 1: disabling sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 1, sequence_parallel = true, sp_min_tokens = 512>} {}

// -----

// Rows 1 and 2 together: async TP with TP 1 ends with both off.
// CHECK: tx.config = #tx.config<splitting_ops = ["tx.attention"]>
// expected-warning @below {{async_tp requires sequence_parallel: enabling sequence_parallel}}
// expected-warning @below {{sequence parallelism requires tp_size > 1: disabling sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 1, async_tp = true>} {}

// -----

// Row: no min token count: computed for sm_90,
// floor(8 MiB * 2 / (8192 * 2 B)) = 1024.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 1024, splitting_ops = [], hidden_size = 8192, element_size = 2, arch = "sm_90">
// expected-warning @below {{sp_min_tokens is unset: computed 1024 = floor(8 MiB * 2 / (8192 * 2 B)) for sm_90}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, hidden_size = 8192, element_size = 2, arch = "sm_90">} {}

// -----

// sm_100: floor(32 MiB * 4 / (8192 * 2 B)) = 8192.
// CHECK: sp_min_tokens = 8192
// expected-warning @below {{sp_min_tokens is unset: computed 8192 = floor(32 MiB * 4 / (8192 * 2 B)) for sm_100}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 4, sequence_parallel = true, hidden_size = 8192, element_size = 2, arch = "sm_100">} {}

// -----

// f32 halves the count: floor(8 MiB * 2 / (16384 * 4 B)) = 256.
// CHECK: sp_min_tokens = 256
// expected-warning @below {{sp_min_tokens is unset: computed 256 = floor(8 MiB * 2 / (16384 * 4 B)) for sm_90}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, hidden_size = 16384, element_size = 4, arch = "sm_90">} {}

// -----

// Row: hidden below the architecture's minimum: no answer, SP and async TP off.
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"], hidden_size = 4096, element_size = 2, arch = "sm_90">
// expected-warning @below {{hidden_size 4096 is too small for the SP threshold heuristic on sm_90 (needs at least 8192): disabling sequence_parallel and async_tp (set sp_min_tokens by hand to force sequence parallelism)}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, hidden_size = 4096, element_size = 2, arch = "sm_90">} {}

// -----

// Row: unknown architecture: no answer.
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"], hidden_size = 8192, element_size = 2, arch = "sm_80">
// expected-warning @below {{sp_min_tokens is unset and the threshold heuristic has no constants for arch 'sm_80' (known: sm_90, sm_100): disabling sequence_parallel and async_tp (set sp_min_tokens by hand to force sequence parallelism)}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, hidden_size = 8192, element_size = 2, arch = "sm_80">} {}

// -----

// No architecture at all: no answer.
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"], hidden_size = 8192, element_size = 2>
// expected-warning @below {{sp_min_tokens is unset and no arch is given for the threshold heuristic: disabling sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, hidden_size = 8192, element_size = 2>} {}

// -----

// No hidden size anywhere (no config entry, no norm to infer it from).
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"], arch = "sm_90">
// expected-warning @below {{sp_min_tokens is unset and the hidden size is unknown (no hidden_size in tx.config and no rmsnorm weight to infer it from): disabling sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, arch = "sm_90">} {}

// -----

// Row: a user-set count is kept as is, even where the heuristic has no
// answer (no warning about it; with splitting_ops = [] none at all).
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 77, splitting_ops = [], hidden_size = 4096, arch = "sm_80">
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 77, splitting_ops = [], hidden_size = 4096, arch = "sm_80">} {}

// -----

// Hidden size and element size inferred from the rmsnorm weights (bf16).
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 1024, splitting_ops = [], hidden_size = 8192, element_size = 2, arch = "sm_90">
// expected-warning @below {{hidden_size is unset: inferred 8192 from the rmsnorm weights}}
// expected-warning @below {{element_size is unset: using 2 (the rmsnorm element type)}}
// expected-warning @below {{sp_min_tokens is unset: computed 1024}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, arch = "sm_90">} {
  func.func @f(%x: memref<?x8192xbf16>, %w: memref<8192xbf16>) -> memref<?x8192xbf16> {
    %h = tx.rmsnorm %x, %w eps 1.0e-06 : memref<?x8192xbf16>, memref<8192xbf16> -> memref<?x8192xbf16>
    return %h : memref<?x8192xbf16>
  }
}

// -----

// Row: SP with splitting ops and no graph partition: the list is cleared
// (full graph) and full_and_piecewise CUDA graphs become full.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = [], cudagraph_mode = full>
// expected-warning @below {{sequence parallelism requires full-graph compilation without graph_partition: clearing splitting_ops to keep sequence_parallel and async_tp}}
// expected-warning @below {{sequence parallelism is incompatible with piecewise CUDA graphs without graph_partition: cudagraph_mode full_and_piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], cudagraph_mode = full_and_piecewise>} {}

// -----

// Same row, piecewise CUDA graphs.
// CHECK: splitting_ops = [], cudagraph_mode = full>
// expected-warning @below {{clearing splitting_ops}}
// expected-warning @below {{cudagraph_mode piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], cudagraph_mode = piecewise>} {}

// -----

// Same row, async TP alone (which turns SP on first); no CUDA graphs, so
// only the list is cleared.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 64, splitting_ops = []>
// expected-warning @below {{async_tp requires sequence_parallel: enabling sequence_parallel}}
// expected-warning @below {{clearing splitting_ops}}
module attributes {tx.config = #tx.config<tp_size = 2, async_tp = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"]>} {}

// -----

// Graph partition keeps one graph: the splitting ops stay, no warning.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], graph_partition = true, cudagraph_mode = full_and_piecewise>
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], graph_partition = true, cudagraph_mode = full_and_piecewise>} {}

// -----

// SP turned off by TP 1 leaves piecewise compilation alone.
// CHECK: tx.config = #tx.config<sp_min_tokens = 64, splitting_ops = ["tx.attention"], cudagraph_mode = piecewise>
// expected-warning @below {{requires tp_size > 1}}
module attributes {tx.config = #tx.config<tp_size = 1, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], cudagraph_mode = piecewise>} {}

// -----

// Row: a user-given empty splitting-op list with piecewise CUDA graphs:
// piecewise becomes none.
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = []>
// expected-warning @below {{splitting_ops is empty, so there are no piecewise CUDA graphs: cudagraph_mode piecewise becomes none}}
module attributes {tx.config = #tx.config<tp_size = 2, splitting_ops = [], cudagraph_mode = piecewise>} {}

// -----

// ... and full_and_piecewise becomes full.
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = [], cudagraph_mode = full>
// expected-warning @below {{splitting_ops is empty, so there are no piecewise CUDA graphs: cudagraph_mode full_and_piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, splitting_ops = [], cudagraph_mode = full_and_piecewise>} {}

// -----

// Row: no list given is vLLM's default, the attention ops, not an empty
// list: piecewise compilation, so piecewise CUDA graphs stay (no warning).
// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"], cudagraph_mode = piecewise>
module attributes {tx.config = #tx.config<tp_size = 2, cudagraph_mode = piecewise>} {}

// -----

// The default, no CUDA graphs, no SP: only the list is filled in.
// CHECK: tx.config = #tx.config<splitting_ops = ["tx.attention"]>
module attributes {tx.config = #tx.config<>} {}

// -----

// Row: SP with the default splitting ops is SP with splitting ops: the list
// is cleared and full_and_piecewise CUDA graphs become full.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = [], cudagraph_mode = full>
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
// expected-warning @below {{sequence parallelism is incompatible with piecewise CUDA graphs without graph_partition: cudagraph_mode full_and_piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, cudagraph_mode = full_and_piecewise>} {}

// -----

// Same, piecewise CUDA graphs become full (not none: the empty-list row is
// for a list the user gave).
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = [], cudagraph_mode = full>
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
// expected-warning @below {{cudagraph_mode piecewise becomes full}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, cudagraph_mode = piecewise>} {}

// -----

// The default with graph partition: one graph already, the list is filled
// in and kept, no warning.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = ["tx.attention"], graph_partition = true, cudagraph_mode = full_and_piecewise>
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, graph_partition = true, cudagraph_mode = full_and_piecewise>} {}

// -----

// SP with a user-given empty list: already full graph, nothing to clear.
// CHECK: tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = [], cudagraph_mode = full>
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 64, splitting_ops = [], cudagraph_mode = full>} {}

// -----

// Row: under SP, capture sizes are filtered to multiples of TP.
// CHECK: tx.config = #tx.config<tp_size = 4, sequence_parallel = true, sp_min_tokens = 8, splitting_ops = [], capture_sizes = [4, 8, 16]>
// expected-warning @below {{sequence parallelism needs capture sizes divisible by tp_size 4: dropping 1, 2, 6}}
module attributes {tx.config = #tx.config<tp_size = 4, sequence_parallel = true, sp_min_tokens = 8, splitting_ops = [], capture_sizes = [1, 2, 4, 6, 8, 16]>} {}

// -----

// Without SP the capture sizes stay.
// CHECK: tx.config = #tx.config<tp_size = 4, splitting_ops = ["tx.attention"], capture_sizes = [1, 2, 3]>
module attributes {tx.config = #tx.config<tp_size = 4, capture_sizes = [1, 2, 3]>} {}

// -----

// Inconsistent settings are errors.
// expected-error @below {{element_size 3 is not the size of a float type (1, 2, 4 or 8)}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, element_size = 3>} {}

// -----

// A tp_size whose threshold does not fit in 64 bits is an error, not a
// wrapped-around count (2^23 * 2^62 / 2^14 = 2^71).
// expected-error @below {{the SP threshold for tp_size 4611686018427387904 does not fit in 64 bits; set sp_min_tokens}}
module attributes {tx.config = #tx.config<tp_size = 4611686018427387904, sequence_parallel = true, hidden_size = 8192, element_size = 2, arch = "sm_90">} {}

// -----

// tp_size = 2^63 - 1 with hidden 2^23 and 8-byte elements still fits:
// 2^23 * (2^63 - 1) / 2^26 = 2^60 - 1, computed without wrapping.
// CHECK: tp_size = 9223372036854775807, sequence_parallel = true, sp_min_tokens = 1152921504606846975, splitting_ops = []
// expected-warning @below {{sp_min_tokens is unset: computed 1152921504606846975}}
// expected-warning @below {{clearing splitting_ops (unset: the default, attention) to keep sequence_parallel and async_tp}}
module attributes {tx.config = #tx.config<tp_size = 9223372036854775807, sequence_parallel = true, hidden_size = 8388608, element_size = 8, arch = "sm_90">} {}

// -----

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, arch = "sm_90">} {
  func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>, %y: memref<?x32xf32>, %v: memref<32xf32>) {
    // expected-note @below {{hidden size 64 here}}
    %h = tx.rmsnorm %x, %w eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    // expected-error @below {{norm weights disagree on the hidden size (32 here, 64 before); set hidden_size in tx.config}}
    %g = tx.rmsnorm %y, %v eps 1.0e-06 : memref<?x32xf32>, memref<32xf32> -> memref<?x32xf32>
    return
  }
}

// -----

// A module without tx.config is left alone.
// CHECK-LABEL: module {
// CHECK-NOT: tx.config
module {}
