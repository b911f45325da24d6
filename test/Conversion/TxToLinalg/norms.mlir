// tx.layernorm and the weight_offset of tx.rmsnorm / tx.add_rmsnorm as
// linalg (any shape), and as rows with tx-to-linalg{row-loops} (a static
// last dimension under a dynamic token dimension).
// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s
// RUN: tx-opt %s -split-input-file -tx-to-linalg=row-loops | FileCheck %s --check-prefix=ROWS

// LayerNorm: per-row sum, then sum of centred squares (both f32 reductions),
// then (x - mean) * rsqrt(var + eps) * w + b.
// CHECK-LABEL: func.func @layernorm
// CHECK-SAME: (%[[X:.+]]: memref<?x16xf32>, %[[W:.+]]: memref<16xf32>, %[[B:.+]]: memref<16xf32>)
// CHECK: %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<?x16xf32>
// CHECK: %[[SUM:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: %[[SQ:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: %[[INVD:.+]] = arith.constant 6.250000e-02 : f32
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<?x16xf32>) outs(%[[SUM]] : memref<?xf32>)
// CHECK-NEXT: ^bb0(%[[V0:.+]]: f32, %[[A0:.+]]: f32):
// CHECK-NEXT: arith.addf %[[A0]], %[[V0]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[SUM]] : {{.*}}) outs(%[[SQ]] : memref<?xf32>)
// CHECK-NEXT: ^bb0(%[[V1:.+]]: f32, %[[S1:.+]]: f32, %[[A1:.+]]: f32):
// CHECK-NEXT: %[[M1:.+]] = arith.mulf %[[S1]], %[[INVD]]
// CHECK-NEXT: %[[D1:.+]] = arith.subf %[[V1]], %[[M1]]
// CHECK-NEXT: %[[DD:.+]] = arith.mulf %[[D1]], %[[D1]]
// CHECK-NEXT: arith.addf %[[A1]], %[[DD]]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[SUM]], %[[SQ]], %[[W]], %[[B]] : {{.*}}) outs(%[[OUT]] : memref<?x16xf32>)
// CHECK-NEXT: ^bb0(%[[V:.+]]: f32, %[[S:.+]]: f32, %[[Q:.+]]: f32, %[[WV:.+]]: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[MEAN:.+]] = arith.mulf %[[S]], %[[INVD]]
// CHECK-NEXT: %[[VAR:.+]] = arith.mulf %[[Q]], %[[INVD]]
// CHECK-NEXT: %[[VE:.+]] = arith.addf %[[VAR]], %{{.+}}
// CHECK-NEXT: %[[RSTD:.+]] = math.rsqrt %[[VE]]
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[V]], %[[MEAN]]
// CHECK-NEXT: %[[N:.+]] = arith.mulf %[[C]], %[[RSTD]]
// CHECK-NEXT: %[[NW:.+]] = arith.mulf %[[N]], %[[WV]]
// CHECK-NEXT: %[[Y:.+]] = arith.addf %[[NW]], %[[BV]]
// CHECK-NEXT: linalg.yield %[[Y]]
// CHECK: return %[[OUT]]
// The row form: an scf.parallel over the tokens; in each row the sum, the
// centred squares (FMA) and the normalised chunks.
// ROWS-LABEL: func.func @layernorm
// ROWS: scf.parallel
// ROWS: vector.load {{.*}} vector<16xf32>
// ROWS: arith.addf {{.*}} : vector<16xf32>
// ROWS: arith.subf {{.*}} : vector<16xf32>
// ROWS: vector.fma
// ROWS: math.rsqrt
// ROWS: arith.subf {{.*}} : vector<16xf32>
// ROWS: arith.mulf {{.*}} : vector<16xf32>
// ROWS: arith.mulf {{.*}} : vector<16xf32>
// ROWS: arith.addf {{.*}} : vector<16xf32>
// ROWS: vector.store {{.*}} vector<16xf32>
func.func @layernorm(%x: memref<?x16xf32>, %w: memref<16xf32>, %b: memref<16xf32>) -> memref<?x16xf32> {
  %y = tx.layernorm %x, %w, %b eps 1.0e-05 : memref<?x16xf32>, memref<16xf32>, memref<16xf32> -> memref<?x16xf32>
  return %y : memref<?x16xf32>
}

// -----

// Without bias, bf16 with a dynamic last dimension: everything in f32
// (1 / D read from the input), rounded once; the weight and bias sizes are
// checked at run time.
// CHECK-LABEL: func.func @layernorm_bf16
// CHECK: memref.dim %{{.+}}, %{{.+}} : memref<?xbf16>
// CHECK: scf.if
// CHECK: func.call @tx_rt_check_failed
// CHECK: %[[D:.+]] = arith.uitofp %{{.+}} : i64 to f32
// CHECK: %[[INVD:.+]] = arith.divf %{{.+}}, %[[D]] : f32
// CHECK: linalg.generic
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: linalg.generic
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : memref<?x?xbf16>, memref<?xf32>, memref<?xf32>, memref<?xbf16>) outs(%{{.+}} : memref<?x?xbf16>)
// CHECK: math.rsqrt
// CHECK-NOT: arith.addf
// CHECK: %[[Y:.+]] = arith.truncf %{{.+}} : f32 to bf16
// CHECK-NEXT: linalg.yield %[[Y]]
// No row form for a dynamic last dimension:
// ROWS-LABEL: func.func @layernorm_bf16
// ROWS-NOT: scf.parallel
// ROWS: return
func.func @layernorm_bf16(%x: memref<?x?xbf16>, %w: memref<?xbf16>) -> memref<?x?xbf16> {
  %y = tx.layernorm %x, %w eps 1.0e-05 : memref<?x?xbf16>, memref<?xbf16> -> memref<?x?xbf16>
  return %y : memref<?x?xbf16>
}

// -----

// rmsnorm with offset 1.0 (Gemma): the scale is w + 1.
// CHECK-LABEL: func.func @rmsnorm_offset
// CHECK: math.rsqrt
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[SCALE:.+]] = arith.addf %{{.+}}, %[[ONE]] : f32
// CHECK-NEXT: arith.mulf %{{.+}}, %[[SCALE]] : f32
// ROWS-LABEL: func.func @rmsnorm_offset
// ROWS: scf.parallel
// ROWS: %[[W:.+]] = vector.load {{.*}} : memref<16xf32>, vector<16xf32>
// ROWS: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : vector<16xf32>
// ROWS-NEXT: %[[SCALE:.+]] = arith.addf %[[W]], %[[ONE]] : vector<16xf32>
// ROWS: arith.mulf %{{.+}}, %[[SCALE]] : vector<16xf32>
func.func @rmsnorm_offset(%x: memref<?x16xf32>, %w: memref<16xf32>) -> memref<?x16xf32> {
  %y = tx.rmsnorm %x, %w eps 1.0e-06 offset 1.0 : memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>
  return %y : memref<?x16xf32>
}

// -----

// add_rmsnorm keeps its offset in both forms; no offset, no addition.
// CHECK-LABEL: func.func @add_rmsnorm_offset
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK-LABEL: func.func @rmsnorm_no_offset
// CHECK: math.rsqrt
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// ROWS-LABEL: func.func @add_rmsnorm_offset
// ROWS: arith.constant dense<2.500000e-01> : vector<16xf32>
func.func @add_rmsnorm_offset(%x: memref<?x16xf32>, %r: memref<?x16xf32>, %w: memref<16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>) {
  %y, %s = tx.add_rmsnorm %x, %r, %w eps 1.0e-06 offset 0.25 : memref<?x16xf32>, memref<?x16xf32>, memref<16xf32> -> memref<?x16xf32>, memref<?x16xf32>
  return %y, %s : memref<?x16xf32>, memref<?x16xf32>
}
func.func @rmsnorm_no_offset(%x: memref<4x16xf32>, %w: memref<16xf32>) -> memref<4x16xf32> {
  %y = tx.rmsnorm %x, %w eps 1.0e-06 : memref<4x16xf32>, memref<16xf32> -> memref<4x16xf32>
  return %y : memref<4x16xf32>
}
