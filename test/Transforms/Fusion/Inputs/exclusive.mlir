// Fusions that were once refused: a write after k in the branch exclusive
// with v's, and a write to a slice disjoint from the one a later group
// reads. Both branches run (the flag alternates between seeds).
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 32 -> 16, f32
  tx.layer @k_proj : 32 -> 16, f32
  tx.layer @v_proj : 32 -> 16, f32
  tx.layer @g_proj : 8 -> 8, f32
  tx.layer @h_proj : 8 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x16xf32>, memref<?x16xf32>, memref<?x8xf32>, memref<?x8xf32>) {
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2.0 : f32
    %c = arith.cmpf ogt, %fs, %zero : f32
    %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x16xf32>
    %kv = scf.if %c -> (memref<?x16xf32>) {
      %k = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x16xf32>
      tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
      scf.yield %k : memref<?x16xf32>
    } else {
      %v = tx.linear @v_proj(%x) : memref<?x32xf32> -> memref<?x16xf32>
      scf.yield %v : memref<?x16xf32>
    }
    %lo = tx.slice %q dim 1 offset 0 size 8 : memref<?x16xf32> -> memref<?x8xf32, strided<[16, 1]>>
    %hi = tx.slice %q dim 1 offset 8 size 8 : memref<?x16xf32> -> memref<?x8xf32, strided<[16, 1], offset: 8>>
    %g = tx.linear @g_proj(%hi) : memref<?x8xf32, strided<[16, 1], offset: 8>> -> memref<?x8xf32>
    tx.binary_into mul %lo, %two into %lo : memref<?x8xf32, strided<[16, 1]>>, f32, memref<?x8xf32, strided<[16, 1]>>
    %h = tx.linear @h_proj(%hi) : memref<?x8xf32, strided<[16, 1], offset: 8>> -> memref<?x8xf32>
    return %q, %kv, %g, %h : memref<?x16xf32>, memref<?x16xf32>, memref<?x8xf32>, memref<?x8xf32>
  }
}
