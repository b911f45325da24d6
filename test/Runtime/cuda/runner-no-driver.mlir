// The whole chain on a machine without a GPU: tx-to-nvvm, the JIT of
// mlir-runner, the embedded PTX loaded through this runtime at start-up.
// The missing driver is one clear message and exit status 1, not a crash.
// REQUIRES: cuda-runtime
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90" > %t.mlir
// RUN: env TX_LIBCUDA=/nonexistent/libcuda.so.1 not mlir-runner %t.mlir -e main -entry-point-result=void -shared-libs=%tx_lib_dir/libtx_cuda_runtime.so 2>&1 | FileCheck %s

// CHECK: tx cuda runtime: error: mgpuModuleLoadJIT: no CUDA driver: cannot load /nonexistent/libcuda.so.1
// CHECK-NOT: Stack dump
func.func @linear(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}

func.func @main() {
  %c8 = arith.constant 8 : index
  %x = memref.alloc(%c8) : memref<?x64xf32>
  %w = memref.alloc() : memref<96x64xf32>
  %y = memref.alloc(%c8) : memref<?x96xf32>
  call @linear(%x, %w, %y) : (memref<?x64xf32>, memref<96x64xf32>, memref<?x96xf32>) -> ()
  return
}
