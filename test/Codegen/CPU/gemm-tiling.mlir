// The CPU GEMM tiling on its own: a loop over N cache blocks of the weight;
// per block, when the call has at least gemm-pack-min-tokens rows, BLIS's
// order: the weight's N block transposed once into panels of the packed
// tile's N (32) columns, each [K, 32] contiguous, then per block of
// gemm-token-block token rows (all rows with gemm-token-block=0) a loop over
// K blocks and, inside, over the panels, each multiplying the rows' K block,
// read in place (no copy), by the panel's K block with the wider packed
// register tile (the output rows stay in cache across the K blocks); else the few-token kernel, vectorised along K (one vector
// accumulator per output of a 4x4 tile over the whole K, summed by halves
// after the loop, then the rows left one at a time), or with
// gemm-few-token-tile=0,0,0 (and where the kernel does not apply) the direct
// GEMM, K blocks outside its register tiles; in the register tiles, the
// accumulator carried through the K loop in registers when AliasAnalysis
// proves nothing else in the loop touches it.
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize | FileCheck %s
// RUN: tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-few-token-tile=0,0,0 | FileCheck %s --check-prefix=DIRECT
// RUN: not tx-opt %s --split-input-file --tx-cpu-tile-and-vectorize=gemm-few-token-tile=4,4,12 2>&1 | FileCheck %s --check-prefix=BADFEW
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
// CHECK-DAG: %[[C112:.+]] = arith.constant 112 : index
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[C1024:.+]] = arith.constant 1024 : index
// CHECK: %[[X:.+]] = memref.subview %arg0[0, 0]
// CHECK: %[[MANY:.+]] = arith.cmpi sge, %{{.+}}, %[[C112]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[C512]] step %[[C256]]
// CHECK:     scf.if %[[MANY]] {
// CHECK:       %[[WT:.+]] = memref.alloc() : memref<8x1024x32xf32>
// CHECK-NOT:   memref.alloc
// CHECK:       scf.for %[[J:.+]] = %c0 to %c8 step %c1 {
// CHECK:         %[[ROWS:.+]] = memref.subview %{{.+}}[%{{.+}}, 0] [32, 1024] [1, 1]
// CHECK:         %[[PANEL:.+]] = memref.subview %[[WT]][%[[J]], 0, 0] [1, 1024, 32] [1, 1, 1] : memref<8x1024x32xf32> to memref<1024x32xf32, strided<[32, 1], offset: ?>>
// CHECK:         vector.transfer_read %{{.+}} : memref<8x8xf32, strided<[1024, 1], offset: ?>>, vector<8x8xf32>
// CHECK:         vector.transfer_write %{{.+}} : vector<8x8xf32>, memref<8x8xf32, strided<[32, 1], offset: ?>>
// CHECK:       scf.for %[[M0:.+]] = %{{.+}} to %{{.+}} step %[[C128]]
// CHECK:         scf.for %[[K0:.+]] = %{{.+}} to %[[C1024]] step %[[C256]]
// CHECK-NEXT:      memref.subview %[[X]][%[[M0]], %[[K0]]]
// CHECK-NEXT:      scf.for %[[P:.+]] = %c0 to %c8 step %c1 {
// CHECK:             memref.subview %[[WT]][%[[P]], %[[K0]], 0] [1, 256, 32] [1, 1, 1] : memref<8x1024x32xf32> to memref<256x32xf32, strided<[32, 1], offset: ?>>
// CHECK:       %[[PACC:.+]] = vector.transfer_read
// CHECK:       %[[PSUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C256]] step %c8 iter_args(%{{.+}} = %[[PACC]]) -> (vector<8x32xf32>)
// CHECK-NOT:     vector.transfer_write
// CHECK:         vector.fma
// CHECK:         scf.yield
// CHECK:       vector.transfer_write %[[PSUM]]
// CHECK:       memref.dealloc %[[WT]]
// CHECK:     } else {
// CHECK:       %[[REST:.+]] = arith.remui %{{.+}}, %c4
// CHECK:       %[[MAIN:.+]] = arith.subi %{{.+}}, %[[REST]]
// CHECK:       scf.for %[[N0:.+]] = %c0 to %[[C256]] step %c4 {
// CHECK:         scf.for %[[M0:.+]] = %c0 to %[[MAIN]] step %c4 {
// CHECK:           %[[SUMS:.+]]:16 = scf.for %[[K0:.+]] = %c0 to %[[C1024]] step %c16 iter_args(
// CHECK-NOT:         memref.store
// CHECK:             vector.load %{{.+}}[%[[N0]], %[[K0]]] {{.+}}, vector<16xf32>
// CHECK:             vector.load %{{.+}}[%[[M0]], %[[K0]]] {{.+}}, vector<16xf32>
// CHECK:             vector.fma {{.+}} : vector<16xf32>
// CHECK:             scf.yield
// CHECK:           %[[OLD:.+]] = memref.load %{{.+}}[%[[M0]], %[[N0]]]
// CHECK:           vector.extract_strided_slice %[[SUMS]]#0 {offsets = [0], sizes = [8]
// CHECK:           vector.extract_strided_slice %[[SUMS]]#0 {offsets = [8], sizes = [8]
// CHECK:           %[[SUM:.+]] = arith.addf %[[OLD]], %{{.+}} : f32
// CHECK:           memref.store %[[SUM]], %{{.+}}[%[[M0]], %[[N0]]]
// CHECK:         scf.for %{{.+}} = %[[MAIN]] to %{{.+}} step %c1 {
// CHECK:           scf.for %{{.+}} = %c0 to %[[C1024]] step %c16 iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// DIRECT-LABEL: func.func @fresh_output
// DIRECT:     } else {
// DIRECT:       scf.for %{{.+}} = %{{.+}} to %c1024 step %c256
// DIRECT:       %[[ACC:.+]] = vector.transfer_read
// DIRECT:       %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %c256 step %c8 iter_args(%{{.+}} = %[[ACC]]) -> (vector<8x8xf32>)
// DIRECT-NOT:     vector.transfer_write
// DIRECT:         vector.fma
// DIRECT:         scf.yield
// DIRECT:       vector.transfer_write %[[SUM]]
// BADFEW: error: gemm-few-token-tile: lanes must be a power of two, not 12
// ONEBLOCK-LABEL: func.func @fresh_output
// ONEBLOCK: memref.alloc() : memref<8x1024x32xf32>
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
// (the weight block packed once, shared); with few, the few-token kernel,
// its N blocks an scf.forall, over the whole K as without threads.
// PAR-LABEL: func.func @fresh_output
// PAR: %[[MANY:.+]] = arith.cmpi sge, %{{.+}}, %c112
// PAR: scf.if %[[MANY]] {
// PAR-NOT: scf.if
// PAR:   scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c256
// PAR:       %[[WT:.+]] = memref.alloc() : memref<8x1024x32xf32>
// PAR:       scf.forall (%{{.+}}) = (0) to (%{{.+}}) step (128) {
// PAR-NOT:       memref.alloc
// PAR:         scf.for %{{.+}} = %{{.+}} to %c1024 step %c256
// PAR:       memref.dealloc %[[WT]]
// PAR: } else {
// PAR:   scf.forall (%{{.+}}) in (2) {
// PAR-NOT: memref.alloc
// PAR:   scf.for %{{.+}} = %c0 to %c1024 step %c16 iter_args(
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
// few-token kernel (which writes the outputs after all reads) runs when
// the address ranges are apart at run time; else the register tiles, whose
// accumulator is read and written in every K iteration.
// CHECK-LABEL: func.func @output_argument
// CHECK-DAG: %[[Y:.+]] = memref.extract_aligned_pointer_as_index %arg2
// CHECK-DAG: %[[X:.+]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[APART:.+]] = arith.andi
// CHECK: scf.if %[[APART]] {
// CHECK: step %c16 iter_args(
// CHECK: } else {
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
// PAR:     memref.alloc() : memref<8x256x32xf32>
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
