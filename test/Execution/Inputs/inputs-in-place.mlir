// Functions for inputs-in-place.test: arguments the runner may pass in
// place (never written) and ones it must copy.
module {
  // x is written (x *= 2): copied; y may alias x as far as the function
  // knows: copied too.
  func.func @writes(%x: memref<?x8xf32>, %y: memref<?x8xf32>) -> memref<?x8xf32> {
    %c = arith.constant 2.0 : f32
    tx.binary_into mul %x, %c into %x : memref<?x8xf32>, f32, memref<?x8xf32>
    %r = tx.binary add %x, %y : memref<?x8xf32>, memref<?x8xf32> -> memref<?x8xf32>
    return %r : memref<?x8xf32>
  }
  // Written through a view of it.
  func.func @writes_view(%x: memref<?x8xf32>) -> memref<?x8xf32> {
    %s = tx.slice %x dim 1 offset 4 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1], offset: 4>>
    tx.unary_into exp %s into %s : memref<?x4xf32, strided<[8, 1], offset: 4>>, memref<?x4xf32, strided<[8, 1], offset: 4>>
    %r = tx.unary silu %x : memref<?x8xf32> -> memref<?x8xf32>
    return %r : memref<?x8xf32>
  }
  // Written by a callee.
  func.func private @double(%x: memref<?x8xf32>) {
    %c = arith.constant 2.0 : f32
    tx.binary_into mul %x, %c into %x : memref<?x8xf32>, f32, memref<?x8xf32>
    return
  }
  func.func @writes_in_call(%x: memref<?x8xf32>) -> memref<?x8xf32> {
    func.call @double(%x) : (memref<?x8xf32>) -> ()
    %r = tx.unary silu %x : memref<?x8xf32> -> memref<?x8xf32>
    return %r : memref<?x8xf32>
  }
  // Only read, and returned (a view of the caller's data is copied out).
  func.func @reads(%x: memref<?x8xf32>, %y: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x4xf32, strided<[8, 1], offset: 4>>) {
    %r = tx.binary add %x, %y : memref<?x8xf32>, memref<?x8xf32> -> memref<?x8xf32>
    %s = tx.slice %y dim 1 offset 4 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1], offset: 4>>
    return %r, %s : memref<?x8xf32>, memref<?x4xf32, strided<[8, 1], offset: 4>>
  }
}
