// Two sibling layers tied to one checkpoint tensor (checkpoint = "shared"):
// the merged layer's stacking map lists "shared" twice, which the
// tx.layer verifier rejects, so tx-fusion fails on a valid module.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 16 -> 8, f32 {checkpoint = "shared"}
  tx.layer @k_proj : 16 -> 8, f32 {checkpoint = "shared"}
  func.func @forward(%x: memref<?x16xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %q = tx.linear @q_proj(%x) : memref<?x16xf32> -> memref<?x8xf32>
    %k = tx.linear @k_proj(%x) : memref<?x16xf32> -> memref<?x8xf32>
    return %q, %k : memref<?x8xf32>, memref<?x8xf32>
  }
}
