// Targets that cannot be produced fail before any lowering, naming what is
// missing.
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_60" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_80a" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_90a features=+ptx78" 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_90 features=ptx80" 2>&1 | FileCheck %s --check-prefix=FEATURE
// RUN: not tx-opt %s --tx-to-nvvm="format=cubin" 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not env PATH=/nonexistent tx-opt %s --tx-to-nvvm="format=bin cuda-toolkit=none" 2>&1 | FileCheck %s --check-prefix=NOPTXAS
// RUN: not env PATH=/nonexistent tx-opt %s --tx-to-nvvm="format=fatbin cuda-toolkit=none" 2>&1 | FileCheck %s --check-prefix=NOPTXAS-FATBIN
// RUN: not tx-opt %s --tx-to-nvvm="cuda-toolkit=%t.missing" 2>&1 | FileCheck %s --check-prefix=NOTDIR -DDIR=%t.missing
// RUN: not tx-opt %s --tx-to-nvvm="math=fast" 2>&1 | FileCheck %s --check-prefix=MATH
// RUN: not tx-opt %s --tx-to-nvvm="memory=managed" 2>&1 | FileCheck %s --check-prefix=MEMORY

// CHIP: error: tx-to-nvvm: chip 'sm_60' cannot be produced by LLVM 22 and CUDA 13 (known: sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a, sm_100, sm_100a,
// ARCH: error: tx-to-nvvm: chip 'sm_80a' cannot be produced by LLVM 22 and CUDA 13
// PTX: error: tx-to-nvvm: sm_90a needs PTX ISA +ptx80 .. +ptx90, got '+ptx78'
// FEATURE: error: tx-to-nvvm: features 'ptx80' is not a PTX ISA feature of the form +ptxNN
// FORMAT: error: tx-to-nvvm: format 'cubin' is not one of isa, bin, fatbin, llvm
// NOPTXAS: error: tx-to-nvvm: format=bin needs 'ptxas' from the CUDA Toolkit, not found on PATH nor in the toolkit (none found; set CUDA_HOME or cuda-toolkit=, or use format=isa)
// NOPTXAS-FATBIN: error: tx-to-nvvm: format=fatbin needs 'ptxas'
// NOTDIR: error: tx-to-nvvm: cuda-toolkit '[[DIR]]' is not a directory
// MATH: error: tx-to-nvvm: math 'fast' is not one of auto, libdevice, polynomial
// MEMORY: error: tx-to-nvvm: memory 'managed' is not device or host-mapped
// CHECK-NOT: gpu.binary
func.func @linear(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}

// A tensor-core mode the GEMM kernels do not know, and TF32 on a chip
// without TF32 tensor cores.
// RUN: not tx-opt %s --tx-to-nvvm="mma=wmma" 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_75 mma=tf32" 2>&1 | FileCheck %s --check-prefix=MMA75
// MMA: error: tx-gpu-tile-contractions: unknown mma mode 'wmma' (expected auto, tf32 or off)
// MMA75: error: tx-gpu-tile-contractions: mma=tf32 needs TF32 tensor cores (sm_80 or newer), not sm_75
