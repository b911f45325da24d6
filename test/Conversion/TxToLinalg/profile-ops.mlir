// tx-profile-ops brackets every tx op that computes with timer calls, and
// every function body; views, get_param and symbols get none. The module's
// table names each id.
// RUN: tx-opt %s -tx-profile-ops | FileCheck %s
// Without the pass (tx-to-cpu's default, profile=false) nothing is inserted.
// RUN: tx-opt %s -tx-to-cpu | FileCheck %s --check-prefix=OFF
// OFF-NOT: tx_rt_profile

// CHECK: module attributes {tx.profile_ops = [
// CHECK-SAME: ["op", "tx.rmsnorm", "{{[^"]*}}profile-ops.mlir:{{[0-9]+}}:10", "f"],
// CHECK-SAME: ["op", "tx.linear @q", "{{[^"]*}}profile-ops.mlir:{{[0-9]+}}:10", "f"],
// CHECK-SAME: ["op", "tx.unary", "{{[^"]*}}", "f"],
// CHECK-SAME: ["function", "@f", "{{[^"]*}}profile-ops.mlir:{{[0-9]+}}:3", "f"]]
// CHECK: func.func private @tx_rt_profile_begin(i64)
// CHECK: func.func private @tx_rt_profile_end(i64)
// CHECK: func.func @f
// CHECK-NEXT: %[[F:.*]] = arith.constant 3 : i64
// CHECK-NEXT: call @tx_rt_profile_begin(%[[F]])
// CHECK-NEXT: tx.get_param
// CHECK-NEXT: %[[B0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @tx_rt_profile_begin(%[[B0]])
// CHECK-NEXT: tx.rmsnorm
// CHECK-NEXT: %[[E0:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @tx_rt_profile_end(%[[E0]])
// CHECK-NEXT: arith.constant 1 : i64
// CHECK-NEXT: call @tx_rt_profile_begin
// CHECK-NEXT: tx.linear @q
// CHECK: tx.unary silu
// CHECK-NEXT: arith.constant 2 : i64
// CHECK-NEXT: call @tx_rt_profile_end
// CHECK-NEXT: tx.view
// CHECK-NEXT: %[[FE:.*]] = arith.constant 3 : i64
// CHECK-NEXT: call @tx_rt_profile_end(%[[FE]])
// CHECK-NEXT: return
module {
  tx.param @w : memref<8xf32> {checkpoint = "w"}
  tx.layer @q : 8 -> 8, f32 {checkpoint = "q"}
  func.func @f(%x: memref<?x8xf32>) -> memref<?x2x4xf32> {
    %w = tx.get_param @w : memref<8xf32>
    %h = tx.rmsnorm %x, %w eps 1.0e-06 : memref<?x8xf32>, memref<8xf32> -> memref<?x8xf32>
    %q = tx.linear @q(%h) : memref<?x8xf32> -> memref<?x8xf32>
    %s = tx.unary silu %q : memref<?x8xf32> -> memref<?x8xf32>
    %v = tx.view %s : memref<?x8xf32> -> memref<?x2x4xf32>
    return %v : memref<?x2x4xf32>
  }
}
