// Tile sizes that cannot work are rejected with the reason.
// RUN: tx-opt %s -tx-gpu-tile-contractions="block-tile=32,32,8 thread-tile=2,4" -canonicalize | FileCheck %s --check-prefix=CUSTOM
// RUN: not tx-opt %s -tx-gpu-tile-contractions="block-tile=64,64" 2>&1 | FileCheck %s --check-prefix=ARITY
// RUN: not tx-opt %s -tx-gpu-tile-contractions="block-tile=64,64,16 thread-tile=3,4" 2>&1 | FileCheck %s --check-prefix=DIVIDE
// RUN: not tx-opt %s -tx-gpu-tile-contractions="block-tile=128,128,16 thread-tile=2,2" 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not tx-opt %s -tx-gpu-tile-contractions="block-tile=256,256,32 thread-tile=16,16" 2>&1 | FileCheck %s --check-prefix=SHARED

// CUSTOM: gpu.launch blocks({{.*}}) threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c8, %{{.+}} = %c16, %{{.+}} = %c1) workgroup(%{{.+}} : memref<8x32xf32, #gpu.address_space<workgroup>>, %{{.+}} : memref<8x32xf32, #gpu.address_space<workgroup>>)
// ARITY: error: tx-gpu-tile-contractions: block-tile takes three sizes BM,BN,BK
// DIVIDE: error: tx-gpu-tile-contractions: tile sizes must be positive with RM dividing BM and RN dividing BN (got block 64x64x16, thread 3x4)
// THREADS: error: tx-gpu-tile-contractions: 4096 threads per block exceed the CUDA limit of 1024
// SHARED: error: tx-gpu-tile-contractions: the A and B tiles need 65536 bytes of shared memory, over the 49152 a block gets without opt-in
func.func @linear(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}

// The tensor-core options: mode, chip, and tile shapes mma.sync can use.
// RUN: not tx-opt %s -tx-gpu-tile-contractions="mma=wmma" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not tx-opt %s -tx-gpu-tile-contractions="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not tx-opt %s -tx-gpu-tile-contractions="chip=sm_75 mma=tf32" 2>&1 | FileCheck %s --check-prefix=TF32CHIP
// RUN: not tx-opt %s -tx-gpu-tile-contractions="mma-block-tile=64,64,24" 2>&1 | FileCheck %s --check-prefix=MMATILE
// RUN: not tx-opt %s -tx-gpu-tile-contractions="mma-warp-tile=32" 2>&1 | FileCheck %s --check-prefix=MMAARITY
// RUN: not tx-opt %s -tx-gpu-tile-contractions="mma-block-tile=512,512,16 mma-warp-tile=16,8" 2>&1 | FileCheck %s --check-prefix=WARPS
// MODE: error: tx-gpu-tile-contractions: unknown mma mode 'wmma' (expected auto, tf32 or off)
// CHIP: error: tx-gpu-tile-contractions: unknown chip 'gfx90a' (expected sm_NN)
// TF32CHIP: error: tx-gpu-tile-contractions: mma=tf32 needs TF32 tensor cores (sm_80 or newer), not sm_75
// MMATILE: error: tx-gpu-tile-contractions: tensor-core tiles need WM a multiple of 16, WN of 8, BK of 16, and warp tiles dividing the block tile (got block 64x64x24, warp 32x32)
// MMAARITY: error: tx-gpu-tile-contractions: mma-warp-tile takes two sizes WM,WN
// WARPS: error: tx-gpu-tile-contractions: 65536 threads per block exceed the CUDA limit of 1024
// RUN: not tx-opt %s -tx-gpu-tile-contractions="split-k-blocks=-1" 2>&1 | FileCheck %s --check-prefix=SPLITK
// SPLITK: error: tx-gpu-tile-contractions: split-k-blocks must be 0 (off) or positive, got -1
