// bf16 rows and a static op whose last dimension is 8k+1 (25, 17): the CPU
// lowering moves such vectors in two (tx-cpu-split-odd-bf16-vectors).
module {
  tx.param @w : memref<25xbf16>
  func.func @rows(%x: memref<?x25xbf16>, %y: memref<?x25xbf16>) -> (memref<?x25xbf16>, memref<?x25xbf16>, memref<?x25xbf16>) {
    %w = tx.get_param @w : memref<25xbf16>
    %a = tx.unary silu %x : memref<?x25xbf16> -> memref<?x25xbf16>
    %b = tx.binary add %a, %y : memref<?x25xbf16>, memref<?x25xbf16> -> memref<?x25xbf16>
    %n = tx.rmsnorm %b, %w eps 1.0e-06 : memref<?x25xbf16>, memref<25xbf16> -> memref<?x25xbf16>
    %l = tx.layernorm %x, %w eps 1.0e-05 : memref<?x25xbf16>, memref<25xbf16> -> memref<?x25xbf16>
    tx.copy %x into %y : memref<?x25xbf16>, memref<?x25xbf16>
    return %n, %l, %y : memref<?x25xbf16>, memref<?x25xbf16>, memref<?x25xbf16>
  }
  func.func @static(%x: memref<4x17xbf16>) -> memref<4x17xbf16> {
    %a = tx.unary neg %x : memref<4x17xbf16> -> memref<4x17xbf16>
    return %a : memref<4x17xbf16>
  }
}
