// Two projections of a call's result: AliasAnalysis cannot tell the result
// from a new output buffer, so the few-token kernel's run-time disjointness
// check decides (found by the fusion soundness hunt, round 9).
module {
  tx.layer @a_x : 16 -> 12, f32
  tx.layer @a_y : 16 -> 12, f32
  func.func private @ident(%w: memref<?x16xf32>) -> memref<?x16xf32> {
    return %w : memref<?x16xf32>
  }
  func.func @forward(%x: memref<?x16xf32>) -> (memref<?x12xf32>, memref<?x12xf32>) {
    %id = func.call @ident(%x) : (memref<?x16xf32>) -> memref<?x16xf32>
    %p2 = tx.linear @a_y(%id) : memref<?x16xf32> -> memref<?x12xf32>
    %p3 = tx.linear @a_x(%id) : memref<?x16xf32> -> memref<?x12xf32>
    return %p2, %p3 : memref<?x12xf32>, memref<?x12xf32>
  }
}
