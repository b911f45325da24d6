// tx.rotary with `interleaved` (pairs (2i, 2i+1): GPT-J, Cohere, GLM) and
// without (NeoX halves), for rotary-variants.test (numpy reference:
// rotary_reference.py) and Runtime/emulator/rotary-interleaved.test.
module {
  // Head_dim 8 over 2 heads (tx-to-cpu lowers rotary as rows: each row's
  // pairs as one vector split into even and odd lanes).
  func.func @interleaved(%x: memref<?x2x8xf32>, %cos: memref<?x4xf32>, %sin: memref<?x4xf32>) -> memref<?x2x8xf32> {
    %y = tx.rotary %x, %cos, %sin interleaved : memref<?x2x8xf32>, memref<?x4xf32>, memref<?x4xf32> -> memref<?x2x8xf32>
    return %y : memref<?x2x8xf32>
  }
  // The same without the attribute: NeoX's halves.
  func.func @neox(%x: memref<?x2x8xf32>, %cos: memref<?x4xf32>, %sin: memref<?x4xf32>) -> memref<?x2x8xf32> {
    %y = tx.rotary %x, %cos, %sin : memref<?x2x8xf32>, memref<?x4xf32>, memref<?x4xf32> -> memref<?x2x8xf32>
    return %y : memref<?x2x8xf32>
  }
  // A head of a merged projection (a strided view), 66 pairs: one chunk of
  // 64 pairs (128 features) and a remainder of 2 in the row form.
  func.func @interleaved_wide(%qkv: memref<?x400xf32>, %cos: memref<?x66xf32>, %sin: memref<?x66xf32>) -> memref<?x1x132xf32> {
    %s = tx.slice %qkv dim 1 offset 132 size 132 : memref<?x400xf32> -> memref<?x132xf32, strided<[400, 1], offset: 132>>
    %v = tx.view %s : memref<?x132xf32, strided<[400, 1], offset: 132>> -> memref<?x1x132xf32, strided<[400, 132, 1], offset: 132>>
    %y = tx.rotary %v, %cos, %sin interleaved : memref<?x1x132xf32, strided<[400, 132, 1], offset: 132>>, memref<?x66xf32>, memref<?x66xf32> -> memref<?x1x132xf32>
    return %y : memref<?x1x132xf32>
  }
  // Partial rotary (GPT-J's rotary_dim, GLM): the first 6 features of each
  // 16-wide head rotated in pairs, the other 10 passed through, both copied
  // into one buffer as the frontend writes HF's torch.cat.
  func.func @interleaved_partial(%x: memref<?x3x16xf32>, %cos: memref<?x3xf32>, %sin: memref<?x3xf32>) -> memref<?x3x16xf32> {
    %c0 = arith.constant 0 : index
    %rot = tx.slice %x dim 2 offset 0 size 6 : memref<?x3x16xf32> -> memref<?x3x6xf32, strided<[48, 16, 1]>>
    %pass = tx.slice %x dim 2 offset 6 size 10 : memref<?x3x16xf32> -> memref<?x3x10xf32, strided<[48, 16, 1], offset: 6>>
    %r = tx.rotary %rot, %cos, %sin interleaved : memref<?x3x6xf32, strided<[48, 16, 1]>>, memref<?x3xf32>, memref<?x3xf32> -> memref<?x3x6xf32>
    %t = memref.dim %x, %c0 : memref<?x3x16xf32>
    %out = memref.alloc(%t) : memref<?x3x16xf32>
    %o1 = tx.slice %out dim 2 offset 0 size 6 : memref<?x3x16xf32> -> memref<?x3x6xf32, strided<[48, 16, 1]>>
    %o2 = tx.slice %out dim 2 offset 6 size 10 : memref<?x3x16xf32> -> memref<?x3x10xf32, strided<[48, 16, 1], offset: 6>>
    tx.copy %r into %o1 : memref<?x3x6xf32>, memref<?x3x6xf32, strided<[48, 16, 1]>>
    tx.copy %pass into %o2 : memref<?x3x10xf32, strided<[48, 16, 1], offset: 6>>, memref<?x3x10xf32, strided<[48, 16, 1], offset: 6>>
    return %out : memref<?x3x16xf32>
  }
  // Static sizes: through tx-to-linalg (the linalg form: views of stride 2)
  // tx-to-cpu's tiling vectorises it.
  func.func @interleaved_static(%x: memref<5x2x8xf32>, %cos: memref<5x4xf32>, %sin: memref<5x4xf32>) -> memref<5x2x8xf32> {
    %y = tx.rotary %x, %cos, %sin interleaved : memref<5x2x8xf32>, memref<5x4xf32>, memref<5x4xf32> -> memref<5x2x8xf32>
    return %y : memref<5x2x8xf32>
  }
  // bf16 (computed in f32, each result rounded once).
  func.func @interleaved_bf16(%x: memref<?x2x8xbf16>, %cos: memref<?x4xbf16>, %sin: memref<?x4xbf16>) -> memref<?x2x8xbf16> {
    %y = tx.rotary %x, %cos, %sin interleaved : memref<?x2x8xbf16>, memref<?x4xbf16>, memref<?x4xbf16> -> memref<?x2x8xbf16>
    return %y : memref<?x2x8xbf16>
  }
}
