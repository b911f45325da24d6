// RUN: tx-opt %s -tx-to-linalg | FileCheck %s
// RUN: tx-opt %s -tx-to-linalg=test-break-containers=swap-get | FileCheck %s --check-prefix=SWAP

// A container argument is a pointer; a write stores copies of the values
// (the runtime gets each one's aligned pointer and [offset, sizes,
// strides]); a read checks the entry against the op's types, allocates the
// results and has the runtime copy into them. Both carry a runtime-check
// number whose message names the op and the container.

// CHECK: tx.runtime_checks = ["'tx.container_set' at {{.*}}containers.mlir:{{[0-9]+}}:3: container (argument 0) index {0}", "'tx.container_get' at {{.*}}: container (argument 0) index {0}"]
// CHECK-DAG: func.func private @tx_rt_container_set(!llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @tx_rt_container_get(!llvm.ptr, i64, i64, i64, i64, i64, i64, i64)
// CHECK-DAG: func.func private @tx_rt_container_read(!llvm.ptr, i64, i64, i64)
// CHECK-LABEL: func.func @roundtrip(
// CHECK-SAME: %[[C:.*]]: !llvm.ptr, %[[K:.*]]: memref<?x2x8xf32, strided<[32, 8, 1]>>, %[[V:.*]]: memref<?x16xf16>)
func.func @roundtrip(%c: !tx.container, %k: memref<?x2x8xf32, strided<[32, 8, 1]>>,
                     %v: memref<?x16xf16>) -> (memref<?x2x8xf32>, memref<?x16xf16>) {
  %i = arith.constant 3 : index
  // CHECK: %[[META:.*]] = memref.alloca() : memref<7xi64>
  // CHECK: memref.extract_strided_metadata %[[K]]
  // CHECK: memref.extract_aligned_pointer_as_index %[[K]]
  // CHECK: call @tx_rt_container_set(%[[C]], %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %c2_i64{{.*}}, %c0_i64{{.*}}, %c3_i64{{.*}}
  // CHECK: memref.alloca() : memref<5xi64>
  // CHECK: call @tx_rt_container_set(%[[C]], %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c2_i64{{.*}}, %c1_i64{{.*}}, %c2_i64{{.*}}
  tx.container_set %c[%i] = %k, %v : memref<?x2x8xf32, strided<[32, 8, 1]>>, memref<?x16xf16>
  // CHECK: call @tx_rt_container_get(%[[C]], %c1_i64{{.*}}, %{{.*}}, %c0_i64
  // CHECK: %[[N:.*]] = memref.load
  // CHECK: %[[T:.*]] = arith.index_cast %[[N]] : i64 to index
  // CHECK: %[[A:.*]] = memref.alloc(%[[T]]) : memref<?x2x8xf32>
  // CHECK: call @tx_rt_container_read(%[[C]], %{{.*}}, %c0_i64
  // SWAP: call @tx_rt_container_get(%{{.*}}, %c1_i64{{.*}}, %{{.*}}, %c1_i64
  %a, %b = tx.container_get %c[%i] : memref<?x2x8xf32>, memref<?x16xf16>
  return %a, %b : memref<?x2x8xf32>, memref<?x16xf16>
}
