// GEMMs with static token counts: a multiple of the M tile (nothing to
// peel), not a multiple, and fewer rows than one tile.
module {
  tx.layer @l : 64 -> 32, f32 bias
  func.func @exact(%x: memref<16x64xf32>) -> memref<16x32xf32> {
    %y = tx.linear @l(%x) : memref<16x64xf32> -> memref<16x32xf32>
    return %y : memref<16x32xf32>
  }
  func.func @rest(%x: memref<11x64xf32>) -> memref<11x32xf32> {
    %y = tx.linear @l(%x) : memref<11x64xf32> -> memref<11x32xf32>
    return %y : memref<11x32xf32>
  }
  func.func @small(%x: memref<3x64xf32>) -> memref<3x32xf32> {
    %y = tx.linear @l(%x) : memref<3x64xf32> -> memref<3x32xf32>
    return %y : memref<3x32xf32>
  }
}
