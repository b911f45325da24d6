// Functions whose dynamic sizes must agree; runtime-checks.test calls them
// with sizes that do not.
module {
  tx.layer @proj : 16 -> 8, f32 {checkpoint = "proj"}

  func.func @rot(%x: memref<?x2x16xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>) -> memref<?x2x16xf32> {
    %r = tx.rotary %x, %cos, %sin : memref<?x2x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x2x16xf32>
    return %r : memref<?x2x16xf32>
  }

  func.func @add(%a: memref<?x8xf32>, %b: memref<?x8xf32>) -> memref<?x8xf32> {
    %s = tx.binary add %a, %b : memref<?x8xf32>, memref<?x8xf32> -> memref<?x8xf32>
    return %s : memref<?x8xf32>
  }

  func.func @features(%x: memref<?x?xf32>) -> memref<?x8xf32> {
    %y = tx.linear @proj(%x) : memref<?x?xf32> -> memref<?x8xf32>
    return %y : memref<?x8xf32>
  }

  func.func @narrow(%x: memref<?x8xf32>) -> memref<2x8xf32, strided<[8, 1], offset: 24>> {
    %s = tx.slice %x dim 0 offset 3 size 2 : memref<?x8xf32> -> memref<2x8xf32, strided<[8, 1], offset: 24>>
    return %s : memref<2x8xf32, strided<[8, 1], offset: 24>>
  }
}
