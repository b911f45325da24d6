// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s
// RUN: tx-opt %s -split-input-file -tx-to-linalg=runtime-checks=false | FileCheck %s --check-prefix=OFF
// The CPU pipeline passes the option on (checks on by default).
// RUN: tx-opt %s -split-input-file -tx-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: tx-opt %s -split-input-file -tx-to-cpu=runtime-checks=false | FileCheck %s --check-prefix=CPUOFF
// CPU: llvm.call @tx_rt_check_failed
// CPUOFF-NOT: tx_rt_check_failed

// Dynamic sizes an op needs to agree are compared before the op runs; a
// mismatch calls tx_rt_check_failed(check, lhs, rhs), and the module's
// tx.runtime_checks table holds each check's message (argument numbers, and
// names when the tools parsed them from the source). With
// runtime-checks=false there is none.

// CHECK-LABEL: module attributes {tx.runtime_checks = [
// CHECK-SAME: "'tx.rotary' at {{.*}}runtime-checks.mlir:[[L:[0-9]+]]:{{[0-9]+}}: input (argument 0) dim 0 = {0} but cos (argument 1) dim 0 = {1}"
// CHECK-SAME: "'tx.rotary' at {{.*}}runtime-checks.mlir:[[L]]:{{[0-9]+}}: input (argument 0) dim 0 = {0} but sin (argument 2) dim 0 = {1}"
// CHECK: func.func private @tx_rt_check_failed(i64, i64, i64)
// CHECK-LABEL: func.func @rotary(
// CHECK-SAME: %[[X:[^:]+]]: memref<?x2x16xf32>, %[[COS:[^:]+]]: memref<?x8xf32>
// CHECK-DAG: %[[XT:.+]] = memref.dim %[[X]], %{{.+}} : memref<?x2x16xf32>
// CHECK-DAG: %[[CT:.+]] = memref.dim %[[COS]], %{{.+}} : memref<?x8xf32>
// CHECK: %[[NE:.+]] = arith.cmpi ne, %[[XT]], %[[CT]] : index
// CHECK: scf.if %[[NE]] {
// CHECK-DAG: %[[A:.+]] = arith.index_cast %[[XT]] : index to i64
// CHECK-DAG: %[[B:.+]] = arith.index_cast %[[CT]] : index to i64
// CHECK-DAG: %[[ID:.+]] = arith.constant 0 : i64
// CHECK: func.call @tx_rt_check_failed(%[[ID]], %[[A]], %[[B]])
// CHECK: }
// CHECK: arith.constant 1 : i64
// CHECK: func.call @tx_rt_check_failed
// The checks come before the op reads anything.
// CHECK: memref.alloc
// CHECK: linalg.generic
// OFF-NOT: tx.runtime_checks
// OFF-LABEL: func.func @rotary(
// OFF-NOT: tx_rt_check_failed
// OFF-NOT: scf.if
// OFF: linalg.generic
func.func @rotary(%x: memref<?x2x16xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>) -> memref<?x2x16xf32> {
  %r = tx.rotary %x, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
  return %r : memref<?x2x16xf32>
}

// -----

// A static size on one side is still compared with the dynamic other side;
// two static sizes are the verifier's (no check), and so are the same value's.
// CHECK-LABEL: module attributes {tx.runtime_checks = [
// CHECK-SAME: "'tx.binary' at {{.*}}: lhs (argument 0) dim 1 = {0} but rhs (argument 1) dim 0 = {1}"
// CHECK-NOT: "'tx.binary'
// CHECK-SAME: ]}
// CHECK-LABEL: func.func @broadcast(
// CHECK-COUNT-1: func.call @tx_rt_check_failed
// CHECK-NOT: func.call @tx_rt_check_failed
// CHECK: return
func.func @broadcast(%a: memref<4x?xf32>, %b: memref<8xf32>, %c: memref<4x8xf32>) -> memref<4x?xf32> {
  %s = tx.binary add %a, %b : memref<4x?xf32>, memref<8xf32> -> memref<4x?xf32>
  %t = tx.binary mul %c, %c : memref<4x8xf32>, memref<4x8xf32> -> memref<4x8xf32>
  return %s : memref<4x?xf32>
}

// -----

// A linear's input features against the layer, a slice's extent, a view's
// element count, a copy's shapes, attention's key vs value tokens, a norm's
// residual and a static result size.
// CHECK-LABEL: module attributes {tx.runtime_checks = [
// CHECK-SAME: "'tx.linear' at {{.*}}: input (argument 0) dim 1 = {0} but the in_features of '@proj' is {1}"
// CHECK-SAME: "'tx.slice' at {{.*}}: source (the result of 'tx.linear' at {{.*}}) dim 0 = {0} but the slice [2, {1}) needs at least {1}"
// CHECK-SAME: "'tx.view' at {{.*}}: source (argument 1) has {0} elements, not a multiple of {1} (the view's static sizes)"
// CHECK-NOT: 'tx.view' at {{.*}}: source (argument 2)
// CHECK-SAME: "'tx.copy' at {{.*}}: source (the result of 'tx.view' at {{.*}}, a view of argument 1) dim 0 = {0} but target (argument 2) dim 0 = {1}"
// CHECK-SAME: "'tx.attention' at {{.*}}: key (argument 3) dim 0 = {0} but value (argument 4) dim 0 = {1}"
// CHECK-SAME: "'tx.add_rmsnorm' at {{.*}}: input (argument 2) dim 0 = {0} but residual (argument 5) dim 0 = {1}"
// CHECK-SAME: "'tx.unary' at {{.*}}: input (argument 2) dim 0 = {0} but dim 0 of the result type is {1}"
// CHECK-LABEL: func.func @mixed(
// The slice's check is "extent < needed", not "!=".
// CHECK: arith.cmpi ult
tx.layer @proj : 16 -> 32, f32 {checkpoint = "proj"}
tx.param @w : memref<4xf32> {checkpoint = "w"}
func.func @mixed(%x: memref<?x?xf32>, %y: memref<?x?xf32>, %z: memref<?x4xf32>,
                 %k: memref<?x1x4xf32>, %v: memref<?x1x4xf32>, %r: memref<?x4xf32>)
    -> (memref<3x32xf32, strided<[32, 1], offset: 64>>, memref<?x1x4xf32>, memref<?x4xf32>, memref<3x4xf32>) {
  %p = tx.linear @proj(%x) : memref<?x?xf32> -> memref<?x32xf32>
  %s = tx.slice %p dim 0 offset 2 size 3 : memref<?x32xf32> -> memref<3x32xf32, strided<[32, 1], offset: 64>>
  %yv = tx.view %y : memref<?x?xf32> -> memref<?x4xf32>
  tx.copy %yv into %z : memref<?x4xf32>, memref<?x4xf32>
  %q = tx.view %z : memref<?x4xf32> -> memref<?x1x4xf32>
  %o = tx.attention %q, %k, %v scale 0.5 : memref<?x1x4xf32>, memref<?x1x4xf32>, memref<?x1x4xf32> -> memref<?x1x4xf32>
  %w = tx.get_param @w : memref<4xf32>
  %n, %ro = tx.add_rmsnorm %z, %r, %w eps 1.0e-06 : memref<?x4xf32>, memref<?x4xf32>, memref<4xf32> -> memref<?x4xf32>, memref<?x4xf32>
  %u = tx.unary silu %z : memref<?x4xf32> -> memref<3x4xf32>
  return %s, %o, %n, %u : memref<3x32xf32, strided<[32, 1], offset: 64>>, memref<?x1x4xf32>, memref<?x4xf32>, memref<3x4xf32>
}
