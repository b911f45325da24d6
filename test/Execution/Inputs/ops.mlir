// One function per op for the numerics tests (ops.test). Weights and params
// are checkpoint tensors named after their symbols.
module {
  tx.layer @lb : 16 -> 24, f32 bias
  tx.layer @l : 16 -> 12, f32
  tx.param @w16 : memref<16xf32>
  tx.param @w8 : memref<8xf32>
  tx.none_layer @gone

  func.func @linear_bias(%x: memref<?x16xf32>) -> memref<?x24xf32> {
    %y = tx.linear @lb(%x) : memref<?x16xf32> -> memref<?x24xf32>
    return %y : memref<?x24xf32>
  }
  // Leading dims collapse: a 2-D matmul.
  func.func @linear_3d(%x: memref<?x3x16xf32>) -> memref<?x3x12xf32> {
    %y = tx.linear @l(%x) : memref<?x3x16xf32> -> memref<?x3x12xf32>
    return %y : memref<?x3x12xf32>
  }
  // A strided slice (as a fused projection produces) that cannot collapse:
  // the N-D contraction.
  func.func @linear_strided(%x: memref<?x6x16xf32>) -> memref<?x4x12xf32> {
    %s = tx.slice %x dim 1 offset 1 size 4 : memref<?x6x16xf32> -> memref<?x4x16xf32, strided<[96, 16, 1], offset: 16>>
    %y = tx.linear @l(%s) : memref<?x4x16xf32, strided<[96, 16, 1], offset: 16>> -> memref<?x4x12xf32>
    return %y : memref<?x4x12xf32>
  }
  // A strided 2-D slice straight into the matmul.
  func.func @linear_slice(%x: memref<?x40xf32>) -> memref<?x12xf32> {
    %s = tx.slice %x dim 1 offset 8 size 16 : memref<?x40xf32> -> memref<?x16xf32, strided<[40, 1], offset: 8>>
    %y = tx.linear @l(%s) : memref<?x16xf32, strided<[40, 1], offset: 8>> -> memref<?x12xf32>
    return %y : memref<?x12xf32>
  }
  func.func @rmsnorm(%x: memref<?x16xf32>) -> memref<?x16xf32> {
    %w = tx.get_param @w16 : memref<16xf32>
    %y = tx.rmsnorm %x, %w eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    return %y : memref<?x16xf32>
  }
  // Per-head norm of a strided view (q_norm on a slice of a merged QKV).
  func.func @rmsnorm_heads(%x: memref<?x24xf32>) -> memref<?x2x8xf32> {
    %s = tx.slice %x dim 1 offset 8 size 16 : memref<?x24xf32> -> memref<?x16xf32, strided<[24, 1], offset: 8>>
    %v = tx.view %s : memref<?x16xf32, strided<[24, 1], offset: 8>> -> memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>
    %w = tx.get_param @w8 : memref<8xf32>
    %y = tx.rmsnorm %v, %w eps 1.0e-06 : memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>, memref<8xf32> -> memref<?x2x8xf32>
    return %y : memref<?x2x8xf32>
  }
  func.func @add_rmsnorm(%x: memref<?x16xf32>, %r: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>) {
    %w = tx.get_param @w16 : memref<16xf32>
    %y, %res = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 : memref<?x16xf32>, memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>, memref<?x16xf32>
    return %y, %res : memref<?x16xf32>, memref<?x16xf32>
  }
  func.func @rotary(%x: memref<?x2x8xf32>, %cos: memref<?x4xf32>, %sin: memref<?x4xf32>) -> memref<?x2x8xf32> {
    %y = tx.rotary %x, %cos, %sin : memref<?x2x8xf32>, memref<?x4xf32>, memref<?x4xf32> -> memref<?x2x8xf32>
    return %y : memref<?x2x8xf32>
  }
  // GQA: 4 query heads over 2 kv heads, causal.
  func.func @attention_gqa(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
    %o = tx.attention %q, %k, %v scale 0.35 causal : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
    return %o : memref<?x4x8xf32>
  }
  // More keys than queries (decode with a cache), MQA, not causal / causal.
  func.func @attention_mqa(%q: memref<?x2x8xf32>, %k: memref<?x1x8xf32>, %v: memref<?x1x8xf32>) -> (memref<?x2x8xf32>, memref<?x2x8xf32>) {
    %o = tx.attention %q, %k, %v scale 0.5 : memref<?x2x8xf32>, memref<?x1x8xf32>, memref<?x1x8xf32> -> memref<?x2x8xf32>
    %c = tx.attention %q, %k, %v scale 0.5 causal : memref<?x2x8xf32>, memref<?x1x8xf32>, memref<?x1x8xf32> -> memref<?x2x8xf32>
    return %o, %c : memref<?x2x8xf32>, memref<?x2x8xf32>
  }
  func.func @unary(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>) {
    %a = tx.unary silu %x : memref<?x16xf32> -> memref<?x16xf32>
    %b = tx.unary gelu %x : memref<?x16xf32> -> memref<?x16xf32>
    %c = tx.unary gelu_tanh %x : memref<?x16xf32> -> memref<?x16xf32>
    %d = tx.unary relu %x : memref<?x16xf32> -> memref<?x16xf32>
    %e = tx.unary neg %x : memref<?x16xf32> -> memref<?x16xf32>
    %f = tx.unary exp %x : memref<?x16xf32> -> memref<?x16xf32>
    return %a, %b, %c, %d, %e, %f : memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>
  }
  func.func @binary(%x: memref<?x2x8xf32>, %y: memref<?x2x8xf32>, %b: memref<8xf32>) -> (memref<?x2x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32>) {
    %c = arith.constant 2.5 : f32
    %add = tx.binary add %x, %b : memref<?x2x8xf32>, memref<8xf32> -> memref<?x2x8xf32>
    %sub = tx.binary sub %x, %y : memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x2x8xf32>
    %mul = tx.binary mul %x, %c : memref<?x2x8xf32>, f32 -> memref<?x2x8xf32>
    %div = tx.binary div %x, %y : memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x2x8xf32>
    return %add, %sub, %mul, %div : memref<?x2x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32>
  }
  // Views returned as they are (strided results) and fed to ops.
  func.func @views(%x: memref<?x16xf32>) -> (memref<?x4x4xf32>, memref<4x?x4xf32, strided<[4, 16, 1]>>, memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>, memref<?x4x4xf32>) {
    %v = tx.view %x : memref<?x16xf32> -> memref<?x4x4xf32>
    %t = tx.transpose %v [1, 0, 2] : memref<?x4x4xf32> -> memref<4x?x4xf32, strided<[4, 16, 1]>>
    %s = tx.slice %v dim 2 offset 1 size 2 : memref<?x4x4xf32> -> memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>
    %a = tx.alias %v : memref<?x4x4xf32>
    %n = tx.unary neg %a : memref<?x4x4xf32> -> memref<?x4x4xf32>
    return %v, %t, %s, %n : memref<?x4x4xf32>, memref<4x?x4xf32, strided<[4, 16, 1]>>, memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>, memref<?x4x4xf32>
  }
  // In-place forms through views: x.mul_(2) on a slice, silu_ on all of it,
  // out= into a transposed view, copy_ into a slice.
  func.func @inplace(%x: memref<?x8xf32>, %y: memref<?x8xf32>) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %c = arith.constant 2.0 : f32
    %s = tx.slice %x dim 1 offset 0 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1]>>
    tx.binary_into mul %s, %c into %s : memref<?x4xf32, strided<[8, 1]>>, f32, memref<?x4xf32, strided<[8, 1]>>
    tx.unary_into silu %x into %x : memref<?x8xf32>, memref<?x8xf32>
    %s2 = tx.slice %y dim 1 offset 4 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1], offset: 4>>
    tx.copy %s into %s2 : memref<?x4xf32, strided<[8, 1]>>, memref<?x4xf32, strided<[8, 1], offset: 4>>
    tx.binary_into add %x, %y into %y : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
    return %x, %y : memref<?x8xf32>, memref<?x8xf32>
  }
  // Single-rank collectives are copies; guards fold (v is None: take k).
  func.func @collectives_guards(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>) {
    %a = tx.all_reduce %x group 1 : memref<?x16xf32> -> memref<?x16xf32>
    %r = tx.layer_ref @gone
    %g = tx.guard ne_none %r
    %o = scf.if %g -> memref<?x16xf32> {
      %n = tx.unary neg %x : memref<?x16xf32> -> memref<?x16xf32>
      scf.yield %n : memref<?x16xf32>
    } else {
      scf.yield %a : memref<?x16xf32>
    }
    return %a, %o : memref<?x16xf32>, memref<?x16xf32>
  }
}
