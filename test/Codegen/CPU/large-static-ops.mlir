// Non-GEMM ops with large static shapes are tiled before vectorisation:
// one row and 64 columns at a time, reductions in pieces of 64 (a loop). Vectorised whole, a
// 2048x4096 add became one vector<2048x4096xf32> that the lowerings
// unrolled element by element (a decoder layer with static shapes took
// minutes to compile for the CPU; now well under a second).
// RUN: tx-opt %s --pass-pipeline='builtin.module(tx-to-linalg,canonicalize,tx-cpu-tile-and-vectorize)' | FileCheck %s
// The static Llama-7B-shaped layer (2048 tokens) lowers in seconds.
// RUN: timeout 120 tx-opt %S/../../Transforms/SequenceParallel/comm-volume.mlir -tx-to-cpu -o /dev/null
// Vectorised tiles compute what scalar loops do (static shapes, 2 seeds).
// RUN: tx-difftest --rewrite=canonicalize --reference-lowering='tx-to-cpu{vectorize=false}' %s | FileCheck %s --check-prefix=EXEC
// EXEC: tx-difftest: 1 modules, 2 runs: 2 matched ({{[0-9]+}} bit-exact), 0 mismatched, 0 errors

// CHECK-LABEL: func.func @forward
// CHECK-NOT: vector<64x4160
// CHECK: vector<1x64xf32>
// CHECK-NOT: {{vector<64x4160|vector<1x4160}}
// CHECK: scf.for
// CHECK: vector<1x64xf32>
// CHECK-NOT: {{vector<64x4160|vector<1x4160}}
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.param @w : memref<4160xf32>
  func.func @forward(%x: memref<64x4160xf32>, %r: memref<64x4160xf32>, %fs: f32) -> (memref<64x4160xf32>, memref<64x4160xf32>) {
    %s = tx.binary add %x, %r : memref<64x4160xf32>, memref<64x4160xf32> -> memref<64x4160xf32>
    %w = tx.get_param @w : memref<4160xf32>
    %n = tx.rmsnorm %s, %w eps 1.0e-06 : memref<64x4160xf32>, memref<4160xf32> -> memref<64x4160xf32>
    %a = tx.unary silu %n : memref<64x4160xf32> -> memref<64x4160xf32>
    return %s, %a : memref<64x4160xf32>, memref<64x4160xf32>
  }
}
