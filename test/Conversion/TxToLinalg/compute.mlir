// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s

// RMSNorm: sum of squares in an f32 buffer (a reduction), then the scaling.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-SAME: (%[[X:.+]]: memref<?x16xf32>, %[[W:.+]]: memref<16xf32>)
// CHECK: %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<?x16xf32>
// CHECK: %[[SS:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[SS]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<?x16xf32>) outs(%[[SS]] : memref<?xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[INVD:.+]] = arith.constant 6.250000e-02 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SS]], %[[W]] : {{.*}}) outs(%[[OUT]] : memref<?x16xf32>)
// CHECK: math.rsqrt
// CHECK: return %[[OUT]]
func.func @rmsnorm(%x: memref<?x16xf32>, %w: memref<16xf32>) -> memref<?x16xf32> {
  %y = tx.rmsnorm %x, %w eps 1.0e-05 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
  return %y : memref<?x16xf32>
}

// -----

// add_rmsnorm: the residual sum first (second result), then its norm.
// CHECK-LABEL: func.func @add_rmsnorm
// CHECK-SAME: (%[[X:.+]]: memref<?x16xf32>, %[[R:.+]]: memref<?x16xf32>, %[[W:.+]]: memref<16xf32>)
// CHECK: %[[RES:.+]] = memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[R]] : {{.*}}) outs(%[[RES]] : memref<?x16xf32>)
// CHECK: arith.addf
// CHECK: %[[OUT:.+]] = memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[RES]] : memref<?x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[RES]], %{{.+}}, %[[W]] : {{.*}}) outs(%[[OUT]] : memref<?x16xf32>)
// CHECK: return %[[OUT]], %[[RES]]
func.func @add_rmsnorm(%x: memref<?x16xf32>, %r: memref<?x16xf32>, %w: memref<16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>) {
  %y, %res = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 : memref<?x16xf32>, memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>, memref<?x16xf32>
  return %y, %res : memref<?x16xf32>, memref<?x16xf32>
}

// -----

// Rotary: one generic over the halves of input and output (subviews).
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.+]]: memref<?x2x8xf32>, %[[C:.+]]: memref<?x4xf32>, %[[S:.+]]: memref<?x4xf32>)
// CHECK: %[[OUT:.+]] = memref.alloc
// CHECK: %[[X1:.+]] = memref.subview %[[X]][0, 0, 0] [%{{.+}}, 2, 4] [1, 1, 1]
// CHECK: %[[X2:.+]] = memref.subview %[[X]][0, 0, 4] [%{{.+}}, 2, 4] [1, 1, 1]
// CHECK: %[[O1:.+]] = memref.subview %[[OUT]][0, 0, 0]
// CHECK: %[[O2:.+]] = memref.subview %[[OUT]][0, 0, 4]
// CHECK: linalg.generic {{.*}} ins(%[[X1]], %[[X2]], %[[C]], %[[S]] : {{.*}}) outs(%[[O1]], %[[O2]] : {{.*}})
// CHECK: arith.subf
// CHECK: arith.addf
// CHECK: linalg.yield
func.func @rotary(%x: memref<?x2x8xf32>, %cos: memref<?x4xf32>, %sin: memref<?x4xf32>) -> memref<?x2x8xf32> {
  %y = tx.rotary %x, %cos, %sin : memref<?x2x8xf32>, memref<?x4xf32>, memref<?x4xf32> -> memref<?x2x8xf32>
  return %y : memref<?x2x8xf32>
}

// -----

// Attention with GQA (4 query heads over 2 kv heads: head h = kh * 2 + g),
// causal mask from linalg.index, max-subtracted softmax in f32.
// CHECK: #[[QMAP:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d0 * 2 + d1, d4)>
// CHECK: #[[OMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d0 * 2 + d1, d3)>
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.+]]: memref<?x4x8xf32>, %[[K:.+]]: memref<?x2x8xf32>, %[[V:.+]]: memref<?x2x8xf32>)
// CHECK: %[[SC:.+]] = memref.alloc({{.*}}) : memref<2x2x?x?xf32>
// CHECK: %[[MAX:.+]] = memref.alloc({{.*}}) : memref<2x2x?xf32>
// CHECK: %[[SUM:.+]] = memref.alloc({{.*}}) : memref<2x2x?xf32>
// CHECK: linalg.generic {indexing_maps = [#[[QMAP]], {{.*}}ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[SC]] : memref<2x2x?x?xf32>)
// CHECK: linalg.index 2
// CHECK: linalg.index 3
// CHECK: arith.cmpi sgt
// CHECK: arith.select
// CHECK: outs(%[[MAX]]
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: outs(%[[SUM]]
// CHECK: ins(%[[SC]], %[[V]]
// CHECK: %[[OUT:.+]] = memref.alloc({{.*}}) : memref<?x4x8xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #[[OMAP]]]{{.*}}outs(%[[OUT]] : memref<?x4x8xf32>)
// CHECK: arith.divf
// CHECK: return %[[OUT]]
func.func @attention(%q: memref<?x4x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
  %o = tx.attention %q, %k, %v scale 0.35 causal : memref<?x4x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
  return %o : memref<?x4x8xf32>
}

// -----

// Without `causal` there is no mask (the one compare left is the runtime
// check that key and value have the same number of tokens).
// CHECK-LABEL: func.func @attention_full
// CHECK-NOT: arith.cmpi sgt
// CHECK: return
func.func @attention_full(%q: memref<?x2x8xf32>, %k: memref<?x2x8xf32>, %v: memref<?x2x8xf32>) -> memref<?x2x8xf32> {
  %o = tx.attention %q, %k, %v scale 0.35 : memref<?x2x8xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x2x8xf32>
  return %o : memref<?x2x8xf32>
}
