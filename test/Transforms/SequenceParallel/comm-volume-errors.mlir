// Odd options and sizes give an error, never a wrapped-around count.
// RUN: not tx-opt %s -tx-test-comm-volume=tokens=-1 2>&1 >/dev/null | FileCheck %s --check-prefix=NEG
// RUN: not tx-opt %s -tx-test-comm-volume=tokens=9223372036854775807 2>&1 >/dev/null | FileCheck %s --check-prefix=HUGE
// RUN: tx-opt %s -tx-test-comm-volume=tokens=16 2>&1 >/dev/null | FileCheck %s --check-prefix=OK

// NEG: error: tokens must not be negative, got -1
// HUGE: error: all_reduce: the byte count does not fit in 64 bits
// OK: all_reduce: payload 4096 B, ring send per rank 4096 B

module attributes {tx.config = #tx.config<tp_size = 2>} {
  func.func @f(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    %ar = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    return %ar : memref<?x64xf32>
  }
}
