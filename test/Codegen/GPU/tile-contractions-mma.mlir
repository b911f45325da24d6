// The tensor-core kernel of tx-gpu-tile-contractions (mma=auto, sm_80+):
// f16/bf16 operands with an f32 accumulator go to warp-level mma.sync;
// f32 GEMMs only with mma=tf32; everything else keeps the SIMT kernel.
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions -canonicalize -cse | FileCheck %s
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="mma=tf32" -canonicalize -cse | FileCheck %s --check-prefix=TF32
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="chip=sm_75" -canonicalize -cse | FileCheck %s --check-prefix=SM75
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="mma=off" -canonicalize -cse | FileCheck %s --check-prefix=OFF
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="mma-block-tile=128,64,32 mma-warp-tile=64,32" -canonicalize -cse | FileCheck %s --check-prefix=TILE

// y[T,96] += x[T,64] * W[96,64]^T in bf16 with f32 accumulation (the GEMM
// of a bf16 tx.linear): 64x64 block tiles, 4 warps (128 threads) of 32x32,
// K-contiguous [64][32+8] bf16 tiles in shared memory, per 16-deep step two
// ldmatrix.x4 (A, rows 0-15 and 16-31 of the warp) and four ldmatrix.x2
// (B, 8 columns each), and 2 x 4 mma.sync m16n8k16 on 32 f32 accumulators.
// CHECK-LABEL: func.func @linear_bf16
// CHECK-SAME: (%[[X:.+]]: memref<?x64xbf16>, %[[W:.+]]: memref<96x64xbf16>, %[[Y:.+]]: memref<?x96xf32>)
// CHECK: %[[T:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[GY:.+]] = arith.ceildivui %[[T]], %c64
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c2, %{{.+}} = %[[GY]], %{{.+}} = %c1) threads(%[[TID:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}} = %c1, %{{.+}} = %c1) workgroup(%[[AS:.+]] : memref<64x40xbf16, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<64x40xbf16, #gpu.address_space<workgroup>>)
// Lane, its group (lane / 4) and thread-in-group (lane % 4), the warp.
// CHECK: %[[LANE:.+]] = arith.remui %[[TID]], %c32
// CHECK: arith.divui %[[LANE]], %c4
// CHECK: arith.remui %[[LANE]], %c4
// CHECK: arith.divui %[[TID]], %c32
// CHECK-COUNT-32: memref.load %[[Y]]
// Both operands can be staged with 16-byte vectors (K-contiguous rows,
// K = 64); whether their bases are 16-byte aligned is tested once, and the
// element-by-element staging is the fallback.
// CHECK: %[[XP:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[WP:.+]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %{{.+}}:32 = scf.for %{{.+}} = %c0 to %c2 step %c1 iter_args(
// CHECK: scf.if %{{.+}} {
// CHECK: vector.load %[[X]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<?x64xbf16>, vector<8xbf16>
// CHECK-COUNT-2: vector.store %{{.+}}, %[[AS]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<64x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: } else {
// CHECK-COUNT-16: memref.store %{{.+}}, %[[AS]][%{{.+}}, %{{.+}}] : memref<64x40xbf16
// CHECK: scf.if %{{.+}} {
// CHECK: vector.load %[[W]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<96x64xbf16>, vector<8xbf16>
// CHECK-COUNT-2: vector.store %{{.+}}, %[[BS]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<64x40xbf16, #gpu.address_space<workgroup>>, vector<8xbf16>
// CHECK: } else {
// CHECK-COUNT-16: memref.store %{{.+}}, %[[BS]][%{{.+}}, %{{.+}}] : memref<64x40xbf16
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[AS]][%{{.+}}, %{{.+}}] {numTiles = 4 : i32, transpose = false} : memref<64x40xbf16, #gpu.address_space<workgroup>> -> vector<4x2xbf16>
// CHECK: vector.bitcast %{{.+}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvgpu.ldmatrix %[[BS]][%{{.+}}, %{{.+}}] {numTiles = 2 : i32, transpose = false} : memref<64x40xbf16, #gpu.address_space<workgroup>> -> vector<2x2xbf16>
// CHECK-COUNT-8: nvvm.mma.sync A[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]  B[%{{.+}}, %{{.+}}]  C[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: nvgpu.ldmatrix %[[AS]]
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.barrier
// CHECK-NEXT: scf.yield
// CHECK-COUNT-32: memref.store %{{.+}}, %[[Y]]
// CHECK: gpu.terminator
// CHECK-NOT: linalg.matmul

// TF32-LABEL: func.func @linear_bf16
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// SM75-LABEL: func.func @linear_bf16
// SM75-NOT: nvvm.mma.sync
// SM75: arith.extf %{{.+}} : bf16 to f32
// SM75: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// OFF-LABEL: func.func @linear_bf16
// OFF-NOT: nvvm.mma.sync
// OFF: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// 2 x 2 warps of 64x32 (128 threads) on a 128x64 tile: 4 x 4 fragments per warp.
// TILE-LABEL: func.func @linear_bf16
// TILE: threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}} = %c1, %{{.+}} = %c1) workgroup(%{{.+}} : memref<128x40xbf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<64x40xbf16, #gpu.address_space<workgroup>>)
// TILE: %{{.+}}:64 = scf.for
// TILE-COUNT-16: nvvm.mma.sync
// TILE: nvgpu.ldmatrix
// TILE-COUNT-16: nvvm.mma.sync
// TILE-NOT: nvvm.mma.sync
// TILE: gpu.barrier
// TILE-NEXT: scf.yield
func.func @linear_bf16(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xbf16>, memref<96x64xbf16>) outs(%y : memref<?x96xf32>)
  return
}

// -----

// Batched f16 with B as [batch][k][n] (n innermost): the batch goes to grid
// z; B is staged with consecutive threads on consecutive n (coalesced) into
// the same [n][k] shared layout, so ldmatrix needs no transpose. f16 pairs
// are mma.sync operands as they are.
// CHECK-LABEL: func.func @batch_f16
// CHECK-SAME: (%[[A:.+]]: memref<4x?x32xf16>, %[[B:.+]]: memref<4x32x48xf16>, %[[C:.+]]: memref<4x?x48xf32>)
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %[[BZ:.+]]) in (%{{.+}} = %c1, %{{.+}} = %{{.+}}, %{{.+}} = %c4) threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128, %{{.+}} = %c1, %{{.+}} = %c1) workgroup(%[[AS:.+]] : memref<64x40xf16, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<64x40xf16, #gpu.address_space<workgroup>>)
// A's batch stride is dynamic and B is not K-contiguous: no 16-byte staging.
// CHECK-NOT: vector.load
// CHECK: memref.load %[[C]][%[[BZ]],
// CHECK-NOT: vector.load
// CHECK: memref.subview %[[A]][%[[BZ]],
// CHECK: memref.subview %[[B]][%[[BZ]],
// CHECK: nvgpu.ldmatrix %[[AS]]{{.*}} -> vector<4x2xf16>
// CHECK-NOT: vector.bitcast
// CHECK: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: memref.store %{{.+}}, %[[C]][%[[BZ]],
func.func @batch_f16(%a: memref<4x?x32xf16>, %b: memref<4x32x48xf16>, %c: memref<4x?x48xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x?x32xf16>, memref<4x32x48xf16>) outs(%c : memref<4x?x48xf32>)
  return
}

// -----

// f32: exact FMAs by default; with mma=tf32 the staged tiles hold tf32 bit
// patterns (cvt.rna once per element) read by scalar fragment loads, and
// the step is m16n8k8.
// CHECK-LABEL: func.func @linear_f32
// CHECK-NOT: nvvm.mma.sync
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// TF32-LABEL: func.func @linear_f32
// TF32: workgroup(%[[AS:.+]] : memref<64x36xi32, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<64x36xi32, #gpu.address_space<workgroup>>)
// TF32: nvvm.convert.float.to.tf32 %{{.+}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: %[[V:.+]] = vector.from_elements %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : vector<4xi32>
// TF32: vector.store %[[V]], %[[AS]][%{{.+}}, %{{.+}}] {alignment = 16 : i64} : memref<64x36xi32, #gpu.address_space<workgroup>>, vector<4xi32>
// The element-wise fallback converts each element the same way.
// TF32: nvvm.convert.float.to.tf32
// TF32: memref.store %{{.+}}, %[[AS]][%{{.+}}, %{{.+}}] : memref<64x36xi32
// TF32: gpu.barrier
// TF32-NOT: nvgpu.ldmatrix
// TF32: memref.load %[[AS]]
// TF32: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>{{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 8>
func.func @linear_f32(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}

// -----

// Not what mma.sync computes: a scaled product, and a bf16 accumulator
// (linalg would round every partial sum to bf16). Both keep the SIMT
// kernel with the op's own body.
// CHECK-LABEL: func.func @scaled
// CHECK-NOT: nvvm.mma.sync
// CHECK: arith.mulf %{{.+}}, %cst{{.*}} : f32
// CHECK-LABEL: func.func @bf16_accumulator
// CHECK-NOT: nvvm.mma.sync
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : bf16
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @scaled(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xf32>) {
  %s = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16>, memref<96x64xbf16>) outs(%y : memref<?x96xf32>) {
  ^bb0(%p: bf16, %q: bf16, %acc: f32):
    %pe = arith.extf %p : bf16 to f32
    %qe = arith.extf %q : bf16 to f32
    %m = arith.mulf %pe, %qe : f32
    %ms = arith.mulf %m, %s : f32
    %r = arith.addf %acc, %ms : f32
    linalg.yield %r : f32
  }
  return
}
func.func @bf16_accumulator(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xbf16>) {
  linalg.matmul indexing_maps = [#a, #b, #c]
    ins(%x, %w : memref<?x64xbf16>, memref<96x64xbf16>) outs(%y : memref<?x96xbf16>)
  return
}

// -----

// Split-K (split-k-blocks=256): a decode-shaped GEMM (its output tiles
// give ceil(T/64) x 2 blocks) spreads its K tiles over more blocks: the
// host computes the split from the shapes, grid z is the number of splits,
// each block runs its own K range, starts from zero and adds its partial
// sums into Y with atomics (Y is not read).
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="split-k-blocks=256" -canonicalize -cse | FileCheck %s --check-prefix=SPLIT
// SPLIT-LABEL: func.func @split_bf16
// SPLIT-SAME: (%[[X:.+]]: memref<?x4096xbf16>, %[[W:.+]]: memref<128x4096xbf16>, %[[Y:.+]]: memref<?x128xf32>)
// SPLIT: %[[GY:.+]] = arith.ceildivui %{{.+}}, %c64
// SPLIT: %[[TILES:.+]] = arith.muli %[[GY]], %c2
// SPLIT: %[[T1:.+]] = arith.maxui %[[TILES]], %c1
// SPLIT: %[[WANT:.+]] = arith.ceildivui %c256, %[[T1]]
// SPLIT: %[[W2:.+]] = arith.minui %[[WANT]], %c128
// SPLIT: %[[PER:.+]] = arith.ceildivui %c128, %[[W2]]
// SPLIT: %[[SPLITS:.+]] = arith.ceildivui %c128, %[[PER]]
// SPLIT: gpu.launch blocks(%{{.+}}, %{{.+}}, %[[BZ:.+]]) in (%{{.+}} = %c2, %{{.+}} = %[[GY]], %{{.+}} = %[[SPLITS]])
// SPLIT: %[[SPLIT:.+]] = arith.remui %[[BZ]], %[[SPLITS]]
// SPLIT: %[[KB:.+]] = arith.muli %[[SPLIT]], %[[PER]]
// SPLIT: %[[KE0:.+]] = arith.addi %[[KB]], %[[PER]]
// SPLIT: %[[KE:.+]] = arith.minui %[[KE0]], %c128
// SPLIT-NOT: memref.load %[[Y]]
// SPLIT: scf.for %{{.+}} = %[[KB]] to %[[KE]] step %c1 iter_args(%{{.+}} = %cst{{.*}}, %{{.+}} = %cst
// SPLIT: nvvm.mma.sync
// SPLIT-COUNT-32: memref.atomic_rmw addf %{{.+}}, %[[Y]][%{{.+}}, %{{.+}}] : (f32, memref<?x128xf32>) -> f32
// SPLIT-NOT: memref.store %{{.+}}, %[[Y]]
// The SIMT kernel splits the same way.
// SPLIT-LABEL: func.func @split_f32
// SPLIT: gpu.launch
// SPLIT-NOT: memref.load %{{.+}} : memref<?x128xf32>
// SPLIT: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// SPLIT-COUNT-16: memref.atomic_rmw addf
// Not additive into f32: a bf16 output (atomics would round every partial
// sum) keeps one block per tile, reading and storing C.
// SPLIT-LABEL: func.func @split_bf16_output
// SPLIT-NOT: memref.atomic_rmw
// SPLIT: memref.store
func.func @split_bf16(%x: memref<?x4096xbf16>, %w: memref<128x4096xbf16>, %y: memref<?x128xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<128x4096xbf16>) outs(%y : memref<?x128xf32>)
  return
}
func.func @split_f32(%x: memref<?x4096xf32>, %w: memref<128x4096xf32>, %y: memref<?x128xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xf32>, memref<128x4096xf32>) outs(%y : memref<?x128xf32>)
  return
}
func.func @split_bf16_output(%x: memref<?x4096xbf16>, %w: memref<128x4096xbf16>, %y: memref<?x128xbf16>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<128x4096xbf16>) outs(%y : memref<?x128xbf16>)
  return
}

// -----

// remarks=true names the kernel each contraction got, and why not tensor
// cores.
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="remarks=true split-k-blocks=256" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: tx-opt %s -split-input-file -tx-gpu-tile-contractions="remarks=true chip=sm_75" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK75
// REMARK: tile-contractions-mma.mlir:[[@LINE+6]]:3: remark: tensor cores: mma.sync m16n8k16 bf16, block 64x64x32, 4 warps of 32x32, split-K towards 256 blocks
// REMARK: tile-contractions-mma.mlir:[[@LINE+10]]:3: remark: SIMT kernel (f32 operands; mma=tf32 allows TF32 tensor cores): block 64x64x16, 256 threads of 4x4, split-K towards 256 blocks
// REMARK: tile-contractions-mma.mlir:[[@LINE+14]]:3: remark: SIMT kernel (the accumulator is not f32): block 64x64x16, 256 threads of 4x4{{$}}
// REMARK75: remark: SIMT kernel (sm_75 has no mma.sync m16n8k16)
// REMARK75: remark: SIMT kernel (sm_75 has no mma.sync m16n8k16)
func.func @remark_bf16(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xbf16>, memref<96x64xbf16>) outs(%y : memref<?x96xf32>)
  return
}
func.func @remark_f32(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}
func.func @remark_bf16_out(%x: memref<?x64xbf16>, %w: memref<96x64xbf16>, %y: memref<?x96xbf16>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xbf16>, memref<96x64xbf16>) outs(%y : memref<?x96xbf16>)
  return
}
