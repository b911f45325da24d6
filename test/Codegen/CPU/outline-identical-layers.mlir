// tx-outline-identical-layers after tx-to-linalg: three layers proved
// identical become three calls of one function taking the layer's input,
// weights, per-layer argument and runtime-check number as arguments; a layer
// that differs (eps, op order) stays inline, the others are still outlined.
// RUN: tx-opt %s --split-input-file -tx-to-linalg -tx-outline-identical-layers | FileCheck %s
// Without the pass nothing is outlined (the CHECKs can fail).
// RUN: tx-opt %s --split-input-file -tx-to-linalg | FileCheck %s --check-prefix=NONE
// NONE-NOT: call @forward_layer

// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x16xf32>, %[[B0:[^:]*]]: memref<?x16xf32>, %[[B1:[^:]*]]: memref<?x16xf32>, %[[B2:[^:]*]]: memref<?x16xf32>)
// CHECK-DAG: %[[N0:.*]] = memref.get_global @__tx_p_n0
// CHECK-DAG: %[[P0:.*]] = memref.get_global @__tx_w_p0
// CHECK-DAG: %[[N1:.*]] = memref.get_global @__tx_p_n1
// CHECK-DAG: %[[P1:.*]] = memref.get_global @__tx_w_p1
// CHECK-DAG: %[[N2:.*]] = memref.get_global @__tx_p_n2
// CHECK-DAG: %[[P2:.*]] = memref.get_global @__tx_w_p2
// CHECK-DAG: %[[K0:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[K1:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[K2:.*]] = arith.constant 2 : i64
// CHECK-NOT: linalg.matmul
// CHECK: %[[O0:.*]] = call @forward_layer(%[[X]], %[[N0]], %[[P0]], %[[B0]], %[[K0]])
// CHECK-NEXT: %[[O1:.*]] = call @forward_layer(%[[O0]], %[[N1]], %[[P1]], %[[B1]], %[[K1]])
// CHECK-NEXT: %[[O2:.*]] = call @forward_layer(%[[O1]], %[[N2]], %[[P2]], %[[B2]], %[[K2]])
// CHECK-NEXT: return %[[O2]]
// CHECK: func.func private @forward_layer(%{{.*}}: memref<?x16xf32>, %{{.*}}: memref<16xf32>, %{{.*}}: memref<16x16xf32>, %{{.*}}: memref<?x16xf32>, %[[CHECK:.*]]: i64) -> memref<?x16xf32>
// CHECK-COUNT-1: linalg.matmul
// CHECK: call @tx_rt_check_failed(%[[CHECK]],
// CHECK: return
module {
  tx.param @n0 : memref<16xf32> {checkpoint = "n0"}
  tx.layer @p0 : 16 -> 16, f32 {checkpoint = "p0"}
  tx.param @n1 : memref<16xf32> {checkpoint = "n1"}
  tx.layer @p1 : 16 -> 16, f32 {checkpoint = "p1"}
  tx.param @n2 : memref<16xf32> {checkpoint = "n2"}
  tx.layer @p2 : 16 -> 16, f32 {checkpoint = "p2"}
  func.func @forward(%x: memref<?x16xf32>, %b0: memref<?x16xf32>, %b1: memref<?x16xf32>, %b2: memref<?x16xf32>) -> memref<?x16xf32> {
    %w0 = tx.get_param @n0 : memref<16xf32>
    %h0 = tx.rmsnorm %x, %w0 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y0 = tx.linear @p0(%h0) : memref<?x16xf32> -> memref<?x16xf32>
    %o0 = tx.binary add %y0, %b0 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w1 = tx.get_param @n1 : memref<16xf32>
    %h1 = tx.rmsnorm %o0, %w1 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y1 = tx.linear @p1(%h1) : memref<?x16xf32> -> memref<?x16xf32>
    %o1 = tx.binary add %y1, %b1 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w2 = tx.get_param @n2 : memref<16xf32>
    %h2 = tx.rmsnorm %o1, %w2 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y2 = tx.linear @p2(%h2) : memref<?x16xf32> -> memref<?x16xf32>
    %o2 = tx.binary add %y2, %b2 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    return %o2 : memref<?x16xf32>
  }
}

// -----

// The middle layer's norm has another eps: layers 0 and 2 are outlined, the
// middle one stays inline (its own norm, with its eps).
// (Constants move to the function's entry, before the segments are cut.)
// CHECK-LABEL: func.func @forward
// CHECK: %[[EPS:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[O0:.*]] = call @forward_layer(
// CHECK-NOT: call @forward_layer
// CHECK: arith.addf %{{.*}}, %[[EPS]]
// CHECK: linalg.matmul
// CHECK: %{{.*}} = call @forward_layer(
// CHECK: func.func private @forward_layer(
// CHECK-NOT: 5.000000e-01
// CHECK: return
module {
  tx.param @n0 : memref<16xf32> {checkpoint = "n0"}
  tx.layer @p0 : 16 -> 16, f32 {checkpoint = "p0"}
  tx.param @n1 : memref<16xf32> {checkpoint = "n1"}
  tx.layer @p1 : 16 -> 16, f32 {checkpoint = "p1"}
  tx.param @n2 : memref<16xf32> {checkpoint = "n2"}
  tx.layer @p2 : 16 -> 16, f32 {checkpoint = "p2"}
  func.func @forward(%x: memref<?x16xf32>, %b0: memref<?x16xf32>, %b1: memref<?x16xf32>, %b2: memref<?x16xf32>) -> memref<?x16xf32> {
    %w0 = tx.get_param @n0 : memref<16xf32>
    %h0 = tx.rmsnorm %x, %w0 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y0 = tx.linear @p0(%h0) : memref<?x16xf32> -> memref<?x16xf32>
    %o0 = tx.binary add %y0, %b0 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w1 = tx.get_param @n1 : memref<16xf32>
    %h1 = tx.rmsnorm %o0, %w1 eps 5.0e-01 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y1 = tx.linear @p1(%h1) : memref<?x16xf32> -> memref<?x16xf32>
    %o1 = tx.binary add %y1, %b1 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w2 = tx.get_param @n2 : memref<16xf32>
    %h2 = tx.rmsnorm %o1, %w2 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y2 = tx.linear @p2(%h2) : memref<?x16xf32> -> memref<?x16xf32>
    %o2 = tx.binary add %y2, %b2 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    return %o2 : memref<?x16xf32>
  }
}

// -----

// Only two layers, the second with its add's operands swapped (the per-layer
// argument first): not identical, nothing is outlined.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: call @forward_layer
// CHECK-NOT: func.func private @forward_layer
// CHECK: return
module {
  tx.param @n0 : memref<16xf32> {checkpoint = "n0"}
  tx.layer @p0 : 16 -> 16, f32 {checkpoint = "p0"}
  tx.param @n1 : memref<16xf32> {checkpoint = "n1"}
  tx.layer @p1 : 16 -> 16, f32 {checkpoint = "p1"}
  func.func @forward(%x: memref<?x16xf32>, %b0: memref<?x16xf32>, %b1: memref<?x16xf32>) -> memref<?x16xf32> {
    %w0 = tx.get_param @n0 : memref<16xf32>
    %h0 = tx.rmsnorm %x, %w0 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y0 = tx.linear @p0(%h0) : memref<?x16xf32> -> memref<?x16xf32>
    %o0 = tx.binary add %y0, %b0 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    %w1 = tx.get_param @n1 : memref<16xf32>
    %h1 = tx.rmsnorm %o0, %w1 eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
    %y1 = tx.linear @p1(%h1) : memref<?x16xf32> -> memref<?x16xf32>
    %o1 = tx.binary add %b1, %y1 : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
    return %o1 : memref<?x16xf32>
  }
}
