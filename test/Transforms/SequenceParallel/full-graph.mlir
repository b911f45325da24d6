// Both rewrite passes check the compilation mode themselves, whatever built
// the module (the config pass has not run here).
// RUN: tx-opt %s -split-input-file -tx-sequence-parallel -verify-diagnostics
// RUN: not tx-opt %s -split-input-file -tx-async-tp 2>&1 | FileCheck %s --check-prefix=ASYNC
// RUN: not tx-opt %s -split-input-file -tx-verify-sp-contract 2>&1 | FileCheck %s --check-prefix=VERIFY

// ASYNC: 'tx-async-tp' requires full-graph compilation (module is split at tx.attention, tx.unary without graph partition)
// VERIFY: 'tx-verify-sp-contract' requires full-graph compilation (module is split at tx.attention, tx.unary without graph partition)

// expected-error @below {{'tx-sequence-parallel' requires full-graph compilation (module is split at tx.attention, tx.unary without graph partition); set splitting_ops = [], set graph_partition, or run tx-finalize-config first}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, splitting_ops = ["tx.attention", "tx.unary"], cudagraph_mode = full_and_piecewise>} {
  tx.param @ln : memref<64xf32>
  func.func @f(%o: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    return %h : memref<16x64xf32>
  }
}


// -----

// Unset splitting ops are vLLM's default (attention), not an empty list: the
// module is piecewise and both passes refuse it.
// ASYNC: 'tx-async-tp' requires full-graph compilation (module is split at tx.attention (splitting_ops is unset: the default splitting ops) without graph partition)
// VERIFY: 'tx-verify-sp-contract' requires full-graph compilation (module is split at tx.attention (splitting_ops is unset: the default splitting ops) without graph partition)

// expected-error @below {{'tx-sequence-parallel' requires full-graph compilation (module is split at tx.attention (splitting_ops is unset: the default splitting ops) without graph partition); set splitting_ops = [], set graph_partition, or run tx-finalize-config first}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 16>} {
  tx.param @ln : memref<64xf32>
  func.func @f(%o: memref<16x64xf32>) -> memref<16x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %o group 2 : memref<16x64xf32> -> memref<16x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<16x64xf32>, memref<64xf32> -> memref<16x64xf32>
    return %h : memref<16x64xf32>
  }
}
