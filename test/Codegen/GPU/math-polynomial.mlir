// Kernel math without a CUDA Toolkit: math=polynomial (and math=auto when no
// libdevice is found) replaces the math functions by MLIR's polynomial
// approximations and native PTX instructions, so the PTX is self-contained.
// math=libdevice without libdevice is a diagnostic at the kernel.
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 math=polynomial" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 cuda-toolkit=none" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: not tx-opt %s --tx-to-nvvm="chip=sm_90 math=libdevice cuda-toolkit=none" 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK-NOT: link = [
// CHECK: .visible .entry gelu_kernel(
// CHECK-NOT: .extern .func
// CHECK-NOT: {{^ *call}}
// The erf approximation: a rational polynomial evaluated with fma.
// CHECK: fma.rn.f32
// CHECK: .visible .entry rms_kernel(
// rsqrt is 1/sqrt, both correctly rounded (not rsqrt.approx).
// CHECK: sqrt.rn.f32
// CHECK: rcp.rn.f32
// CHECK-NOT: .extern .func
// CHECK-NOT: {{^ *call}}

// MISSING: error: tx-to-nvvm: kernels call libdevice's __nv_erff but libdevice (nvvm/libdevice/libdevice.10.bc) was not found in the CUDA Toolkit (set CUDA_HOME or cuda-toolkit=, or use math=polynomial)
#map = affine_map<(d0) -> (d0)>
func.func @gelu(%a: memref<?xf32>, %b: memref<?xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.erf %x : f32
    linalg.yield %e : f32
  }
  return
}
func.func @rms(%a: memref<?xf32>, %b: memref<?xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.rsqrt %x : f32
    linalg.yield %r : f32
  }
  return
}
