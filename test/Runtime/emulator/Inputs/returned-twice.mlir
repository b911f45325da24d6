// Results that are one device buffer: the host code copies every result
// out before it frees the buffers they came from.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @p : 16 -> 64, f32 {checkpoint = "p"}
  func.func @twice(%x: memref<?x16xf32>) -> (memref<?x64xf32>, memref<?x64xf32>) {
    %a = tx.linear @p(%x) : memref<?x16xf32> -> memref<?x64xf32>
    return %a, %a : memref<?x64xf32>, memref<?x64xf32>
  }
  func.func @mixed(%x: memref<?x16xf32>) -> (memref<?x64xf32>, memref<?x8x8xf32>, memref<?x64xf32>, memref<?x16xf32>) {
    %a = tx.linear @p(%x) : memref<?x16xf32> -> memref<?x64xf32>
    %v = tx.view %a : memref<?x64xf32> -> memref<?x8x8xf32>
    return %a, %v, %a, %x : memref<?x64xf32>, memref<?x8x8xf32>, memref<?x64xf32>, memref<?x16xf32>
  }
}
