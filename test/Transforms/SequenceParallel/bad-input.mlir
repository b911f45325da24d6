// Bad input: clear, located diagnostics, never a crash.
// RUN: tx-opt %s -split-input-file -verify-diagnostics -tx-sequence-parallel

// A collective's group must be the module's tensor-parallel group.
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  func.func @group_mismatch(%x: memref<16x64xf32>) -> memref<16x64xf32> {
    // expected-error @below {{'tx.all_reduce' op group size 4 does not match the module's tensor-parallel size 2}}
    %ar = tx.all_reduce %x group 4 : memref<16x64xf32> -> memref<16x64xf32>
    return %ar : memref<16x64xf32>
  }
}

// -----

module attributes {tx.config = #tx.config<tp_size = 2>} {
  func.func @rank_mismatch() -> index {
    // expected-error @below {{'tx.rank' op group size 8 does not match the module's tensor-parallel size 2}}
    %r = tx.rank group 8
    return %r : index
  }
}

// -----

// Negative and zero sizes are rejected when the config is parsed.
// expected-error @below {{sp_min_tokens must not be negative, got -1}}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = -1>} {}

// -----

// expected-error @below {{hidden_size must be positive, got -4096}}
module attributes {tx.config = #tx.config<tp_size = 2, hidden_size = -4096>} {}

// -----

// expected-error @below {{tp_size must be at least 1, got 0}}
module attributes {tx.config = #tx.config<tp_size = 0>} {}

// -----

// SP with TP 1 that never went through tx-finalize-config.
// expected-error @below {{sequence_parallel with tp_size 1 has nothing to scatter; run tx-finalize-config}}
module attributes {tx.config = #tx.config<tp_size = 1, sequence_parallel = true, splitting_ops = []>} {}
