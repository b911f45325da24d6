// Diagnostics about the module's config are printed at the module's location
// without the module as a note ("see current operation: module ..." would
// print the whole program after every config warning). Diagnostics about a
// single op keep the op as a note (remark-notes.mlir).
//
// RUN: tx-opt %s -tx-finalize-config -o /dev/null 2>&1 | FileCheck %s
// CHECK: warning: async_tp requires sequence_parallel: enabling sequence_parallel
// CHECK-NOT: see current operation
// CHECK-NOT: func.func
//
// RUN: not tx-opt %s -tx-fuse-stacked-linears=fusers=nope -o /dev/null 2>&1 | FileCheck %s --check-prefix=ERR
// ERR: error: unknown fuser 'nope'
// ERR-NOT: see current operation
module attributes {tx.config = #tx.config<tp_size = 2, async_tp = true, sp_min_tokens = 512>} {
  func.func @forward(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    return %x : memref<?x64xf32>
  }
}
