// GEMMs for the few-token kernel: N a multiple of its 4 columns and not
// (30 = 7 x 4 + 2), K a multiple of its 16 lanes (64, 48) and not (40: the
// register tiles instead), bf16 operands summed in f32, and a QKV group
// that -tx-fusion merges (fused and unfused sum each output alike).
module {
  tx.layer @a : 64 -> 32, f32 bias
  tx.layer @b : 48 -> 30, f32
  tx.layer @c : 40 -> 12, f32
  tx.layer @h : 64 -> 36, bf16 bias {checkpoint = "h"}
  tx.layer @q_proj : 64 -> 64, f32
  tx.layer @k_proj : 64 -> 16, f32
  tx.layer @v_proj : 64 -> 16, f32
  func.func @shapes(%x: memref<?x64xf32>, %x48: memref<?x48xf32>, %x40: memref<?x40xf32>) -> (memref<?x32xf32>, memref<?x30xf32>, memref<?x12xf32>) {
    %ya = tx.linear @a(%x) : memref<?x64xf32> -> memref<?x32xf32>
    %yb = tx.linear @b(%x48) : memref<?x48xf32> -> memref<?x30xf32>
    %yc = tx.linear @c(%x40) : memref<?x40xf32> -> memref<?x12xf32>
    return %ya, %yb, %yc : memref<?x32xf32>, memref<?x30xf32>, memref<?x12xf32>
  }
  func.func @half(%x: memref<?x64xbf16>) -> memref<?x36xbf16> {
    %y = tx.linear @h(%x) : memref<?x64xbf16> -> memref<?x36xbf16>
    return %y : memref<?x36xbf16>
  }
  func.func @qkv(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
    %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
    return %q, %k, %v : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
  }
}
