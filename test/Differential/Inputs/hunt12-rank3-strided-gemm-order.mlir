// BUG CLASS: fusion changes the numbers of a downstream projection (bf16).
// %a is a [2, T, 256] projection of a rank-3 (batch, tokens) input; fused
// with b_proj it becomes a tx.slice of the merged [2, T, 280] output, with
// strides [T*280, 280, 1]. d_proj then reads that slice: its leading dims
// cannot be collapsed (dynamic T, non-contiguous), so buildLinear takes the
// N-D linalg.generic contraction (sequential k sum) instead of the tiled,
// vectorised 2-D linalg.matmul used for the contiguous unfused %a. The f32
// sums differ in the last bits (f32 programs: "0 bit-exact" everywhere,
// within the 1e-5 tolerance); bf16 outputs then round to a different bf16.
//
// Command:  tx-difftest --tokens=17 repro-rank3-strided-gemm-order.mlir
//   (and tx-difftest --tolerance=0 --tokens=3 on the f32 version: s/bf16/f32/)
// Expected: bit-identical results (the fused GEMM changes no numbers).
// Observed: MISMATCH ... result 0 element 2031: 0.026245 vs 0.026123
// Where: lib/Conversion/TxToLinalg/ComputePatterns.cpp, buildLinear(): the
//   summation order depends on the input's layout (collapsible -> matmul,
//   else linalg.generic). Class-level fix: make the result independent of
//   the layout, e.g. copy a non-collapsible strided input into a contiguous
//   buffer and use the same matmul path (or give the generic path the same
//   reduction order); alternatively the fusion rewrite (collectRetypes)
//   could give rank > 2 projection users whose slice cannot be collapsed a
//   contiguous copy.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @a_proj : 16 -> 256, bf16
  tx.layer @b_proj : 16 -> 24, bf16
  tx.layer @d_proj : 256 -> 64, bf16
  func.func @forward(%x: memref<2x?x16xbf16>) -> memref<2x?x64xbf16> {
    %a = tx.linear @a_proj(%x) : memref<2x?x16xbf16> -> memref<2x?x256xbf16>
    %b = tx.linear @b_proj(%x) : memref<2x?x16xbf16> -> memref<2x?x24xbf16>
    %d = tx.linear @d_proj(%a) : memref<2x?x256xbf16> -> memref<2x?x64xbf16>
    return %d : memref<2x?x64xbf16>
  }
}
