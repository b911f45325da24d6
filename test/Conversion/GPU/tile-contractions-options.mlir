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
