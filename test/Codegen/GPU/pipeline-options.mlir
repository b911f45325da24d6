// tx-to-nvvm's options are its own (chip, format, memory, ...) and those of
// tx-gpu-tile-contractions and tx-gpu-device-buffers (GPUPasses.td) under
// the passes' own names, parsed by each pass: an option added to one of
// them is one of the pipeline. The pipeline gives the GEMM pass its chip
// and split-k-blocks=256 unless told otherwise.

// RUN: tx-opt %s --tx-to-nvvm --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: tx-gpu-tile-contractions{{{.*}}chip=sm_90 mma=auto {{.*}}remarks=false split-k-blocks=256
// DEFAULT: tx-gpu-device-buffers{test-upload-weights-per-call=false}

// RUN: tx-opt %s --tx-to-nvvm='chip=sm_80 block-tile=32,32,16 thread-tile=2,2 mma=off split-k-blocks=0 test-upload-weights-per-call=true' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORWARD
// FORWARD: tx-gpu-check-target{chip=sm_80
// FORWARD: tx-gpu-tile-contractions{block-tile={32,32,16} chip=sm_80 mma=off {{.*}}split-k-blocks=0 {{.*}}thread-tile={2,2}}
// FORWARD: tx-gpu-device-buffers{test-upload-weights-per-call=true}

// A forwarded option reaches its pass: `remarks` names the kernel each GEMM
// gets, with the pipeline's split-K (the decode GEMM below has 1x2 output
// tiles) or without.
// RUN: tx-opt %s --tx-to-nvvm='remarks cuda-toolkit=none' -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: SIMT kernel ({{.*}}): block 64x64x16, 256 threads of 4x4, split-K towards 256 blocks
// RUN: tx-opt %s --tx-to-nvvm='remarks split-k-blocks=0 block-tile=32,32,16 cuda-toolkit=none' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSPLIT
// NOSPLIT: remark: SIMT kernel ({{.*}}): block 32x32x16, 64 threads of 4x4{{$}}

// An option of none of them, and a bad value, are errors naming the
// pipeline.
// RUN: not tx-opt %s --tx-to-nvvm='bogus=1' -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tx-to-nvvm has no option 'bogus' (its options are its own and those of tx-gpu-tile-contractions, tx-gpu-device-buffers)
// RUN: not tx-opt %s --tx-to-nvvm='split-k-blocks=many' -o /dev/null 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: for the --split-k-blocks option: 'many' value invalid
// VALUE: error: tx-to-nvvm: bad value in 'split-k-blocks=many', an option of tx-gpu-tile-contractions
// The old spellings are gone.
// RUN: not tx-opt %s --tx-to-nvvm='gemm-mma=off' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OLD
// OLD: error: tx-to-nvvm has no option 'gemm-mma'

func.func @decode(%x: memref<4x64xf32>, %w: memref<96x64xf32>, %y: memref<4x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<4x64xf32>, memref<96x64xf32>) outs(%y : memref<4x96xf32>)
  return
}
