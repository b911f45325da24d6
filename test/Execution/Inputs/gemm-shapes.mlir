// GEMMs whose weights the CPU pipeline blocks differently: 1000 -> 776 (K
// blocked by 200, N not blocked: 776 = 8 x 97 has no large divisor), and
// 512 -> 1024 (both blocked by 256), chained, with a bias.
module {
  tx.layer @a : 1000 -> 776, f32
  tx.layer @b : 776 -> 512, f32 bias
  tx.layer @c : 512 -> 1024, f32
  func.func @forward(%x: memref<?x1000xf32>) -> (memref<?x776xf32>, memref<?x1024xf32>) {
    %ya = tx.linear @a(%x) : memref<?x1000xf32> -> memref<?x776xf32>
    %yb = tx.linear @b(%ya) : memref<?x776xf32> -> memref<?x512xf32>
    %yc = tx.linear @c(%yb) : memref<?x512xf32> -> memref<?x1024xf32>
    return %ya, %yc : memref<?x776xf32>, memref<?x1024xf32>
  }
}
