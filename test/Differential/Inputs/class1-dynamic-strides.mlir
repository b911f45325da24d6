// Class 1: two same-typed views with different dynamic row strides are
// different inputs. Wrong with test-disable-checks=input-identity.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @proj0 : 32 -> 8, f32
  tx.layer @proj1 : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %k32 = arith.fptosi %fs : f32 to i32
    %k = arith.index_cast %k32 : i32 to index
    %kp = arith.addi %k, %c1 : index
    %s = arith.divui %kp, %c2 : index
    %s1 = arith.addi %s, %c1 : index
    %a = memref.subview %x[0, 0] [2, 32] [%s1, 1] : memref<?x32xf32> to memref<2x32xf32, strided<[?, 1]>>
    %b = memref.subview %x[0, 0] [2, 32] [%c1, 1] : memref<?x32xf32> to memref<2x32xf32, strided<[?, 1]>>
    %p0 = tx.linear @proj0(%a) : memref<2x32xf32, strided<[?, 1]>> -> memref<2x8xf32>
    %q0 = tx.linear @proj1(%b) : memref<2x32xf32, strided<[?, 1]>> -> memref<2x8xf32>
    %p = memref.cast %p0 : memref<2x8xf32> to memref<?x8xf32>
    %q = memref.cast %q0 : memref<2x8xf32> to memref<?x8xf32>
    return %p, %q : memref<?x8xf32>, memref<?x8xf32>
  }
}
