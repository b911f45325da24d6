// RUN: tx-opt %s -split-input-file -tx-to-linalg | FileCheck %s
// Row loops (tx-to-cpu): in-place forms and copies are parallel rows of
// vectors.
// RUN: tx-opt %s -split-input-file -tx-to-linalg=row-loops | FileCheck %s --check-prefix=ROWS

// CHECK-LABEL: func.func @unary
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: math.erf
// CHECK: math.tanh
// CHECK: arith.maximumf
// CHECK: arith.negf
// CHECK: math.exp
func.func @unary(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  %a = tx.unary silu %x : memref<?x16xf32> -> memref<?x16xf32>
  %b = tx.unary gelu %x : memref<?x16xf32> -> memref<?x16xf32>
  %c = tx.unary gelu_tanh %x : memref<?x16xf32> -> memref<?x16xf32>
  %d = tx.unary relu %x : memref<?x16xf32> -> memref<?x16xf32>
  %e = tx.unary neg %x : memref<?x16xf32> -> memref<?x16xf32>
  %f = tx.unary exp %x : memref<?x16xf32> -> memref<?x16xf32>
  return %a, %b, %c, %d, %e, %f : memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// -----

// Broadcast rhs: a suffix map; scalar rhs: an empty map.
// CHECK: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK: #[[SUF:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK: #[[SCALAR:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[X:.+]]: memref<?x2x8xf32>, %[[B:.+]]: memref<8xf32>, %[[C:.+]]: f32)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SUF]], #[[ID]]]{{.*}} ins(%[[X]], %[[B]] : memref<?x2x8xf32>, memref<8xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]]{{.*}} ins(%[[X]], %[[C]] : memref<?x2x8xf32>, f32)
// CHECK: arith.divf
func.func @binary(%x: memref<?x2x8xf32>, %b: memref<8xf32>, %c: f32) -> (memref<?x2x8xf32>, memref<?x2x8xf32>) {
  %add = tx.binary add %x, %b : memref<?x2x8xf32>, memref<8xf32> -> memref<?x2x8xf32>
  %div = tx.binary div %x, %c : memref<?x2x8xf32>, f32 -> memref<?x2x8xf32>
  return %add, %div : memref<?x2x8xf32>, memref<?x2x8xf32>
}

// -----

// In-place forms write their target. An input that is the target itself
// is read in place; one that may overlap it (here: two arguments, which a
// caller may pass one buffer for) is copied first, so that every lowering
// reads it before writing (x[1:] = f(x[:-1]) does not see its own writes,
// whatever the order, vector width or thread count).
// CHECK-LABEL: func.func @inplace
// CHECK-SAME: (%[[X:.+]]: memref<?x8xf32>, %[[Y:.+]]: memref<?x8xf32>, %[[C:.+]]: f32)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[X]] : memref<?x8xf32>) outs(%[[X]] : memref<?x8xf32>)
// CHECK: %[[X1:.+]] = memref.alloc
// CHECK-NEXT: linalg.copy ins(%[[X]] : memref<?x8xf32>) outs(%[[X1]] : memref<?x8xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[X1]], %[[C]] : memref<?x8xf32>, f32) outs(%[[Y]] : memref<?x8xf32>)
// CHECK: arith.mulf
// CHECK: %[[X2:.+]] = memref.alloc
// CHECK-NEXT: linalg.copy ins(%[[X]] : memref<?x8xf32>) outs(%[[X2]] : memref<?x8xf32>)
// CHECK-NEXT: linalg.copy ins(%[[X2]] : memref<?x8xf32>) outs(%[[Y]] : memref<?x8xf32>)
// ROWS-LABEL: func.func @inplace
// ROWS-SAME: (%[[X:.+]]: memref<?x8xf32>, %[[Y:.+]]: memref<?x8xf32>, %[[C:.+]]: f32)
// ROWS-NOT: linalg.copy
// ROWS: scf.parallel
// ROWS: arith.maximumf
// ROWS: %[[X1:.+]] = memref.alloc
// ROWS: scf.parallel (%[[R:.+]]) =
// ROWS: %[[V:.+]] = vector.load %[[X]][%[[R]], %{{.+}}] : memref<?x8xf32>, vector<8xf32>
// ROWS-NEXT: vector.store %[[V]], %[[X1]][%[[R]], %{{.+}}] : memref<?x8xf32>, vector<8xf32>
// ROWS: arith.mulf
// ROWS: vector.store %{{.+}}, %[[Y]]
// ROWS-NOT: linalg.copy
// ROWS: return
func.func @inplace(%x: memref<?x8xf32>, %y: memref<?x8xf32>, %c: f32) {
  tx.unary_into relu %x into %x : memref<?x8xf32>, memref<?x8xf32>
  tx.binary_into mul %x, %c into %y : memref<?x8xf32>, f32, memref<?x8xf32>
  tx.copy %x into %y : memref<?x8xf32>, memref<?x8xf32>
  return
}

// -----

// A fresh buffer is no argument, and disjoint static slices of one buffer do
// not overlap: no copy first.
// CHECK-LABEL: func.func @inplace_disjoint
// CHECK-NOT: linalg.copy ins(%{{.+}} : memref<?x8xf32>) outs(%{{.+}} : memref<?x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[A:.+]], %{{.+}} : memref<?x8xf32>, memref<?x8xf32>) outs(%[[A]] : memref<?x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.copy ins(%{{.+}} : memref<?x4xf32, strided<[8, 1]>>) outs(%{{.+}} : memref<?x4xf32, strided<[8, 1], offset: 4>>)
// CHECK: return
func.func @inplace_disjoint(%x: memref<?x8xf32>, %r: memref<?x8xf32>) -> memref<?x8xf32> {
  %y = tx.unary relu %x : memref<?x8xf32> -> memref<?x8xf32>
  tx.binary_into add %y, %r into %y : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
  %s = tx.slice %y dim 1 offset 0 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1]>>
  %t = tx.slice %y dim 1 offset 4 size 4 : memref<?x8xf32> -> memref<?x4xf32, strided<[8, 1], offset: 4>>
  tx.copy %s into %t : memref<?x4xf32, strided<[8, 1]>>, memref<?x4xf32, strided<[8, 1], offset: 4>>
  return %y : memref<?x8xf32>
}

// -----

// Views: reinterpret_cast of the base buffer (sizes from the element count),
// memref.transpose, memref.subview; alias is the source itself.
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[X:.+]]: memref<?x16xf32>)
// CHECK: %[[BASE:.+]], %[[OFF:.+]], %[[SIZES:.+]]:2, %{{.+}}:2 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[N:.+]] = arith.muli %[[SIZES]]#0, %{{.+}} : index
// CHECK: %[[T:.+]] = arith.divui %[[N]], %{{.+}} : index
// CHECK: %[[V:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[T]], 4, 4], strides: [16, 4, 1] : memref<f32> to memref<?x4x4xf32>
// CHECK: %[[TR:.+]] = memref.transpose %[[V]] (d0, d1, d2) -> (d1, d0, d2) : memref<?x4x4xf32> to memref<4x?x4xf32, strided<[4, 16, 1]>>
// CHECK: %[[S:.+]] = memref.subview %[[V]][0, 0, 1] [%{{.+}}, 4, 2] [1, 1, 1] : memref<?x4x4xf32> to memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>
// CHECK: return %[[V]], %[[TR]], %[[S]], %[[V]]
func.func @views(%x: memref<?x16xf32>) -> (memref<?x4x4xf32>, memref<4x?x4xf32, strided<[4, 16, 1]>>, memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>, memref<?x4x4xf32>) {
  %v = tx.view %x : memref<?x16xf32> -> memref<?x4x4xf32>
  %t = tx.transpose %v [1, 0, 2] : memref<?x4x4xf32> -> memref<4x?x4xf32, strided<[4, 16, 1]>>
  %s = tx.slice %v dim 2 offset 1 size 2 : memref<?x4x4xf32> -> memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>
  %a = tx.alias %v : memref<?x4x4xf32>
  return %v, %t, %s, %a : memref<?x4x4xf32>, memref<4x?x4xf32, strided<[4, 16, 1]>>, memref<?x4x2xf32, strided<[16, 4, 1], offset: 1>>, memref<?x4x4xf32>
}

// -----

// A view of a strided slice keeps the source's offset and leading stride.
// CHECK-LABEL: func.func @strided_view
// CHECK: %[[S:.+]] = memref.subview
// CHECK: %[[BASE:.+]], %[[OFF:.+]], %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[S]]
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [8], sizes: [%[[SIZES]]#0, 2, 8], strides: [24, 8, 1] : memref<f32> to memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>
func.func @strided_view(%x: memref<?x24xf32>) -> memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>> {
  %s = tx.slice %x dim 1 offset 8 size 16 : memref<?x24xf32> -> memref<?x16xf32, strided<[24, 1], offset: 8>>
  %v = tx.view %s : memref<?x16xf32, strided<[24, 1], offset: 8>> -> memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>
  return %v : memref<?x2x8xf32, strided<[24, 8, 1], offset: 8>>
}

// -----

// Guards fold to constants, eq_none / ne_none included (nn.Linear does not
// override __eq__); the layer refs go away.
// CHECK-LABEL: func.func @guards
// CHECK-DAG: %[[TRUE:.+]] = arith.constant true
// CHECK-DAG: %[[FALSE:.+]] = arith.constant false
// CHECK-NOT: tx.
// CHECK: return %[[TRUE]], %[[FALSE]], %[[FALSE]]
module {
  tx.layer @q : 8 -> 8, f32
  tx.none_layer @v
  func.func @guards() -> (i1, i1, i1) {
    %q = tx.layer_ref @q
    %v = tx.layer_ref @v
    %a = tx.guard is_not_none %q
    %b = tx.guard ne_none %v
    %c = tx.guard eq_none %q
    return %a, %b, %c : i1, i1, i1
  }
}
