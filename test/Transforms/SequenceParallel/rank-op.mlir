// tx.rank (added for sequence parallelism) round-trips.
// RUN: tx-opt %s | tx-opt | FileCheck %s

module attributes {tx.config = #tx.config<tp_size = 4>} {
  // CHECK-LABEL: func.func @rank
  // CHECK: %[[R:.+]] = tx.rank group 4
  // CHECK: return %[[R]] : index
  func.func @rank() -> index {
    %r = tx.rank group 4
    return %r : index
  }
}
