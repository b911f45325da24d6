// The PTX of the tiled GEMM: both tiles in shared memory, a barrier on each
// side of the K-slice accumulation, FMAs from shared-memory operands. The
// gpu.binary holds the PTX as an escaped string; sed turns it into lines.
// By default (split-K for small token counts) the results are added into
// the output with atomics; with split-k-blocks=0, stored.
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_80 block-tile=32,32,16 thread-tile=2,2 split-k-blocks=0" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s --check-prefix=SM80

// CHECK-LABEL: llvm.func @linear
// CHECK: gpu.launch_func {{.*}}@linear_kernel::@linear_kernel
// CHECK: gpu.binary @linear_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx78"{{.*}}>
// CHECK: .version 7.8
// CHECK: .target sm_90
// CHECK: .visible .entry linear_kernel(
// CHECK: .maxntid 16, 16, 1
// CHECK-DAG: .shared .align 16 .b8 [[AS:__wg_linear_kernel_0]][4096];
// CHECK-DAG: .shared .align 16 .b8 [[BS:__wg_linear_kernel_1]][4096];
// The K loop is rotated: staging (global loads, shared stores) closes it.
// CHECK: bar.sync 0;
// CHECK: ld.shared.b32
// CHECK-COUNT-256: fma.rn.f32
// CHECK: bar.sync 0;
// CHECK-DAG: ld.global.b32
// CHECK-DAG: st.shared.b32
// CHECK-DAG: atom.global.add.f32
// CHECK-NOT: st.global

// SM80: .target sm_80
// SM80: .maxntid 16, 16, 1
// SM80-DAG: .shared .align 16 .b8 __wg_linear_kernel_0[2048];
// SM80-DAG: .shared .align 16 .b8 __wg_linear_kernel_1[2048];
// SM80: bar.sync 0;
// SM80-COUNT-64: fma.rn.f32
// SM80: bar.sync 0;
// SM80: st.global.b32
// SM80-NOT: atom.global
func.func @linear(%x: memref<?x4096xf32>, %w: memref<6144x4096xf32>, %y: memref<?x6144xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xf32>, memref<6144x4096xf32>) outs(%y : memref<?x6144xf32>)
  return
}
