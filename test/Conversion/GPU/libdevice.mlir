// Math functions in kernels become libdevice calls: linked from the toolkit
// (no extern left in the PTX), or, without a toolkit, a diagnostic at the
// kernel instead of PTX with an unresolved call.
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: not env PATH=/nonexistent tx-opt %s --tx-to-nvvm="chip=sm_90 cuda-toolkit=/nonexistent" 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: .visible .entry rms_kernel(
// CHECK-NOT: .extern .func
// CHECK: rsqrt.approx
// MISSING: error: tx-to-nvvm: kernels call libdevice's __nv_rsqrtf but libdevice (nvvm/libdevice/libdevice.10.bc) was not found in the CUDA Toolkit (set CUDA_HOME or cuda-toolkit=)
#map = affine_map<(d0) -> (d0)>
func.func @rms(%a: memref<?xf32>, %b: memref<?xf32>) {
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%b : memref<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.rsqrt %x : f32
    linalg.yield %r : f32
  }
  return
}
