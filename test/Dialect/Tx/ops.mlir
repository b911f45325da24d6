// Every tx op, type and attribute round-trips: custom form -> print ->
// parse again, and through the generic form.
// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | tx-opt | FileCheck %s

// CHECK: module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 512, splitting_ops = ["tx.attention"], graph_partition = true, cudagraph_mode = full_and_piecewise, capture_sizes = [1, 2, 4], hidden_size = 64, element_size = 2, arch = "sm_90">}
module attributes {tx.config = #tx.config<tp_size = 2, sequence_parallel = true, async_tp = true, sp_min_tokens = 512, splitting_ops = ["tx.attention"], graph_partition = true, cudagraph_mode = full_and_piecewise, capture_sizes = [1, 2, 4], hidden_size = 64, element_size = 2, arch = "sm_90">} {
  // CHECK: tx.layer @q_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.q_proj"}
  tx.layer @q_proj : 64 -> 64, f32 {checkpoint = "model.layers.0.self_attn.q_proj"}
  // CHECK: tx.layer @o_proj : 64 -> 64, bf16 bias
  tx.layer @o_proj : 64 -> 64, bf16 bias
  // CHECK: tx.layer @qkv : 64 -> 96, f32 bias stacking [#tx.stack<source = "q", offset = 0, size = 64, heads = 4>, #tx.stack<source = "k", offset = 64, size = 16, heads = 1>, #tx.stack<source = "v", offset = 80, size = 16>]
  tx.layer @qkv : 64 -> 96, f32 bias stacking [#tx.stack<source = "q", offset = 0, size = 64, heads = 4>, #tx.stack<source = "k", offset = 64, size = 16, heads = 1>, #tx.stack<source = "v", offset = 80, size = 16, heads = 0>]
  // CHECK: tx.none_layer @v_proj
  tx.none_layer @v_proj
  // CHECK: tx.param @norm : memref<64xf32> {checkpoint = "model.norm.weight"}
  tx.param @norm : memref<64xf32> {checkpoint = "model.norm.weight"}

  // CHECK-LABEL: func.func @guards
  func.func @guards() -> (i1, i1, i1, i1, i1, i1, !tx.layer_ref) {
    // CHECK: %[[R:.+]] = tx.layer_ref @v_proj
    %r = tx.layer_ref @v_proj
    // CHECK: tx.guard is_none %[[R]]
    // CHECK: tx.guard is_not_none %[[R]]
    // CHECK: tx.guard truthy %[[R]]
    // CHECK: tx.guard falsy %[[R]]
    // CHECK: tx.guard eq_none %[[R]]
    // CHECK: tx.guard ne_none %[[R]]
    %a = tx.guard is_none %r
    %b = tx.guard is_not_none %r
    %c = tx.guard truthy %r
    %d = tx.guard falsy %r
    %e = tx.guard eq_none %r
    %f = tx.guard ne_none %r
    return %a, %b, %c, %d, %e, %f, %r : i1, i1, i1, i1, i1, i1, !tx.layer_ref
  }

  // CHECK-LABEL: func.func @projections
  // CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>, %[[Y:.+]]: memref<8x64xbf16>)
  func.func @projections(%x: memref<?x64xf32>, %y: memref<8x64xbf16>) {
    // CHECK: tx.linear @q_proj(%[[X]]) : memref<?x64xf32> -> memref<?x64xf32>
    %0 = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    // CHECK: tx.linear @qkv(%[[X]]) : memref<?x64xf32> -> memref<?x96xf32>
    %1 = tx.linear @qkv(%x) : memref<?x64xf32> -> memref<?x96xf32>
    // CHECK: tx.all_gather_linear @o_proj(%[[Y]]) dim 0 group 2 : memref<8x64xbf16> -> memref<16x64xbf16>
    %2 = tx.all_gather_linear @o_proj(%y) dim 0 group 2 : memref<8x64xbf16> -> memref<16x64xbf16>
    // CHECK: tx.linear_reduce_scatter @o_proj(%[[Y]]) dim 0 group 2 : memref<8x64xbf16> -> memref<4x64xbf16>
    %3 = tx.linear_reduce_scatter @o_proj(%y) dim 0 group 2 : memref<8x64xbf16> -> memref<4x64xbf16>
    // CHECK: tx.get_param @norm : memref<64xf32>
    %4 = tx.get_param @norm : memref<64xf32>
    return
  }

  // CHECK-LABEL: func.func @views
  func.func @views(%x: memref<?x96xf32>, %y: memref<4x8xf32>) {
    // CHECK: tx.slice %{{.+}} dim 1 offset 64 size 32 : memref<?x96xf32> -> memref<?x32xf32, strided<[96, 1], offset: 64>>
    %s = tx.slice %x dim 1 offset 64 size 32 : memref<?x96xf32> -> memref<?x32xf32, strided<[96, 1], offset: 64>>
    // CHECK: tx.view %{{.+}} : memref<?x32xf32, strided<[96, 1], offset: 64>> -> memref<?x2x16xf32, strided<[96, 16, 1], offset: 64>>
    %v = tx.view %s : memref<?x32xf32, strided<[96, 1], offset: 64>> -> memref<?x2x16xf32, strided<[96, 16, 1], offset: 64>>
    // CHECK: tx.view %{{.+}} : memref<?x96xf32> -> memref<?x6x16xf32>
    %w = tx.view %x : memref<?x96xf32> -> memref<?x6x16xf32>
    // CHECK: tx.transpose %{{.+}} [1, 0] : memref<4x8xf32> -> memref<8x4xf32, strided<[1, 8]>>
    %t = tx.transpose %y [1, 0] : memref<4x8xf32> -> memref<8x4xf32, strided<[1, 8]>>
    // CHECK: tx.alias %{{.+}} : memref<4x8xf32>
    %a = tx.alias %y : memref<4x8xf32>
    return
  }

  // CHECK-LABEL: func.func @elementwise
  func.func @elementwise(%x: memref<?x64xf32>, %b: memref<64xf32>, %o: memref<?x64xf32>) {
    %c = arith.constant 2.0 : f32
    // CHECK: tx.unary silu %{{.+}} : memref<?x64xf32> -> memref<?x64xf32>
    %0 = tx.unary silu %x : memref<?x64xf32> -> memref<?x64xf32>
    // CHECK: tx.unary gelu_tanh
    %1 = tx.unary gelu_tanh %x : memref<?x64xf32> -> memref<?x64xf32>
    // CHECK: tx.binary add %{{.+}}, %{{.+}} : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %2 = tx.binary add %x, %b : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    // CHECK: tx.binary div %{{.+}}, %{{.+}} : memref<?x64xf32>, f32 -> memref<?x64xf32>
    %3 = tx.binary div %x, %c : memref<?x64xf32>, f32 -> memref<?x64xf32>
    // CHECK: tx.unary_into relu %{{.+}} into %{{.+}} : memref<?x64xf32>, memref<?x64xf32>
    tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
    // CHECK: tx.binary_into mul %{{.+}}, %{{.+}} into %{{.+}} : memref<?x64xf32>, f32, memref<?x64xf32>
    tx.binary_into mul %x, %c into %x : memref<?x64xf32>, f32, memref<?x64xf32>
    // CHECK: tx.binary_into sub %{{.+}}, %{{.+}} into %{{.+}} : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>
    tx.binary_into sub %x, %x into %o : memref<?x64xf32>, memref<?x64xf32>, memref<?x64xf32>
    // CHECK: tx.copy %{{.+}} into %{{.+}} : memref<?x64xf32>, memref<?x64xf32>
    tx.copy %x into %o : memref<?x64xf32>, memref<?x64xf32>
    return
  }

  // CHECK-LABEL: func.func @containers_and_calls
  func.func @containers_and_calls(%s: !tx.container, %x: memref<?x64xf32>) -> memref<?x64xf32> {
    %i = arith.constant 0 : index
    // CHECK: tx.container_set %{{.+}}[%{{.+}}] = %{{.+}}, %{{.+}} : memref<?x64xf32>, memref<?x64xf32>
    tx.container_set %s[%i] = %x, %x : memref<?x64xf32>, memref<?x64xf32>
    // CHECK: tx.container_get %{{.+}}[%{{.+}}] : memref<?x64xf32>, memref<?x64xf32>
    %k, %v = tx.container_get %s[%i] : memref<?x64xf32>, memref<?x64xf32>
    // CHECK: tx.opaque_call "hook"(%{{.+}}, %{{.+}}) : (memref<?x64xf32>, !tx.container) -> memref<?x64xf32>
    %r = tx.opaque_call "hook"(%k, %s) : (memref<?x64xf32>, !tx.container) -> memref<?x64xf32>
    return %r : memref<?x64xf32>
  }

  // CHECK-LABEL: func.func @transformer
  func.func @transformer(%x: memref<?x64xf32>, %w: memref<64xf32>, %q: memref<?x4x16xf32>,
                         %k: memref<?x2x16xf32>, %cos: memref<?x8xf32>, %sin: memref<?x8xf32>,
                         %v12: memref<?x2x12xf32>) {
    // CHECK: tx.rmsnorm %{{.+}}, %{{.+}} eps 9.9999999999999995E-7 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    %0 = tx.rmsnorm %x, %w eps 1.0e-6 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
    // CHECK: tx.add_rmsnorm %{{.+}}, %{{.+}}, %{{.+}} eps 9.9999999999999995E-7 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    %1, %2 = tx.add_rmsnorm %x, %x, %w eps 1.0e-6 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
    // CHECK: tx.rotary %{{.+}}, %{{.+}}, %{{.+}} : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    %3 = tx.rotary %q, %cos, %sin : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
    // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    %4 = tx.attention %q, %k, %k scale 0.25 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    // CHECK: tx.attention %{{.+}} scale 1.250000e-01 :
    %5 = tx.attention %q, %k, %k scale 0.125 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
    // A value head_dim of its own (MLA): the result has it.
    // CHECK: tx.attention %{{.+}} : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x12xf32> -> memref<?x4x12xf32>
    %6 = tx.attention %q, %k, %v12 scale 0.125 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x12xf32> -> memref<?x4x12xf32>
    return
  }

  // CHECK-LABEL: func.func @collectives
  func.func @collectives(%x: memref<8x64xf32>) {
    // CHECK: tx.all_reduce %{{.+}} group 2 : memref<8x64xf32> -> memref<8x64xf32>
    %0 = tx.all_reduce %x group 2 : memref<8x64xf32> -> memref<8x64xf32>
    // CHECK: tx.reduce_scatter %{{.+}} dim 0 group 2 : memref<8x64xf32> -> memref<4x64xf32>
    %1 = tx.reduce_scatter %x dim 0 group 2 : memref<8x64xf32> -> memref<4x64xf32>
    // CHECK: tx.all_gather %{{.+}} dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    %2 = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf32>
    return
  }
}
