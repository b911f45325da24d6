// RUN: tx-opt %s -split-input-file -tx-sequence-parallel -verify-diagnostics | FileCheck %s

// A dynamic token count: @forward dispatches on the token count of its first
// argument with a dynamic leading dimension; @forward_sp is the rewritten
// copy, the else branch keeps the original body.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, sp_min_tokens = 1024, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  tx.layer @up : 64 -> 64, f32

  // CHECK-LABEL: func.func @forward
  // CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>, %[[RES:.+]]: memref<?x64xf32>)
  // CHECK: %[[T:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x64xf32>
  // CHECK: %[[THR:.+]] = arith.constant 1024 : index
  // CHECK: %[[TP:.+]] = arith.constant 2 : index
  // CHECK: %[[BIG:.+]] = arith.cmpi uge, %[[T]], %[[THR]] : index
  // CHECK: %[[REM:.+]] = arith.remui %[[T]], %[[TP]] : index
  // CHECK: %[[DIV:.+]] = arith.cmpi eq, %[[REM]]
  // CHECK: %[[OK:.+]] = arith.andi %[[BIG]], %[[DIV]] : i1
  // CHECK: %[[R:.+]]:2 = scf.if %[[OK]] -> (memref<?x64xf32>, memref<?x64xf32>) {
  // CHECK:   %[[C:.+]]:2 = func.call @forward_sp(%[[X]], %[[RES]])
  // CHECK:   scf.yield %[[C]]#0, %[[C]]#1
  // CHECK: } else {
  // CHECK:   tx.all_reduce
  // CHECK:   tx.add_rmsnorm
  // CHECK:   scf.yield
  // CHECK: }
  // CHECK: return %[[R]]#0, %[[R]]#1

  // CHECK-LABEL: func.func private @forward_sp
  // CHECK-SAME: (%[[X2:.+]]: memref<?x64xf32>, %[[RES2:.+]]: memref<?x64xf32>)
  // CHECK: %[[RANK:.+]] = tx.rank group 2
  // CHECK-NOT: tx.all_reduce
  // CHECK: %[[RS:.+]] = tx.reduce_scatter %[[X2]] dim 0 group 2 : memref<?x64xf32> -> memref<?x64xf32>
  // CHECK: %[[L:.+]] = memref.dim %[[RS]], %{{.+}} : memref<?x64xf32>
  // CHECK: %[[OFF:.+]] = arith.muli %[[RANK]], %[[L]] : index
  // CHECK: %[[SL:.+]] = memref.subview %[[RES2]][%[[OFF]], 0] [%[[L]], 64] [1, 1]
  // CHECK: %[[Y:.+]], %[[RO:.+]] = tx.add_rmsnorm %[[RS]], %[[SL]]
  // CHECK: %[[YG:.+]] = tx.all_gather %[[Y]] dim 0 group 2 : memref<?x64xf32> -> memref<?x64xf32>
  // CHECK: tx.linear @up(%[[YG]])
  // CHECK: %[[RG:.+]] = tx.all_gather %[[RO]] dim 0 group 2
  // CHECK: return %{{.+}}, %[[RG]]
  // expected-remark @below {{versioned by token count: @forward_sp (sequence parallel) when tokens >= 1024 and divisible by 2, the original body otherwise}}
  func.func @forward(%x: memref<?x64xf32>, %res: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x64xf32>) {
    %w = tx.get_param @ln : memref<64xf32>
    %ar = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    %y, %r = tx.add_rmsnorm %ar, %res, %w eps 1.0e-06 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %u = tx.linear @up(%y) : memref<?x64xf32> -> memref<?x64xf32>
    return %u, %r : memref<?x64xf32>, memref<?x64xf32>
  }
}

// -----

// No argument carries the token count: the function cannot be versioned.

module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, splitting_ops = []>} {
  tx.param @ln : memref<64xf32>
  // expected-error @below {{has a dynamic token count but no argument with a dynamic leading (token) dimension to version on}}
  func.func @no_token_arg(%n: index) -> memref<?x64xf32> {
    %w = tx.get_param @ln : memref<64xf32>
    %x = memref.alloc(%n) : memref<?x64xf32>
    %ar = tx.all_reduce %x group 2 : memref<?x64xf32> -> memref<?x64xf32>
    %h = tx.rmsnorm %ar, %w eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    return %h : memref<?x64xf32>
  }
}
