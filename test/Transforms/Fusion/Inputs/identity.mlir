// Two subviews of %x at offsets 1 and 8 (computed at run time): upstream
// says MustAlias, they are different inputs.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 8 -> 8, f32
  tx.layer @k_proj : 8 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %t = memref.dim %x, %c0 : memref<?x32xf32>
    %a = math.absf %fs : f32
    %ai = arith.fptosi %a : f32 to i64
    %i = arith.index_cast %ai : i64 to index
    %j = arith.muli %i, %c8 : index
    %xi = memref.subview %x[0, %i] [%t, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
    %xj = memref.subview %x[0, %j] [%t, 8] [1, 1] : memref<?x32xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
    %q = tx.linear @q_proj(%xi) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
    %k = tx.linear @k_proj(%xj) : memref<?x8xf32, strided<[32, 1], offset: ?>> -> memref<?x8xf32>
    return %q, %k : memref<?x8xf32>, memref<?x8xf32>
  }
}
