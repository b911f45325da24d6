// RUN: tx-opt %s -tx-to-linalg=allow-collectives | FileCheck %s

// With allow-collectives, a collective over two ranks stays for the
// collectives lowering; everything around it is lowered.
// CHECK-LABEL: func.func @tp2
// CHECK: linalg.matmul
// CHECK: %[[R:.+]] = tx.all_reduce %{{.+}} group 2
// CHECK: return %[[R]]
module attributes {tx.config = #tx.config<tp_size = 2>} {
  tx.layer @o : 16 -> 16, f32
  func.func @tp2(%x: memref<?x16xf32>) -> memref<?x16xf32> {
    %y = tx.linear @o(%x) : memref<?x16xf32> -> memref<?x16xf32>
    %r = tx.all_reduce %y group 2 : memref<?x16xf32> -> memref<?x16xf32>
    return %r : memref<?x16xf32>
  }
}
