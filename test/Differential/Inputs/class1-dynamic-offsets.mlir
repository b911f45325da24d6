// Class 1: x[:, i:i+32] and x[:, j:j+32] (same type, different dynamic
// offsets) are different inputs. Wrong with test-disable-checks=input-identity.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @proj0 : 32 -> 8, f32
  tx.layer @proj1 : 32 -> 8, f32
  func.func @forward(%y: memref<?x64xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %k32 = arith.fptosi %fs : f32 to i32
    %k = arith.index_cast %k32 : i32 to index
    %kp = arith.addi %k, %c1 : index
    %km = arith.subi %c1, %k : index
    %i = arith.muli %kp, %c16 : index
    %j = arith.muli %km, %c16 : index
    %t = memref.dim %y, %c0 : memref<?x64xf32>
    %a = memref.subview %y[0, %i] [%t, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1], offset: ?>>
    %b = memref.subview %y[0, %j] [%t, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1], offset: ?>>
    %p = tx.linear @proj0(%a) : memref<?x32xf32, strided<[64, 1], offset: ?>> -> memref<?x8xf32>
    %q = tx.linear @proj1(%b) : memref<?x32xf32, strided<[64, 1], offset: ?>> -> memref<?x8xf32>
    return %p, %q : memref<?x8xf32>, memref<?x8xf32>
  }
}
