// The CPU GEMM tiling on its own: cache blocks of the weight (loops over N
// then K blocks, outside the token loop); per block, when the call has at
// least gemm-pack-min-tokens rows, the operands packed (weight block
// transposed, token rows copied) and the wider packed register tile, else
// the direct GEMM; packed, the weight block once and the token rows per
// block of gemm-token-block rows (all rows with gemm-token-block=0); in both, the accumulator carried through the K loop in
// registers when AliasAnalysis proves nothing else in the loop touches it.
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize | FileCheck %s
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-pack-min-tokens=0 | FileCheck %s --check-prefix=NOPACK
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-token-block=0 | FileCheck %s --check-prefix=ONEBLOCK
// RUN: not tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-packed-tile=8,0,8 2>&1 | FileCheck %s --check-prefix=BAD

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
// CHECK: %[[MANY:.+]] = arith.cmpi sge, %{{.+}}, %[[C32]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C512]] step %[[C256]]
// CHECK:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C256]]
// CHECK:     scf.if %[[MANY]] {
// CHECK:       %[[WT:.+]] = memref.alloc() : memref<256x256xf32>
// CHECK:       %[[AP:.+]] = memref.alloc() : memref<128x256xf32>
// CHECK:       scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C128]]
// CHECK:       %[[PACC:.+]] = vector.transfer_read
// CHECK:       %[[PSUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C256]] step %c8 iter_args(%{{.+}} = %[[PACC]]) -> (vector<8x32xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         vector.fma
// CHECK:         scf.yield
// CHECK:       vector.transfer_write %[[PSUM]]
// CHECK:       memref.dealloc %[[AP]]
// CHECK:       memref.dealloc %[[WT]]
// CHECK:     } else {
// CHECK:       %[[ACC:.+]] = vector.transfer_read
// CHECK:       %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C256]] step %c8 iter_args(%{{.+}} = %[[ACC]]) -> (vector<8x8xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         vector.fma
// CHECK:         scf.yield
// CHECK:       vector.transfer_write %[[SUM]]
// ONEBLOCK-LABEL: func.func @fresh_output
// ONEBLOCK: memref.alloc() : memref<256x256xf32>
// ONEBLOCK: memref.alloc(%{{.+}}) : memref<?x256xf32>
// ONEBLOCK-NOT: step %c128
// ONEBLOCK: } else {
// NOPACK-LABEL: func.func @fresh_output
// NOPACK-NOT: scf.if
// NOPACK-NOT: memref.alloc()
// NOPACK: iter_args(%{{.+}} = %{{.+}}) -> (vector<8x8xf32>)
// BAD: error: gemm-packed-tile must be three positive sizes M,N,K
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
