// Same class as repro-layernorm-weight-bias-retype.mlir: only the weight is a
// slice of the merged output, the bias a contiguous tx.get_param; tx-fusion
// fails: 'tx.layernorm' op bias type 'memref<32xf32>' must be the weight type
// 'memref<32xf32, strided<[1]>>'.  Command: tx-difftest --tokens=4 <this file>
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @w_proj : 16 -> 32, f32
  tx.layer @u_proj : 16 -> 32, f32
  tx.param @bias : memref<32xf32>
  func.func @forward(%e: memref<16xf32>, %x: memref<?x32xf32>) -> (memref<?x32xf32>, memref<32xf32>) {
    %w = tx.linear @w_proj(%e) : memref<16xf32> -> memref<32xf32>
    %u = tx.linear @u_proj(%e) : memref<16xf32> -> memref<32xf32>
    %b = tx.get_param @bias : memref<32xf32>
    %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x32xf32>, memref<32xf32>, memref<32xf32> -> memref<?x32xf32>
    return %y, %u : memref<?x32xf32>, memref<32xf32>
  }
}
