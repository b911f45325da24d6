// tx-lower-structured-control-flow: scf to cf as convert-scf-to-cf does,
// the last loop of a block lowered first (linear in the number of loops).
// RUN: tx-opt %s --split-input-file -verify-diagnostics -pass-pipeline='builtin.module(func.func(tx-lower-structured-control-flow))' | FileCheck %s

// Two loops in a row and a nested if: every scf op lowered, the loops in
// program order.
// CHECK-LABEL: func.func @loops
// CHECK-NOT: scf.
// CHECK: ^[[H0:.*]](%[[I:.*]]: index):
// CHECK: cf.cond_br %{{.*}}, ^{{.*}}, ^[[X0:.*]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]]
// CHECK: ^[[X0]]:
// CHECK: ^{{.*}}(%[[J:.*]]: index):
// CHECK: cf.cond_br
// CHECK: memref.load %{{.*}}[%[[J]]]
// CHECK: cf.cond_br
// CHECK-NOT: scf.
// CHECK: return
func.func @loops(%m: memref<?xf32>, %n: index, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    memref.store %f, %m[%i] : memref<?xf32>
  }
  scf.for %j = %c0 to %n step %c1 {
    %v = memref.load %m[%j] : memref<?xf32>
    %p = arith.cmpf ogt, %v, %f : f32
    scf.if %p {
      memref.store %f, %m[%j] : memref<?xf32>
    }
  }
  return
}

// -----

// An scf op the patterns do not lower (a forall on tensors) is an error.
func.func @tensor_forall(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{failed to legalize operation 'scf.forall'}}
  %r = scf.forall (%i) in (4) shared_outs(%o = %t) -> tensor<4xf32> {
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %o into %o[0] [4] [1] : tensor<4xf32> into tensor<4xf32>
    }
  }
  return %r : tensor<4xf32>
}
