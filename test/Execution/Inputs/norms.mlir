// tx.layernorm and rmsnorm's weight_offset, one function each, for
// norms.test (numpy reference: norms_reference.py). The last dimension is
// 80: one chunk of 64 and a remainder of 16 in the row form.
module {
  tx.param @w : memref<80xf32>
  tx.param @b : memref<80xf32>
  tx.param @w8 : memref<8xf32>
  tx.param @b8 : memref<8xf32>
  tx.param @wbf : memref<80xbf16> {checkpoint = "w"}
  tx.param @bbf : memref<80xbf16> {checkpoint = "b"}
  tx.param @wh : memref<80xf16> {checkpoint = "w"}

  func.func @layernorm(%x: memref<?x80xf32>) -> memref<?x80xf32> {
    %w = tx.get_param @w : memref<80xf32>
    %b = tx.get_param @b : memref<80xf32>
    %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x80xf32>, memref<80xf32>, memref<80xf32> -> memref<?x80xf32>
    return %y : memref<?x80xf32>
  }
  func.func @layernorm_nobias(%x: memref<?x80xf32>) -> memref<?x80xf32> {
    %w = tx.get_param @w : memref<80xf32>
    %y = tx.layernorm %x, %w eps 1.0e-03 : memref<?x80xf32>, memref<80xf32> -> memref<?x80xf32>
    return %y : memref<?x80xf32>
  }
  // A dynamic last dimension (the linalg form, 1/D read at run time).
  func.func @layernorm_dynamic(%x: memref<?x?xf32>) -> memref<?x?xf32> {
    %w = tx.get_param @w : memref<80xf32>
    %b = tx.get_param @b : memref<80xf32>
    %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x?xf32>, memref<80xf32>, memref<80xf32> -> memref<?x?xf32>
    return %y : memref<?x?xf32>
  }
  // Per head, on a strided view.
  func.func @layernorm_heads(%x: memref<?x24xf32>) -> memref<?x2x8xf32> {
    %s = tx.slice %x dim 1 offset 8 size 16 : memref<?x24xf32> -> memref<?x16xf32, strided<[24, 1], offset: 8>>
    %v = tx.view %s : memref<?x16xf32, strided<[24, 1], offset: 8>> -> memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>
    %w = tx.get_param @w8 : memref<8xf32>
    %b = tx.get_param @b8 : memref<8xf32>
    %y = tx.layernorm %v, %w, %b eps 1.0e-05 : memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>, memref<8xf32>, memref<8xf32> -> memref<?x2x8xf32>
    return %y : memref<?x2x8xf32>
  }
  func.func @layernorm_bf16(%x: memref<?x80xbf16>) -> memref<?x80xbf16> {
    %w = tx.get_param @wbf : memref<80xbf16>
    %b = tx.get_param @bbf : memref<80xbf16>
    %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x80xbf16>, memref<80xbf16>, memref<80xbf16> -> memref<?x80xbf16>
    return %y : memref<?x80xbf16>
  }
  func.func @layernorm_nobias_f16(%x: memref<?x80xf16>) -> memref<?x80xf16> {
    %w = tx.get_param @wh : memref<80xf16>
    %y = tx.layernorm %x, %w eps 1.0e-03 : memref<?x80xf16>, memref<80xf16> -> memref<?x80xf16>
    return %y : memref<?x80xf16>
  }
  // Gemma's x / rms(x) * (1 + w).
  func.func @rmsnorm_offset(%x: memref<?x80xf32>) -> memref<?x80xf32> {
    %w = tx.get_param @w : memref<80xf32>
    %y = tx.rmsnorm %x, %w eps 1.0e-06 offset 1.0 : memref<?x80xf32>, memref<80xf32> -> memref<?x80xf32>
    return %y : memref<?x80xf32>
  }
  func.func @add_rmsnorm_offset(%x: memref<?x80xf32>, %r: memref<?x80xf32>) -> (memref<?x80xf32>, memref<?x80xf32>) {
    %w = tx.get_param @w : memref<80xf32>
    %y, %s = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 offset 1.0 : memref<?x80xf32>, memref<?x80xf32>, memref<80xf32> -> memref<?x80xf32>, memref<?x80xf32>
    return %y, %s : memref<?x80xf32>, memref<?x80xf32>
  }
  func.func @rmsnorm_offset_bf16(%x: memref<?x80xbf16>) -> memref<?x80xbf16> {
    %w = tx.get_param @wbf : memref<80xbf16>
    %y = tx.rmsnorm %x, %w eps 1.0e-06 offset 1.0 : memref<?x80xbf16>, memref<80xbf16> -> memref<?x80xbf16>
    return %y : memref<?x80xbf16>
  }
  // Without a weight: nn.LayerNorm(elementwise_affine=False) /
  // F.layer_norm(x, shape) (OLMo), an RMSNorm without a scale.
  func.func @layernorm_noaffine(%x: memref<?x80xf32>) -> memref<?x80xf32> {
    %y = tx.layernorm %x eps 1.0e-05 : memref<?x80xf32> -> memref<?x80xf32>
    return %y : memref<?x80xf32>
  }
  func.func @layernorm_noaffine_dynamic(%x: memref<?x?xf32>) -> memref<?x?xf32> {
    %y = tx.layernorm %x eps 1.0e-05 : memref<?x?xf32> -> memref<?x?xf32>
    return %y : memref<?x?xf32>
  }
  func.func @layernorm_noaffine_bf16(%x: memref<?x80xbf16>) -> memref<?x80xbf16> {
    %y = tx.layernorm %x eps 1.0e-05 : memref<?x80xbf16> -> memref<?x80xbf16>
    return %y : memref<?x80xbf16>
  }
  func.func @rmsnorm_noweight(%x: memref<?x80xf32>) -> memref<?x80xf32> {
    %y = tx.rmsnorm %x eps 1.0e-06 : memref<?x80xf32> -> memref<?x80xf32>
    return %y : memref<?x80xf32>
  }
  func.func @rmsnorm_noweight_dynamic(%x: memref<?x?xf32>) -> memref<?x?xf32> {
    %y = tx.rmsnorm %x eps 1.0e-06 : memref<?x?xf32> -> memref<?x?xf32>
    return %y : memref<?x?xf32>
  }
  func.func @add_rmsnorm_noweight(%x: memref<?x80xf32>, %r: memref<?x80xf32>) -> (memref<?x80xf32>, memref<?x80xf32>) {
    %y, %s = tx.add_rmsnorm %x, %r eps 1.0e-06 : memref<?x80xf32>, memref<?x80xf32> -> memref<?x80xf32>, memref<?x80xf32>
    return %y, %s : memref<?x80xf32>, memref<?x80xf32>
  }
}
