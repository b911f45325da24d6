// %x is stored into a container, then written in place by linalg.fill (an
// op with a region that declares its own write). tx containers hold copies
// while a PyTorch container holds the tensor itself, so tx-to-linalg must
// reject the write, as it does for tx.binary_into / memref.copy; its check
// (checkNoWritesAfter) only visits ops without regions and lets it through.
// The same holds for linalg.generic / linalg.copy and for writes to the
// buffer read back by tx.container_get.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  func.func @forward(%a: memref<?x32xf32>, %s: !tx.container, %c: f32) -> memref<?x32xf32> {
    %c0 = arith.constant 0 : index
    %x = tx.unary silu %a : memref<?x32xf32> -> memref<?x32xf32>
    tx.container_set %s[%c0] = %x : memref<?x32xf32>
    linalg.fill ins(%c : f32) outs(%x : memref<?x32xf32>)
    %y = tx.container_get %s[%c0] : memref<?x32xf32>
    return %y : memref<?x32xf32>
  }
}
