// Results that are not all new buffers (buffer-cache test): an argument
// returned as is, a slice of an argument, and new buffers, one also
// returned through a slice.
module {
  func.func @identity(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    return %x : memref<?x64xf32>
  }
  func.func @slices(%x: memref<?x128xf32>) -> (memref<?x64xf32>, memref<?x128xf32>, memref<?x64xf32>) {
    %s = tx.slice %x dim 1 offset 64 size 64 : memref<?x128xf32> -> memref<?x64xf32, strided<[128, 1], offset: 64>>
    %y = tx.unary silu %x : memref<?x128xf32> -> memref<?x128xf32>
    %v = tx.slice %y dim 1 offset 0 size 64 : memref<?x128xf32> -> memref<?x64xf32, strided<[128, 1]>>
    %a = tx.unary silu %s : memref<?x64xf32, strided<[128, 1], offset: 64>> -> memref<?x64xf32>
    %b = tx.unary silu %v : memref<?x64xf32, strided<[128, 1]>> -> memref<?x64xf32>
    return %a, %y, %b : memref<?x64xf32>, memref<?x128xf32>, memref<?x64xf32>
  }
}
