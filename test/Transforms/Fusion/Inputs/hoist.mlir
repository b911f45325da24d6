// A static view of %x (so the CPU pipeline vectorises its in-place scaling)
// scaled in a loop after a linalg.copy of the dynamic %x (an op with
// regions that declares its own read, left unvectorised) reads it. The
// scaling's vector transfers are loop-invariant, but hoisting them out of
// the loop would leave the copy reading the old %x. Run with --tokens=4.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> memref<?x32xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %half = arith.constant 0.5 : f32
    %xs = tx.slice %x dim 0 offset 0 size 4 : memref<?x32xf32> -> memref<4x32xf32, strided<[32, 1]>>
    %t = memref.dim %x, %c0 : memref<?x32xf32>
    %buf = memref.alloc(%t) : memref<?x32xf32>
    scf.for %i = %c0 to %c3 step %c1 {
      linalg.copy ins(%x : memref<?x32xf32>) outs(%buf : memref<?x32xf32>)
      tx.binary_into mul %xs, %half into %xs : memref<4x32xf32, strided<[32, 1]>>, f32, memref<4x32xf32, strided<[32, 1]>>
    }
    return %buf : memref<?x32xf32>
  }
}
