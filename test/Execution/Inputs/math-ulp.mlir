// The math of tx.unary on rows of 1024 f32 (a static last dimension: the
// row lowering computes it on vectors), for Inputs/math_ulp.py.
func.func @unary_exp(%x: memref<?x1024xf32>) -> memref<?x1024xf32> {
  %r = tx.unary exp %x : memref<?x1024xf32> -> memref<?x1024xf32>
  return %r : memref<?x1024xf32>
}
func.func @unary_silu(%x: memref<?x1024xf32>) -> memref<?x1024xf32> {
  %r = tx.unary silu %x : memref<?x1024xf32> -> memref<?x1024xf32>
  return %r : memref<?x1024xf32>
}
func.func @unary_gelu(%x: memref<?x1024xf32>) -> memref<?x1024xf32> {
  %r = tx.unary gelu %x : memref<?x1024xf32> -> memref<?x1024xf32>
  return %r : memref<?x1024xf32>
}
func.func @unary_gelu_tanh(%x: memref<?x1024xf32>) -> memref<?x1024xf32> {
  %r = tx.unary gelu_tanh %x : memref<?x1024xf32> -> memref<?x1024xf32>
  return %r : memref<?x1024xf32>
}
