// A remark about a function (the SP versioning) is printed at the function's
// location without the whole function as a note; a remark about a single op
// still shows the op. (The default output, no -verify-diagnostics: notes
// are printed there.)
//
// RUN: tx-opt %s -tx-sequence-parallel -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: versioned by token count: @forward_sp (sequence parallel)
// CHECK-NEXT: func.func @forward(
// CHECK-NEXT: ^
// CHECK-NEXT: remark: not sequence-parallel: 4 tokens is below sp_min_tokens 1024
// CHECK-NEXT: tx.all_reduce
// CHECK-NEXT: ^
// CHECK-NEXT: note: see current operation: %{{.*}} = tx.all_reduce

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 1024, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  func.func @forward(%x: memref<?x64xf32>, %res: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x64xf32>) {
    %w = tx.get_param @ln : memref<64xf32>
    %s = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    %y, %r = tx.add_rmsnorm %s, %res, %w eps 1.0e-06 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    return %y, %r : memref<?x64xf32>, memref<?x64xf32>
  }
  func.func @small(%x: memref<4x64xf32>, %res: memref<4x64xf32>) -> (memref<4x64xf32>, memref<4x64xf32>) {
    %w = tx.get_param @ln : memref<64xf32>
    %s = tx.all_reduce %x group 2 : memref<4x64xf32> -> memref<4x64xf32>
    %y, %r = tx.add_rmsnorm %s, %res, %w eps 1.0e-06 : memref<4x64xf32>, memref<4x64xf32>, memref<64xf32> -> memref<4x64xf32>, memref<4x64xf32>
    return %y, %r : memref<4x64xf32>, memref<4x64xf32>
  }
}
