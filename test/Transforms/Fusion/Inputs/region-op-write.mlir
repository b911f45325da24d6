// A linalg.generic (recursive effects, and its own declared write) doubles
// a slice of %x between the calls.
#id = affine_map<(d0, d1) -> (d0, d1)>
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 32 -> 8, f32
  tx.layer @k_proj : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    %xs = tx.slice %x dim 1 offset 8 size 8 : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1], offset: 8>>
    linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%xs : memref<?x8xf32, strided<[32, 1], offset: 8>>) {
    ^bb0(%o: f32):
      %d = arith.addf %o, %o : f32
      linalg.yield %d : f32
    }
    %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    return %q, %k : memref<?x8xf32>, memref<?x8xf32>
  }
}
