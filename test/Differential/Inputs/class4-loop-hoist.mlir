// Class 4: in tx-to-cpu, x *= 0.5 on a static buffer in an scf.for is
// vectorised; its transfer_read/write must stay in the loop because an
// unvectorised op (a view with a dynamic row count) reads x in the same
// loop. Wrong with tx-to-cpu{test-unsafe-hoist=true}, compared against
// --reference-lowering='tx-to-cpu{vectorize=false}'.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  func.func @forward(%x: memref<4x32xf32>, %fs: f32) -> (memref<?x32xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %h = arith.constant 0.5 : f32
    %k = arith.fptosi %fs : f32 to i32
    %ki = arith.index_cast %k : i32 to index
    %n = arith.addi %ki, %c2 : index
    %v0 = memref.subview %x[0, 0] [%n, 32] [1, 1] : memref<4x32xf32> to memref<?x32xf32, strided<[32, 1]>>
    %u0 = tx.unary neg %v0 : memref<?x32xf32, strided<[32, 1]>> -> memref<?x32xf32>
    %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %u0) -> (memref<?x32xf32>) {
      %v = memref.subview %x[0, 0] [%n, 32] [1, 1] : memref<4x32xf32> to memref<?x32xf32, strided<[32, 1]>>
      %u = tx.unary relu %v : memref<?x32xf32, strided<[32, 1]>> -> memref<?x32xf32>
      tx.binary_into mul %x, %h into %x : memref<4x32xf32>, f32, memref<4x32xf32>
      scf.yield %u : memref<?x32xf32>
    }
    return %r : memref<?x32xf32>
  }
}
