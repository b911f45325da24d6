// tx-cpu-split-odd-bf16-vectors: loads and stores of 8k+1 bf16 lanes (LLVM
// 22's X86 back end aborts on them with avx512bf16) move 8k lanes and one;
// other widths, other types and masked transfers stay.
// RUN: tx-opt %s -pass-pipeline='builtin.module(func.func(tx-cpu-split-odd-bf16-vectors))' | FileCheck %s

// CHECK-LABEL: func.func @load_store
// CHECK-SAME: (%[[M:.+]]: memref<?x25xbf16>, %[[I:.+]]: index)
// CHECK: %[[H:.+]] = vector.load %[[M]][%[[I]], %{{.+}}] : memref<?x25xbf16>, vector<24xbf16>
// CHECK: %[[J:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: %[[L:.+]] = vector.load %[[M]][%[[I]], %[[J]]] : memref<?x25xbf16>, vector<1xbf16>
// CHECK: %[[A:.+]] = vector.insert_strided_slice %[[H]], %{{.+}} {offsets = [0], strides = [1]} : vector<24xbf16> into vector<25xbf16>
// CHECK: %[[V:.+]] = vector.insert_strided_slice %[[L]], %[[A]] {offsets = [24], strides = [1]} : vector<1xbf16> into vector<25xbf16>
// CHECK: %[[N:.+]] = arith.negf %[[V]]
// CHECK: %[[S0:.+]] = vector.extract_strided_slice %[[N]] {offsets = [0], sizes = [24], strides = [1]}
// CHECK: vector.store %[[S0]], %[[M]][%[[I]], %{{.+}}] : memref<?x25xbf16>, vector<24xbf16>
// CHECK: %[[S1:.+]] = vector.extract_strided_slice %[[N]] {offsets = [24], sizes = [1], strides = [1]}
// CHECK: vector.store %[[S1]], %[[M]][%[[I]], %{{.+}}] : memref<?x25xbf16>, vector<1xbf16>
func.func @load_store(%m: memref<?x25xbf16>, %i: index) {
  %c0 = arith.constant 0 : index
  %v = vector.load %m[%i, %c0] : memref<?x25xbf16>, vector<25xbf16>
  %n = arith.negf %v : vector<25xbf16>
  vector.store %n, %m[%i, %c0] : memref<?x25xbf16>, vector<25xbf16>
  return
}

// CHECK-LABEL: func.func @transfers
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<4x17xbf16>, vector<16xbf16>
// CHECK: vector.transfer_read {{.*}} {in_bounds = [true]} : memref<4x17xbf16>, vector<1xbf16>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<16xbf16>, memref<4x17xbf16>
// CHECK: vector.transfer_write {{.*}} {in_bounds = [true]} : vector<1xbf16>, memref<4x17xbf16>
func.func @transfers(%m: memref<4x17xbf16>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : bf16
  %v = vector.transfer_read %m[%c1, %c0], %p {in_bounds = [true]} : memref<4x17xbf16>, vector<17xbf16>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true]} : vector<17xbf16>, memref<4x17xbf16>
  return
}

// CHECK-LABEL: func.func @unchanged
// CHECK: vector.load {{.*}} vector<24xbf16>
// CHECK: vector.load {{.*}} vector<25xf32>
// CHECK: vector.load {{.*}} vector<1xbf16>
// CHECK-NOT: insert_strided_slice
func.func @unchanged(%m: memref<?x25xbf16>, %f: memref<?x25xf32>, %i: index) -> (vector<24xbf16>, vector<25xf32>, vector<1xbf16>) {
  %c0 = arith.constant 0 : index
  %a = vector.load %m[%i, %c0] : memref<?x25xbf16>, vector<24xbf16>
  %b = vector.load %f[%i, %c0] : memref<?x25xf32>, vector<25xf32>
  %c = vector.load %m[%i, %c0] : memref<?x25xbf16>, vector<1xbf16>
  return %a, %b, %c : vector<24xbf16>, vector<25xf32>, vector<1xbf16>
}
