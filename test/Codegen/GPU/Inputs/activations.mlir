// Every activation and norm of the dialect on one input: the math functions
// a kernel can call (exp, erf, tanh, rsqrt).
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.param @norm : memref<64xf32> {checkpoint = "norm.weight"}
  func.func @forward(%x: memref<?x64xf32>, %r: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x4x16xf32>) {
    %w = tx.get_param @norm : memref<64xf32>
    %s = tx.unary silu %x : memref<?x64xf32> -> memref<?x64xf32>
    %g = tx.unary gelu %x : memref<?x64xf32> -> memref<?x64xf32>
    %t = tx.unary gelu_tanh %x : memref<?x64xf32> -> memref<?x64xf32>
    %n = tx.rmsnorm %x, %w eps 1.0e-06 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %h, %res = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %q = tx.view %x : memref<?x64xf32> -> memref<?x4x16xf32>
    %k = tx.view %r : memref<?x64xf32> -> memref<?x4x16xf32>
    %a = tx.attention %q, %k, %k scale 0.25 causal : memref<?x4x16xf32>, memref<?x4x16xf32>, memref<?x4x16xf32> -> memref<?x4x16xf32>
    return %s, %g, %t, %n, %h, %a : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>, memref<?x4x16xf32>
  }
}
