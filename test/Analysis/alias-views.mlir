// TxAliasAnalysis on views of one buffer: MustAlias only for the same
// buffer (the same value, an identity view, or an identical view op);
// NoAlias for disjoint static boxes; MayAlias for everything else, however
// upstream's LocalAliasAnalysis (which says MustAlias for any two views of
// one allocation) answers. And an op's own effects count whatever its traits.
// RUN: tx-opt %s -tx-test-print-modref=tx-alias=true -o /dev/null | FileCheck %s
// RUN: tx-opt %s -tx-test-print-modref -o /dev/null | FileCheck %s --check-prefix=UPSTREAM

func.func @views(%x: memref<?x32xf32>, %i: index, %j: index) {
  %c0 = arith.constant 0 : index
  %t = memref.dim %x, %c0 : memref<?x32xf32>
  %a = tx.slice %x dim 1 offset 0 size 8 {test.name = "a"} : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1]>>
  %b = tx.slice %x dim 1 offset 8 size 8 {test.name = "b"} : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1], offset: 8>>
  %c = tx.slice %x dim 1 offset 4 size 8 {test.name = "c"} : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1], offset: 4>>
  %d = memref.subview %x[0, %i] [%t, 8] [1, 1] {test.name = "d"} : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %e = memref.subview %x[0, %j] [%t, 8] [1, 1] {test.name = "e"} : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %f = memref.subview %x[0, %i] [%t, 8] [1, 1] {test.name = "f"} : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
  %g = tx.alias %x {test.name = "g"} : memref<?x32xf32>
  %h = memref.subview %x[0, 24] [%t, 8] [1, 1] {test.name = "h"} : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: 24>>
  // A slice of a transpose: rows 0-7 of x^T are columns 0-7 of x.
  %tr = tx.transpose %x [1, 0] : memref<?x32xf32> -> memref<32x?xf32, strided<[1, 32]>>
  %k = tx.slice %tr dim 0 offset 0 size 8 {test.name = "k"} : memref<32x?xf32, strided<[1, 32]>> -> memref<8x?xf32, strided<[1, 32]>>
  %cst = arith.constant 0.0 : f32
  // CHECK: views fill-b (linalg.fill): arg0=Mod a=NoModRef b=Mod c=Mod d=Mod e=Mod f=Mod g=Mod h=NoModRef k=NoModRef
  // UPSTREAM: views fill-b (linalg.fill): arg0=ModRef
  linalg.fill {test.query = "fill-b"} ins(%cst : f32) outs(%b : memref<?x8xf32, strided<[32, 1], offset: 8>>)
  return
}
// CHECK-DAG: views alias arg0 a: MayAlias
// CHECK-DAG: views alias arg0 g: MustAlias
// CHECK-DAG: views alias a b: NoAlias
// CHECK-DAG: views alias a c: MayAlias
// CHECK-DAG: views alias b c: MayAlias
// CHECK-DAG: views alias a h: NoAlias
// CHECK-DAG: views alias b h: NoAlias
// CHECK-DAG: views alias d e: MayAlias
// CHECK-DAG: views alias d f: MustAlias
// CHECK-DAG: views alias e f: MayAlias
// CHECK-DAG: views alias d h: MayAlias
// CHECK-DAG: views alias a k: MayAlias
// CHECK-DAG: views alias b k: NoAlias
// Upstream says MustAlias for every pair of views of %x.
// UPSTREAM-NOT: alias
