func.func @a(%x: memref<?x32xf32>) {
  %p = tx.linear @q(%x) : memref<?x32xf32> -> memref<?x8xf32>
  return
}
// -----
func.func @b(%x: memref<?x32xf32>) {
  %s = tx.slice %x dim 1 offset 0 size 8 : memref<?x32xf32> -> memref<?x8xf32, strided<[32, 1]>>
  return
}
// -----
func.func @c(%x: memref<?x32xf32>) {
  %u = tx.unary neg %x : memref<?x32xf32> -> memref<?x32xf32>
  return
}
// -----
func.func @d() {
  return
}
