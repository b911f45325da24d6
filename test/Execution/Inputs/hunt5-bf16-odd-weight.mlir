// bf16 ops that read a bf16 parameter of 8k+1 elements (33) along the last
// dimension: tx-run aborts in LLVM's X86 back end ("Do not know how to soft
// promote this operator's operand!") on CPUs with avx512bf16. The
// activations' own odd-width loads and stores are split
// (tx-cpu-split-odd-bf16-vectors), the parameter's are not.
module {
  tx.param @w : memref<33xbf16>
  tx.param @w2 : memref<2x17xbf16>
  func.func @div(%x: memref<?x33xbf16>) -> memref<?x33xbf16> {
    %w = tx.get_param @w : memref<33xbf16>
    %r = tx.binary div %x, %w : memref<?x33xbf16>, memref<33xbf16> -> memref<?x33xbf16>
    return %r : memref<?x33xbf16>
  }
  func.func @layernorm(%x: memref<?x33xbf16>) -> memref<?x33xbf16> {
    %w = tx.get_param @w : memref<33xbf16>
    %r = tx.layernorm %x, %w eps 1.0e-05 : memref<?x33xbf16>, memref<33xbf16> -> memref<?x33xbf16>
    return %r : memref<?x33xbf16>
  }
  func.func @rmsnorm(%x: memref<?x33xbf16>) -> memref<?x33xbf16> {
    %w = tx.get_param @w : memref<33xbf16>
    %r = tx.rmsnorm %x, %w eps 1.0e-05 offset 1.0 : memref<?x33xbf16>, memref<33xbf16> -> memref<?x33xbf16>
    return %r : memref<?x33xbf16>
  }
  func.func @add_rmsnorm(%x: memref<?x33xbf16>, %y: memref<?x33xbf16>) -> (memref<?x33xbf16>, memref<?x33xbf16>) {
    %w = tx.get_param @w : memref<33xbf16>
    %r, %s = tx.add_rmsnorm %x, %y, %w eps 1.0e-05 : memref<?x33xbf16>, memref<?x33xbf16>, memref<33xbf16> -> memref<?x33xbf16>, memref<?x33xbf16>
    return %r, %s : memref<?x33xbf16>, memref<?x33xbf16>
  }
  // A 2-D parameter, rows of 17, broadcast over the tokens.
  func.func @add2d(%x: memref<?x2x17xbf16>) -> memref<?x2x17xbf16> {
    %w = tx.get_param @w2 : memref<2x17xbf16>
    %r = tx.binary add %x, %w : memref<?x2x17xbf16>, memref<2x17xbf16> -> memref<?x2x17xbf16>
    return %r : memref<?x2x17xbf16>
  }
}
