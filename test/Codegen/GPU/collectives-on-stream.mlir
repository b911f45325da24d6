// A collective of GPU code is enqueued on the call's stream: tx-to-nvvm
// lowers it to the collectives runtime's `tx_rt_<op>_<type>_on_stream`,
// passing the stream that the call's copies and kernels are on (the one
// mgpuStreamCreate made), between the kernel that makes its input and the
// one that reads its output; the buffers stay on the device and nothing is
// synchronised before the call's end.
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90" | FileCheck %s
// The check fails on the host-mapped model (no stream passed).
// RUN: tx-opt %s --tx-to-nvvm="chip=sm_90 memory=host-mapped" | not FileCheck %s

// CHECK: llvm.func @_mlir_ciface_tx_rt_all_reduce_f32_on_stream(!llvm.ptr, !llvm.ptr, i64, !llvm.ptr)
// CHECK-LABEL: llvm.func @reduce(
// CHECK: %[[S:.+]] = llvm.call @mgpuStreamCreate()
// CHECK-NOT: mgpuMemHostRegister
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @reduce_kernel
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: llvm.call @tx_rt_all_reduce_f32_on_stream({{.*}}, %[[S]]) : (i64, !llvm.ptr, i64, !llvm.ptr, i64, !llvm.ptr) -> ()
// CHECK-NOT: mgpuStreamSynchronize
// CHECK: gpu.launch_func <%[[S]] : !llvm.ptr> @reduce_kernel
// CHECK: llvm.call @mgpuStreamSynchronize(%[[S]])
module attributes {tx.config = #tx.config<tp_size = 2>} {
  tx.layer @o_proj : 64 -> 64, f32
  func.func @reduce(%x: memref<?x64xf32>) -> memref<?x64xf32> {
    %p = tx.linear @o_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
    %y = tx.all_reduce %p group 2 : memref<?x64xf32> -> memref<?x64xf32>
    %z = tx.linear @o_proj(%y) : memref<?x64xf32> -> memref<?x64xf32>
    return %z : memref<?x64xf32>
  }
}
