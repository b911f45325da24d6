// The PTX of the tensor-core GEMM kernels: 16-byte aligned shared tiles,
// ldmatrix fragment loads, mma.sync on f32 accumulators, for bf16 and f16
// (m16n8k16) and, with mma=tf32, f32 rounded to tf32 (m16n8k8).
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_80" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_80" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s --check-prefix=STAGE
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 mma=tf32" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s --check-prefix=TF32
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 mma=off" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s --check-prefix=OFF

// CHECK: .target sm_80
// CHECK: .visible .entry linear_bf16_kernel(
// CHECK: .maxntid 128, 1, 1
// CHECK-DAG: .shared .align 16 .b8 __wg_linear_bf16_kernel_0[5120];
// CHECK-DAG: .shared .align 16 .b8 __wg_linear_bf16_kernel_1[5120];
// CHECK: bar.sync 0;
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x2.shared.b16
// CHECK-COUNT-16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: bar.sync 0;
// Split-K (on by default): the partial sums are added into the output.
// CHECK: atom.global.add.f32
// CHECK: .visible .entry linear_f16_kernel(
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// The f32 GEMM keeps exact FMAs unless TF32 is asked for.
// CHECK: .visible .entry linear_f32_kernel(
// CHECK-NOT: mma.sync
// CHECK: fma.rn.f32

// 16-byte staging where K (4096) and the strides are multiples of 8
// elements, with the element-wise fallback for unaligned bases; K = 100
// (linear_f16) is staged element by element only.
// STAGE: .visible .entry linear_bf16_kernel(
// STAGE-DAG: ld.global.v4.b32
// STAGE-DAG: st.shared.v4.b32
// STAGE-DAG: st.shared.b16
// STAGE: .visible .entry linear_f16_kernel(
// STAGE-NOT: .v4.
// STAGE: .visible .entry linear_f32_kernel(

// TF32: .target sm_90
// TF32: .visible .entry linear_bf16_kernel(
// TF32: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// TF32: .visible .entry linear_f32_kernel(
// TF32-DAG: .shared .align 16 .b8 __wg_linear_f32_kernel_0[9216];
// TF32: cvt.rna.tf32.f32
// TF32: st.shared{{(.v4)?}}.b32
// TF32: bar.sync 0;
// TF32: ld.shared.b32
// TF32-COUNT-32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32

// OFF-NOT: mma.sync
// OFF-NOT: ldmatrix
func.func @linear_bf16(%x: memref<?x4096xbf16>, %w: memref<6144x4096xbf16>, %y: memref<?x6144xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<6144x4096xbf16>) outs(%y : memref<?x6144xf32>)
  return
}
func.func @linear_f16(%x: memref<?x100xf16>, %w: memref<77x100xf16>, %y: memref<?x77xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x100xf16>, memref<77x100xf16>) outs(%y : memref<?x77xf32>)
  return
}
func.func @linear_f32(%x: memref<?x64xf32>, %w: memref<96x64xf32>, %y: memref<?x96xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x64xf32>, memref<96x64xf32>) outs(%y : memref<?x96xf32>)
  return
}
