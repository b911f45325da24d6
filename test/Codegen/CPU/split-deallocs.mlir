// tx-split-deallocs: one bufferization.dealloc per distinct allocation (the
// split buffer-deallocation-simplification makes with a quadratic number of
// alias queries), the retained values' conditions or-ed; a retained value
// of another known buffer dropped from a piece (it cannot be its memref).
// RUN: tx-opt %s --split-input-file -pass-pipeline='builtin.module(tx-split-deallocs)' | FileCheck %s

// CHECK-LABEL: func.func @distinct
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[C:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: %[[S:.*]] = arith.select
// CHECK: %[[D0:.*]]:2 = bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[C]]) retain (%[[S]], %[[A]] : memref<4xf32>, memref<4xf32>)
// CHECK: %[[D1:.*]] = bufferization.dealloc (%[[B]] : memref<4xf32>) if (%[[C]]) retain (%[[S]] : memref<4xf32>)
// CHECK: %[[OR:.*]] = arith.ori %[[D0]]#0, %[[D1]]
// CHECK: %[[F:.*]] = arith.constant false
// CHECK: return %[[OR]], %[[D0]]#1, %[[F]]
func.func @distinct(%x: memref<4xf32>, %c: i1) -> (i1, i1, i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %s = arith.select %c, %x, %a : memref<4xf32>
  %r:3 = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%c, %c) retain (%s, %a, %x : memref<4xf32>, memref<4xf32>, memref<4xf32>)
  return %r#0, %r#1, %r#2 : i1, i1, i1
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

// -----

// Results of calls whose callee returns a fresh allocation are buffers of
// their own (through the base buffer of their metadata): split, and the
// retained result of another call dropped. A callee returning its argument,
// or one allocation twice, gives no such buffer: unchanged.
// CHECK-LABEL: func.func @calls
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[C:.*]]: i1)
// CHECK: %[[R0:.*]] = call @fresh(%[[X]])
// CHECK: %[[R1:.*]] = call @fresh(%[[R0]])
// CHECK: %[[B0:[^,]*]], %{{.*}} = memref.extract_strided_metadata %[[R0]]
// CHECK: {{^ *}}bufferization.dealloc (%[[B0]] : memref<f32>) if (%[[C]]){{$}}
// CHECK: %[[D1:.*]] = bufferization.dealloc (%[[R1]] : memref<?xf32>) if (%[[C]]) retain (%[[R1]] : memref<?xf32>)
// CHECK: return %[[R1]], %[[D1]]
func.func @calls(%x: memref<?xf32>, %c: i1) -> (memref<?xf32>, i1) {
  %r0 = call @fresh(%x) : (memref<?xf32>) -> memref<?xf32>
  %r1 = call @fresh(%r0) : (memref<?xf32>) -> memref<?xf32>
  %base, %off, %size, %stride = memref.extract_strided_metadata %r0 : memref<?xf32> -> memref<f32>, index, index, index
  %d = bufferization.dealloc (%base, %r1 : memref<f32>, memref<?xf32>) if (%c, %c) retain (%r1 : memref<?xf32>)
  return %r1, %d : memref<?xf32>, i1
}
func.func private @fresh(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  return %a : memref<?xf32>
}

// CHECK-LABEL: func.func @not_fresh
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>)
// CHECK-NOT: bufferization.dealloc
func.func @not_fresh(%x: memref<?xf32>, %c: i1) {
  %r = call @identity(%x) : (memref<?xf32>) -> memref<?xf32>
  %t:2 = call @twice(%x) : (memref<?xf32>) -> (memref<?xf32>, memref<?xf32>)
  %c0 = arith.constant 0 : index
  %a = memref.alloc(%c0) : memref<?xf32>
  bufferization.dealloc (%r, %t#0, %t#1, %a : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) if (%c, %c, %c, %c)
  return
}
func.func private @identity(%x: memref<?xf32>) -> memref<?xf32> {
  return %x : memref<?xf32>
}
func.func private @twice(%x: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %a = memref.alloc(%n) : memref<?xf32>
  return %a, %a : memref<?xf32>, memref<?xf32>
}
