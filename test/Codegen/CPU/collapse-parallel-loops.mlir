// tx-cpu-collapse-parallel-loops: a 2-D scf.parallel (row loops over
// [tokens, heads]) becomes one loop over the product of the trip counts,
// its indices recovered by division and remainder; 1-D loops stay.
// RUN: tx-opt %s -pass-pipeline='builtin.module(func.func(tx-cpu-collapse-parallel-loops))' | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.+]]: memref<?x8x16xf32>)
// CHECK: arith.muli
// CHECK: %[[N:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK-NEXT: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%[[N]]) step (%{{.+}}) {
// CHECK-DAG: arith.remsi %[[I]]
// CHECK-DAG: arith.divsi %[[I]]
// CHECK-NOT: scf.parallel
// CHECK: vector.load %[[X]]
func.func @rows(%x: memref<?x8x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %t = memref.dim %x, %c0 : memref<?x8x16xf32>
  %two = arith.constant dense<2.0> : vector<16xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%t, %c8) step (%c1, %c1) {
    %v = vector.load %x[%i, %j, %c0] : memref<?x8x16xf32>, vector<16xf32>
    %w = arith.mulf %v, %two : vector<16xf32>
    vector.store %w, %x[%i, %j, %c0] : memref<?x8x16xf32>, vector<16xf32>
  }
  return
}

// CHECK-LABEL: func.func @one_dim
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NOT: arith.divsi
func.func @one_dim(%x: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.dim %x, %c0 : memref<?x16xf32>
  %two = arith.constant dense<2.0> : vector<16xf32>
  scf.parallel (%i) = (%c0) to (%t) step (%c1) {
    %v = vector.load %x[%i, %c0] : memref<?x16xf32>, vector<16xf32>
    %w = arith.mulf %v, %two : vector<16xf32>
    vector.store %w, %x[%i, %c0] : memref<?x16xf32>, vector<16xf32>
  }
  return
}
