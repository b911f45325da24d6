// tx-return-contiguous: a public function returning a strided view returns
// a contiguous copy of it. By default one linalg.copy (the GPU pipeline's
// kernels); with `rows` (tx-to-cpu) a parallel loop over the token rows of
// vector loads and stores (async tasks with threads), a transfer_read
// where the view's last dimension is not unit-stride; a static shape stays
// a linalg.copy (vectorised as linalg).
// RUN: tx-opt %s -tx-to-linalg -tx-return-contiguous | FileCheck %s
// RUN: tx-opt %s -tx-to-linalg -tx-return-contiguous=rows | FileCheck %s --check-prefix=ROWS

// CHECK-LABEL: func.func @slice
// CHECK-SAME: -> memref<?x8xf32>
// CHECK: %[[C:.+]] = memref.alloc(%{{.+}}) : memref<?x8xf32>
// CHECK: linalg.copy ins(%{{.+}} : memref<?x8xf32, strided<[16, 1], offset: 8>>) outs(%[[C]] : memref<?x8xf32>)
// CHECK: return %[[C]]
// ROWS-LABEL: func.func @slice
// ROWS-SAME: (%[[X:.+]]: memref<?x16xf32>) -> memref<?x8xf32>
// ROWS: %[[S:.+]] = memref.subview %[[X]][0, 8]
// ROWS: %[[C:.+]] = memref.alloc(%{{.+}}) : memref<?x8xf32>
// ROWS-NOT: linalg.copy
// ROWS: scf.parallel (%[[R:.+]]) =
// ROWS: %[[V:.+]] = vector.load %[[S]][%[[R]], %{{.+}}] : memref<?x8xf32, strided<[16, 1], offset: 8>>, vector<8xf32>
// ROWS-NEXT: vector.store %[[V]], %[[C]][%[[R]], %{{.+}}] : memref<?x8xf32>, vector<8xf32>
// ROWS: return %[[C]]
func.func @slice(%x: memref<?x16xf32>) -> memref<?x8xf32, strided<[16, 1], offset: 8>> {
  %s = tx.slice %x dim 1 offset 8 size 8 : memref<?x16xf32> -> memref<?x8xf32, strided<[16, 1], offset: 8>>
  return %s : memref<?x8xf32, strided<[16, 1], offset: 8>>
}

// ROWS-LABEL: func.func @heads_major
// ROWS-SAME: -> memref<?x4x8xf32>
// ROWS: scf.parallel (%{{.+}}, %{{.+}}) =
// ROWS: vector.load
// ROWS: vector.store
func.func @heads_major(%x: memref<4x?x8xf32>) -> memref<?x4x8xf32, strided<[8, ?, 1]>> {
  %t = tx.transpose %x [1, 0, 2] : memref<4x?x8xf32> -> memref<?x4x8xf32, strided<[8, ?, 1]>>
  return %t : memref<?x4x8xf32, strided<[8, ?, 1]>>
}

// ROWS-LABEL: func.func @transposed
// ROWS-SAME: -> memref<?x8xf32>
// ROWS: scf.parallel (%{{.+}}) =
// ROWS: vector.transfer_read
// ROWS: vector.store
func.func @transposed(%x: memref<8x?xf32>) -> memref<?x8xf32, strided<[1, ?]>> {
  %t = tx.transpose %x [1, 0] : memref<8x?xf32> -> memref<?x8xf32, strided<[1, ?]>>
  return %t : memref<?x8xf32, strided<[1, ?]>>
}

// ROWS-LABEL: func.func @static
// ROWS: linalg.copy
func.func @static(%x: memref<4x16xf32>) -> memref<4x8xf32, strided<[16, 1]>> {
  %s = tx.slice %x dim 1 offset 0 size 8 : memref<4x16xf32> -> memref<4x8xf32, strided<[16, 1]>>
  return %s : memref<4x8xf32, strided<[16, 1]>>
}
