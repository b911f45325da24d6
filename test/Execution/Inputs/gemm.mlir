// One projection, for measuring the CPU pipeline's GEMM (y = x W^T,
// K = N = 1024): see the report of issue 4 for the command.
module {
  tx.layer @proj : 1024 -> 1024, f32
  func.func @forward(%x: memref<?x1024xf32>) -> memref<?x1024xf32> {
    %y = tx.linear @proj(%x) : memref<?x1024xf32> -> memref<?x1024xf32>
    return %y : memref<?x1024xf32>
  }
}
