// Ops that tx-to-cpu lowers as rows (tx-to-linalg{row-loops}, rows-threads
// test): widths that are not a multiple of the 64-element chunk (a loop of
// full chunks, then the remainder), strided inputs (slices of a merged
// projection), broadcast operands, bf16.
module {
  tx.param @w100 : memref<100xf32>
  tx.param @w24 : memref<24xf32>
  tx.param @wb100 : memref<100xbf16>

  func.func @norms(%x: memref<?x100xf32>, %r: memref<?x100xf32>) -> (memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>) {
    %w = tx.get_param @w100 : memref<100xf32>
    %n = tx.rmsnorm %x, %w eps 1.0e-05 : memref<?x100xf32>, memref<100xf32> -> memref<?x100xf32>
    %y, %res = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 : memref<?x100xf32>, memref<?x100xf32>, memref<100xf32> -> memref<?x100xf32>, memref<?x100xf32>
    return %n, %y, %res : memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>
  }
  // Per-head norm of a strided view.
  func.func @norm_heads(%x: memref<?x80xf32>) -> memref<?x2x24xf32> {
    %s = tx.slice %x dim 1 offset 8 size 48 : memref<?x80xf32> -> memref<?x48xf32, strided<[80, 1], offset: 8>>
    %v = tx.view %s : memref<?x48xf32, strided<[80, 1], offset: 8>> -> memref<?x2x24xf32, strided<[80, 24, 1], offset: 8>>
    %w = tx.get_param @w24 : memref<24xf32>
    %y = tx.rmsnorm %v, %w eps 1.0e-06 : memref<?x2x24xf32, strided<[80, 24, 1], offset: 8>>, memref<24xf32> -> memref<?x2x24xf32>
    return %y : memref<?x2x24xf32>
  }
  // Rotary on a strided view, half = 66 (one chunk and a remainder).
  func.func @rotary(%qkv: memref<?x400xf32>, %cos: memref<?x66xf32>, %sin: memref<?x66xf32>) -> memref<?x1x132xf32> {
    %s = tx.slice %qkv dim 1 offset 132 size 132 : memref<?x400xf32> -> memref<?x132xf32, strided<[400, 1], offset: 132>>
    %v = tx.view %s : memref<?x132xf32, strided<[400, 1], offset: 132>> -> memref<?x1x132xf32, strided<[400, 132, 1], offset: 132>>
    %y = tx.rotary %v, %cos, %sin : memref<?x1x132xf32, strided<[400, 132, 1], offset: 132>>, memref<?x66xf32>, memref<?x66xf32> -> memref<?x1x132xf32>
    return %y : memref<?x1x132xf32>
  }
  // The GLU of a merged gate/up projection: silu(gate) * up on slices, then
  // every binary form (a broadcast row, a scalar) and the in-place forms.
  func.func @glu(%gu: memref<?x200xf32>, %b: memref<100xf32>) -> (memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>) {
    %g = tx.slice %gu dim 1 offset 0 size 100 : memref<?x200xf32> -> memref<?x100xf32, strided<[200, 1]>>
    %u = tx.slice %gu dim 1 offset 100 size 100 : memref<?x200xf32> -> memref<?x100xf32, strided<[200, 1], offset: 100>>
    %ga = tx.unary silu %g : memref<?x100xf32, strided<[200, 1]>> -> memref<?x100xf32>
    %m = tx.binary mul %ga, %u : memref<?x100xf32>, memref<?x100xf32, strided<[200, 1], offset: 100>> -> memref<?x100xf32>
    %c = arith.constant 0.75 : f32
    %a = tx.binary add %m, %b : memref<?x100xf32>, memref<100xf32> -> memref<?x100xf32>
    %d = tx.binary div %a, %c : memref<?x100xf32>, f32 -> memref<?x100xf32>
    %e = tx.unary gelu %d : memref<?x100xf32> -> memref<?x100xf32>
    tx.unary_into gelu_tanh %e into %e : memref<?x100xf32>, memref<?x100xf32>
    tx.binary_into sub %e, %m into %m : memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>
    return %ga, %a, %e, %m : memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>, memref<?x100xf32>
  }
  // bf16: computed in f32, rounded once.
  func.func @bf16(%x: memref<?x100xbf16>, %r: memref<?x100xbf16>) -> (memref<?x100xbf16>, memref<?x100xbf16>, memref<?x100xbf16>) {
    %w = tx.get_param @wb100 : memref<100xbf16>
    %y, %res = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 : memref<?x100xbf16>, memref<?x100xbf16>, memref<100xbf16> -> memref<?x100xbf16>, memref<?x100xbf16>
    %s = tx.unary silu %y : memref<?x100xbf16> -> memref<?x100xbf16>
    return %y, %res, %s : memref<?x100xbf16>, memref<?x100xbf16>, memref<?x100xbf16>
  }
}
