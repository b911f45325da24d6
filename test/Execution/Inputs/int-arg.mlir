// An argument type the runner cannot pass.
func.func @ints(%x: memref<4xi32>) -> memref<4xi32> {
  return %x : memref<4xi32>
}
