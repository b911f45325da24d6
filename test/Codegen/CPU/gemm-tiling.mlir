// The CPU GEMM tiling on its own: a loop over N cache blocks of the weight;
// per block, when the call has at least gemm-pack-min-tokens rows, BLIS's
// order: the weight's N block transposed once, then per block of
// gemm-token-block token rows (all rows with gemm-token-block=0) a loop over
// K blocks, each multiplying the rows' K block, read in place (no copy),
// with the wider packed register tile (the output rows stay in cache across
// the K blocks); else the direct GEMM, K blocks outside its register tiles; in
// both, the accumulator carried through the K loop in registers when
// AliasAnalysis proves nothing else in the loop touches it.
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize | FileCheck %s
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-pack-min-tokens=0 | FileCheck %s --check-prefix=NOPACK
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-token-block=0 | FileCheck %s --check-prefix=ONEBLOCK
// RUN: not tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-packed-tile=8,0,8 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=parallel-blocks=true | FileCheck %s --check-prefix=PAR

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
memref.global @weight : memref<512x1024xf32> = uninitialized

// A fresh output, a weight global, an input argument: all distinct, so the
// accumulator's read moves before the K loop and its write after it.
// CHECK-LABEL: func.func @fresh_output
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[C512:.+]] = arith.constant 512 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C1024:.+]] = arith.constant 1024 : index
// CHECK: %[[X:.+]] = memref.subview %arg0[0, 0]
// CHECK: %[[MANY:.+]] = arith.cmpi sge, %{{.+}}, %[[C32]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C512]] step %[[C256]]
// CHECK:     scf.if %[[MANY]] {
// CHECK:       %[[WT:.+]] = memref.alloc() : memref<1024x256xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for %[[M0:.+]] = %{{.+}} to %{{.+}} step %[[C128]]
// CHECK:         scf.for %[[K0:.+]] = %{{.+}} to %[[C1024]] step %[[C256]]
// CHECK-NEXT:      memref.subview %[[X]][%[[M0]], %[[K0]]]
// CHECK:       %[[PACC:.+]] = vector.transfer_read
// CHECK:       %[[PSUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C256]] step %c8 iter_args(%{{.+}} = %[[PACC]]) -> (vector<8x32xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         vector.fma
// CHECK:         scf.yield
// CHECK:       vector.transfer_write %[[PSUM]]
// CHECK:       memref.dealloc %[[WT]]
// CHECK:     } else {
// CHECK:       scf.for %{{.+}} = %{{.+}} to %[[C1024]] step %[[C256]]
// CHECK:       %[[ACC:.+]] = vector.transfer_read
// CHECK:       %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C256]] step %c8 iter_args(%{{.+}} = %[[ACC]]) -> (vector<8x8xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         vector.fma
// CHECK:         scf.yield
// CHECK:       vector.transfer_write %[[SUM]]
// ONEBLOCK-LABEL: func.func @fresh_output
// ONEBLOCK: memref.alloc() : memref<1024x256xf32>
// ONEBLOCK-NOT: step %c128
// ONEBLOCK: } else {
// NOPACK-LABEL: func.func @fresh_output
// NOPACK-NOT: scf.if
// NOPACK-NOT: memref.alloc()
// NOPACK: iter_args(%{{.+}} = %{{.+}}) -> (vector<8x8xf32>)
// BAD: error: gemm-packed-tile must be three positive sizes M,N,K
// BAD-NOT: see current operation
// With threads (parallel-blocks), a GEMM of fewer than 8 N blocks (here 2)
// is split on its token count: with many tokens, packed without a further
// check, its token blocks an scf.forall, each reading its rows in place
// (the weight block packed once, shared); with few, the direct
// GEMM, its N blocks an scf.forall.
// PAR-LABEL: func.func @fresh_output
// PAR: %[[MANY:.+]] = arith.cmpi sge, %{{.+}}, %c32
// PAR: scf.if %[[MANY]] {
// PAR-NOT: scf.if
// PAR:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c256
// PAR:       %[[WT:.+]] = memref.alloc() : memref<1024x256xf32>
// PAR:       scf.forall (%{{.+}}) = (0) to (%{{.+}}) step (128) {
// PAR-NOT:       memref.alloc
// PAR:         scf.for %{{.+}} = %{{.+}} to %c1024 step %c256
// PAR:       memref.dealloc %[[WT]]
// PAR: } else {
// PAR:   scf.forall (%{{.+}}) in (2) {
// PAR-NOT: memref.alloc
// PAR:   iter_args(%{{.+}} = %{{.+}}) -> (vector<8x8xf32>)
func.func @fresh_output(%x: memref<?x1024xf32>) -> memref<?x512xf32> {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x1024xf32>
  %w = memref.get_global @weight : memref<512x1024xf32>
  %y = memref.alloc(%m) : memref<?x512xf32>
  linalg.matmul indexing_maps = [#a, #w, #c] ins(%x, %w : memref<?x1024xf32>, memref<512x1024xf32>) outs(%y : memref<?x512xf32>)
  return %y : memref<?x512xf32>
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>

// The output is an argument, which may alias the other arguments: the
// accumulator is read and written in every K iteration.
// CHECK-LABEL: func.func @output_argument
// CHECK-NOT: iter_args
// CHECK: vector.transfer_write
// CHECK: return
func.func @output_argument(%x: memref<16x64xf32>, %w: memref<32x64xf32>, %y: memref<16x32xf32>) {
  linalg.matmul indexing_maps = [#a, #w, #c] ins(%x, %w : memref<16x64xf32>, memref<32x64xf32>) outs(%y : memref<16x32xf32>)
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#w = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
memref.global @wide : memref<2048x256xf32> = uninitialized

// 8 N blocks: with threads they are the tasks, packed or not; the token
// blocks of the packed GEMM stay a sequential loop.
// PAR-LABEL: func.func @many_n_blocks
// PAR: scf.forall (%{{.+}}) in (8) {
// PAR:   scf.if
// PAR:     memref.alloc() : memref<256x256xf32>
// PAR-NOT: scf.forall
// PAR:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c128
// PAR: return
func.func @many_n_blocks(%x: memref<?x256xf32>) -> memref<?x2048xf32> {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x256xf32>
  %w = memref.get_global @wide : memref<2048x256xf32>
  %y = memref.alloc(%m) : memref<?x2048xf32>
  linalg.matmul indexing_maps = [#a, #w, #c] ins(%x, %w : memref<?x256xf32>, memref<2048x256xf32>) outs(%y : memref<?x2048xf32>)
  return %y : memref<?x2048xf32>
}
