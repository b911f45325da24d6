// tx.attention's sliding window and soft-capping, for
// attention-variants.test (numpy reference: attention_reference.py) and
// Runtime/emulator/attention-variants.test. Head_dim 8, GQA 4 over 2 heads.
module {
  // A window of 3 (each query sees itself and the 2 keys before it).
  func.func @window(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
    %o = tx.attention %q, %k, %v scale 0.35 causal window 3 : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    return %o : memref<?x4x8xf32>
  }
  // A window of 1: each query sees only its own key (the output is v).
  func.func @window1(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
    %o = tx.attention %q, %k, %v scale 0.35 causal window 1 : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    return %o : memref<?x4x8xf32>
  }
  // Soft-capping at 1.5 of scores scaled by 0.9 (most of them cut), causal
  // and not.
  func.func @softcap(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> (memref<?x4x8xf32>, memref<?x4x8xf32>) {
    %o = tx.attention %q, %k, %v scale 0.9 causal softcap 1.5 : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    %p = tx.attention %q, %k, %v scale 0.9 softcap 1.5 : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    return %o, %p : memref<?x4x8xf32>, memref<?x4x8xf32>
  }
  // Both (Gemma 2's sliding layers), run with more keys than queries (the
  // queries at the end: a decode step after a cache).
  func.func @window_softcap(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
    %o = tx.attention %q, %k, %v scale 0.9 causal window 4 softcap 1.5 : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    return %o : memref<?x4x8xf32>
  }
  // bf16 (scores in f32, the result rounded once).
  func.func @window_bf16(%q: memref<?x4x8xbf16>, %k: memref<?x2x8xbf16>, %v: memref<?x2x8xbf16>) -> memref<?x4x8xbf16> {
    %o = tx.attention %q, %k, %v scale 0.9 causal window 3 softcap 1.5 : memref<?x4x8xbf16>, memref<?x2x8xbf16>, memref<?x2x8xbf16> -> memref<?x4x8xbf16>
    return %o : memref<?x4x8xbf16>
  }
  // MLA's shapes (DeepSeek-V2/V3): q and k with head_dim 16 (nope + rope
  // parts), v with head_dim 12; the result has v's. GQA 4 over 2 heads.
  func.func @mla(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>, %v: memref<?x2x12xf32>) -> memref<?x4x12xf32> {
    %o = tx.attention %q, %k, %v scale 0.3 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x12xf32> -> memref<?x4x12xf32>
    return %o : memref<?x4x12xf32>
  }
  func.func @mla_bf16(%q: memref<?x4x16xbf16>, %k: memref<?x2x16xbf16>, %v: memref<?x2x12xbf16>) -> memref<?x4x12xbf16> {
    %o = tx.attention %q, %k, %v scale 0.3 causal : memref<?x4x16xbf16>, memref<?x2x16xbf16>, memref<?x2x12xbf16> -> memref<?x4x12xbf16>
    return %o : memref<?x4x12xbf16>
  }
}
