// With math=libdevice, math functions in kernels become libdevice calls,
// linked from the toolkit: no extern is left in the PTX. (Without libdevice:
// math-polynomial.mlir.)
// REQUIRES: libdevice
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 math=libdevice" | sed -e 's/\\0A/\n/g' -e 's/\\09/ /g' | FileCheck %s
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90" | FileCheck %s --check-prefix=AUTO

// CHECK: link = [{{.*}}libdevice.10.bc"]
// CHECK: .visible .entry rms_kernel(
// CHECK-NOT: .extern .func
// CHECK: rsqrt.approx
// The default (auto) links libdevice when there is one.
// AUTO: link = [{{.*}}libdevice.10.bc"]
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
