// 16-bit projections for the runner: bf16 with a bias, f16 without.
module {
  tx.layer @lb : 64 -> 48, bf16 bias {checkpoint = "half"}
  tx.layer @lh : 64 -> 48, f16 {checkpoint = "half"}
  func.func @linear_bf16(%x: memref<?x64xbf16>) -> memref<?x48xbf16> {
    %y = tx.linear @lb(%x) : memref<?x64xbf16> -> memref<?x48xbf16>
    return %y : memref<?x48xbf16>
  }
  func.func @linear_f16(%x: memref<?x64xf16>) -> memref<?x48xf16> {
    %y = tx.linear @lh(%x) : memref<?x64xf16> -> memref<?x48xf16>
    return %y : memref<?x48xf16>
  }
}
