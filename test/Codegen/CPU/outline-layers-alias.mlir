// What tx-outline-identical-layers relies on in the outlined function: its
// arguments (an activation, a weight) may alias each other, as a call may
// pass one buffer twice; a fresh allocation (a GEMM accumulator) aliases
// none of them, so the accumulator hoisting still applies. (Before outlining
// the weight was a get_global, which no allocation aliases either.)
// RUN: tx-opt %s -tx-test-print-modref=tx-alias=true -o /dev/null | FileCheck %s

func.func private @forward_layer(%x: memref<?x16xf32>, %w: memref<16x16xf32>, %y: memref<?x16xf32>) {
  %c = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  %acc = memref.alloc() {test.name = "acc"} : memref<8x16xf32>
  // CHECK: forward_layer store-acc (memref.store): arg0=NoModRef arg1=NoModRef arg2=NoModRef acc=Mod
  memref.store %c, %acc[%i, %i] {test.query = "store-acc"} : memref<8x16xf32>
  // CHECK: forward_layer store-w (memref.store): arg0=Mod arg1=Mod arg2=Mod acc=NoModRef
  memref.store %c, %w[%i, %i] {test.query = "store-w"} : memref<16x16xf32>
  return
}
// CHECK: forward_layer alias arg0 arg1: MayAlias
// CHECK: forward_layer alias arg0 arg2: MayAlias
// CHECK: forward_layer alias arg0 acc: NoAlias
// CHECK: forward_layer alias arg1 arg2: MayAlias
// CHECK: forward_layer alias arg1 acc: NoAlias
// CHECK: forward_layer alias arg2 acc: NoAlias
