// tx-to-cpu's options are its own (threads, vectorize, ...) and those of
// tx-cpu-tile-and-vectorize (CPUPasses.td), which it hands to that pass as
// written: an option added to the pass is one of the pipeline.

// RUN: tx-opt %s --pass-pipeline='builtin.module(tx-to-cpu{threads=2 gemm-tile=4,4,4 gemm-token-block=0})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORWARD
// FORWARD: tx-cpu-tile-and-vectorize{{{.*}}gemm-tile={4,4,4} gemm-token-block=0 parallel-blocks=true
// FORWARD: async-parallel-for{{.*}}num-workers=2

// One thread: the N cache blocks are a plain loop.
// RUN: tx-opt %s --pass-pipeline='builtin.module(tx-to-cpu{gemm-packed-tile=4,16,8})' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=SERIAL
// SERIAL: tx-cpu-tile-and-vectorize{{{.*}}gemm-packed-tile={4,16,8}{{.*}}parallel-blocks=false
// SERIAL-NOT: async-parallel-for

// Blocks made parallel by hand with one thread run as loops (no crash in the
// scf.forall lowering), with the numbers of the scalar lowering.
// RUN: tx-opt %s --pass-pipeline='builtin.module(tx-to-cpu{parallel-blocks=true})' | FileCheck %s --check-prefix=LOWERED
// LOWERED: llvm.func @forward
// LOWERED-NOT: scf.forall
// RUN: tx-difftest --rewrite=canonicalize --lowering='tx-to-cpu{parallel-blocks=true gemm-pack-min-tokens=1}' --reference-lowering='tx-to-cpu{vectorize=false}' --tokens=5 %s | FileCheck %s --check-prefix=SAME
// SAME: 0 mismatched, 0 errors

// An option of neither is an error naming it.
// RUN: not tx-opt %s --pass-pipeline='builtin.module(tx-to-cpu{threads=2 no-such-option=1})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: tx-to-cpu has no option 'no-such-option' (its options are its own and those of tx-cpu-tile-and-vectorize)
// UNKNOWN: failed to add `tx-to-cpu` with options `threads=2 no-such-option=1`

module {
  tx.layer @proj : 512 -> 512, f32
  func.func @forward(%x: memref<?x512xf32>) -> memref<?x512xf32> {
    %y = tx.linear @proj(%x) : memref<?x512xf32> -> memref<?x512xf32>
    return %y : memref<?x512xf32>
  }
}
