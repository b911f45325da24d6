// tx-split-deallocs: one bufferization.dealloc per distinct allocation (the
// split buffer-deallocation-simplification makes with a quadratic number of
// alias queries), the retained values' conditions or-ed.
// RUN: tx-opt %s --split-input-file -pass-pipeline='builtin.module(func.func(tx-split-deallocs))' | FileCheck %s

// CHECK-LABEL: func.func @distinct
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: %[[D0:.*]] = bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[C]]) retain (%[[X]] : memref<4xf32>)
// CHECK: %[[D1:.*]] = bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[C]]) retain (%[[X]] : memref<4xf32>)
// CHECK: %[[OR:.*]] = arith.ori %[[D0]], %[[D1]]
// CHECK: return %[[OR]]
func.func @distinct(%x: memref<4xf32>, %c: i1) -> i1 {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %r = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%c, %c) retain (%x : memref<4xf32>)
  return %r : i1
}

// -----

// A view of an allocation in the same op: the two may be the same buffer
// (freed once), so they stay together; the other allocation splits off.
// CHECK-LABEL: func.func @view
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: %[[V:.*]] = memref.subview %[[A]]
// CHECK: bufferization.dealloc (%[[A]], %[[V]] : memref<4xf32>, memref<2xf32, strided<[1]>>)
// CHECK: bufferization.dealloc (%[[B]] : memref<4xf32>)
// CHECK-NOT: bufferization.dealloc
func.func @view(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  bufferization.dealloc (%a, %v, %b : memref<4xf32>, memref<2xf32, strided<[1]>>, memref<4xf32>) if (%c, %c, %c)
  return
}

// -----

// A memref of unknown origin (a select) may alias any of them: unchanged.
// CHECK-LABEL: func.func @unknown
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>, memref<4xf32>)
// CHECK-NOT: bufferization.dealloc
func.func @unknown(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %a, %b : memref<4xf32>
  bufferization.dealloc (%a, %b, %s : memref<4xf32>, memref<4xf32>, memref<4xf32>) if (%c, %c, %c)
  return
}
