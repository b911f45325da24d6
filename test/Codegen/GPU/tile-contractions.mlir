// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="mma=off" -canonicalize -cse | FileCheck %s

// The GEMM of tx.linear, y[T,96] += x[T,64] * W[96,64]^T, with a dynamic
// token count: 64x64 block tiles (grid 2 x ceil(T/64)), 16x16 threads with
// 4x4 accumulators each, 16-deep K slices staged in workgroup memory.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: memref<?x64xf32>, %[[W:.+]]: memref<96x64xf32>, %[[Y:.+]]: memref<?x96xf32>)
// CHECK: %[[T:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[GY:.+]] = arith.ceildivui %[[T]], %c64
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c2, %{{.+}} = %[[GY]], %{{.+}} = %c1) threads(%[[TX:.+]], %[[TY:.+]], %{{.+}}) in (%{{.+}} = %c16, %{{.+}} = %c16, %{{.+}} = %c1) workgroup(%[[AS:.+]] : memref<16x64xf32, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK-COUNT-16: memref.load %[[Y]]
// CHECK: %{{.+}}:16 = scf.for %[[KT:.+]] = %c0 to %{{.+}} step %c1 iter_args(
// Both operands are K-innermost: consecutive threads read consecutive k.
// A thread's four elements of a tile are one strided view (16 rows apart),
// loaded at constant offsets.
// CHECK: arith.remui %{{.+}}, %c16
// CHECK: %[[XV:.+]] = memref.subview %[[X]][%{{.+}}, %{{.+}}] [4, 1] [16, 1] : memref<?x64xf32> to memref<4x1xf32, strided<[1024, 1], offset: ?>>
// CHECK: memref.load %[[XV]][%c0, %c0]
// CHECK-COUNT-4: memref.store %{{.+}}, %[[AS]]
// CHECK: %[[WV:.+]] = memref.subview %[[W]]
// CHECK: memref.load %[[WV]]
// CHECK-COUNT-4: memref.store %{{.+}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[BS]]
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK-COUNT-16: memref.store %{{.+}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul
func.func @linear(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}

// -----

// Batched, mixed precision: the batch goes to grid z, the
// shared tiles keep f16 and the cloned body widens to f32.
// CHECK-LABEL: func.func @batch_f16
// CHECK-SAME: (%[[A:.+]]: memref<4x?x16xf16>, %[[B:.+]]: memref<4x16x32xf16>, %[[C:.+]]: memref<4x?x32xf32>)
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %[[BZ:.+]]) in (%{{.+}} = %c1, %{{.+}} = %{{.+}}, %{{.+}} = %c4) threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c16, %{{.+}} = %c16, %{{.+}} = %c1) workgroup(%[[AS:.+]] : memref<16x64xf16, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x64xf16, #gpu.address_space<workgroup>>)
// CHECK: memref.load %[[C]][%[[BZ]],
// CHECK: memref.subview %[[A]][%[[BZ]], %{{.+}}, %{{.+}}] [1, 4, 1] [1, 16, 1]
// B is [batch][k][n]: a thread's elements step along K.
// CHECK: memref.subview %[[B]][%[[BZ]], %{{.+}}, %{{.+}}] [1, 4, 1] [1, 4, 1]
// CHECK: gpu.barrier
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// CHECK: memref.store %{{.+}}, %[[C]][%[[BZ]],
func.func @batch_f16(%a: memref<4x?x16xf16>, %b: memref<4x16x32xf16>, %c: memref<4x?x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x?x16xf16>, memref<4x16x32xf16>) outs(%c : memref<4x?x32xf32>)
  return
}

// -----

// Not contractions: left for the parallel-loop path.
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: gpu.launch
// CHECK: linalg.generic
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @elementwise(%a: memref<?x128xf32>, %b: memref<?x128xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x128xf32>) outs(%b : memref<?x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A contraction on tensors is not on buffers yet: left alone.
// CHECK-LABEL: func.func @tensors
// CHECK-NOT: gpu.launch
// CHECK: linalg.matmul
func.func @tensors(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
