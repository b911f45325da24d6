// Three identical layers (norm, projection, add of a per-layer argument):
// outline-layers.test checks that a failed runtime check in the third
// layer names that layer's op and argument after outlining.
module {
  tx.param @n0 : memref<16xf32> {checkpoint = "n0"}
  tx.layer @p0 : 16 -> 16, f32 {checkpoint = "p0"}
  tx.param @n1 : memref<16xf32> {checkpoint = "n1"}
  tx.layer @p1 : 16 -> 16, f32 {checkpoint = "p1"}
  tx.param @n2 : memref<16xf32> {checkpoint = "n2"}
  tx.layer @p2 : 16 -> 16, f32 {checkpoint = "p2"}
  func.func @forward(%x: memref<?x16xf32>, %b0: memref<?x16xf32>, %b1: memref<?x16xf32>, %b2: memref<?x16xf32>) -> memref<?x16xf32> {
    %w0 = tx.get_param @n0 : memref<16xf32>
    %h0 = tx.rmsnorm %x, %w0 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y0 = tx.linear @p0(%h0) : memref<?x16xf32> -> memref<?x16xf32>
    %o0 = tx.binary add %y0, %b0 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w1 = tx.get_param @n1 : memref<16xf32>
    %h1 = tx.rmsnorm %o0, %w1 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y1 = tx.linear @p1(%h1) : memref<?x16xf32> -> memref<?x16xf32>
    %o1 = tx.binary add %y1, %b1 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w2 = tx.get_param @n2 : memref<16xf32>
    %h2 = tx.rmsnorm %o1, %w2 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y2 = tx.linear @p2(%h2) : memref<?x16xf32> -> memref<?x16xf32>
    %o2 = tx.binary add %y2, %b2 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    return %o2 : memref<?x16xf32>
  }
}
