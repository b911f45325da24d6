// TxAliasAnalysis: a fresh allocation (and any view of it) never aliases a
// module global (weights and parameters after tx-to-linalg); upstream alone
// cannot tell. A function argument still may alias a global.
// RUN: tx-opt %s -tx-test-print-modref -o /dev/null | FileCheck %s --check-prefix=UPSTREAM
// RUN: tx-opt %s -tx-test-print-modref=tx-alias=true -o /dev/null | FileCheck %s --check-prefix=TX

memref.global @w : memref<8x8xf32> = uninitialized

func.func @globals(%arg: memref<8x8xf32>) {
  %c = arith.constant 1.0 : f32
  %i = arith.constant 0 : index
  %a = memref.alloc() {test.name = "a"} : memref<8x8xf32>
  %v = memref.subview %a[0, 0] [4, 8] [1, 1] {test.name = "view"} : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  %g = memref.get_global @w : memref<8x8xf32>
  // UPSTREAM: globals store-global (memref.store): arg0=Mod a=Mod view=Mod
  // TX: globals store-global (memref.store): arg0=Mod a=NoModRef view=NoModRef
  memref.store %c, %g[%i, %i] {test.query = "store-global"} : memref<8x8xf32>
  // TX: globals store-alloc (memref.store): arg0=NoModRef a=Mod view=Mod
  memref.store %c, %a[%i, %i] {test.query = "store-alloc"} : memref<8x8xf32>
  return
}
