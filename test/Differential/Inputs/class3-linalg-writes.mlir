// Class 3: linalg.generic and linalg.fill (ops with regions) write the
// input between the calls. Wrong with test-disable-checks=region-op-effects.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @proj0 : 32 -> 8, f32
  tx.layer @proj1 : 32 -> 8, f32
  tx.layer @proj2 : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
    %h = arith.constant 0.5 : f32
    %p = tx.linear @proj0(%x) : memref<?x32xf32> -> memref<?x8xf32>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%x : memref<?x32xf32>) {
    ^bb0(%e: f32):
      %m = arith.mulf %e, %h : f32
      linalg.yield %m : f32
    }
    %q = tx.linear @proj1(%x) : memref<?x32xf32> -> memref<?x8xf32>
    %s = tx.slice %x dim 1 offset 8 size 8 : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1], offset: 8>>
    linalg.fill ins(%h : f32) outs(%s : memref<?x8xf32, strided<[32, 1], offset: 8>>)
    %r = tx.linear @proj2(%x) : memref<?x32xf32> -> memref<?x8xf32>
    return %p, %q, %r : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
  }
}
