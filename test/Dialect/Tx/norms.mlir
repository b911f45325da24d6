// tx.layernorm (bias optional) and the weight_offset of tx.rmsnorm /
// tx.add_rmsnorm (Gemma's 1 + weight) round-trip: custom form -> print ->
// parse again, and through the generic form. A zero offset is not printed.
// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | tx-opt | FileCheck %s
// The generic form names the attributes:
// RUN: tx-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// Their memory effects: read the input, weight and bias; write a fresh
// buffer only.
// RUN: tx-opt %s -tx-test-print-modref -o /dev/null | FileCheck %s --check-prefix=MODREF

// CHECK-LABEL: func.func @norms
func.func @norms(%x: memref<?x64xf32>, %w: memref<64xf32>, %b: memref<64xf32>) {
  // CHECK: tx.layernorm %{{.+}}, %{{.+}}, %{{.+}} eps 1.000000e-05 : memref<?x64xf32>, memref<64xf32>, memref<64xf32> -> memref<?x64xf32>
  %0 = tx.layernorm %x, %w, %b eps 1.0e-5 : memref<?x64xf32>, memref<64xf32>, memref<64xf32> -> memref<?x64xf32>
  // CHECK: tx.layernorm %{{.+}}, %{{.+}} eps 1.000000e-05 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  %1 = tx.layernorm %x, %w eps 1.0e-5 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  // CHECK: tx.rmsnorm %{{.+}}, %{{.+}} eps 9.9999999999999995E-7 offset 1.000000e+00 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  %2 = tx.rmsnorm %x, %w eps 1.0e-6 offset 1.0 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  // CHECK: tx.rmsnorm %{{.+}}, %{{.+}} eps 9.9999999999999995E-7 : memref<?x64xf32>
  %3 = tx.rmsnorm %x, %w eps 1.0e-6 offset 0.0 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  // CHECK: tx.add_rmsnorm %{{.+}}, %{{.+}}, %{{.+}} eps 9.9999999999999995E-7 offset 1.000000e+00 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  %4, %5 = tx.add_rmsnorm %x, %x, %w eps 1.0e-6 offset 1.0 : memref<?x64xf32>, memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  return
}
// GENERIC: "tx.layernorm"(%{{.+}}, %{{.+}}, %{{.+}}) <{epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 1>}>
// GENERIC: "tx.layernorm"(%{{.+}}, %{{.+}}) <{epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 1, 0>}>
// GENERIC: "tx.rmsnorm"(%{{.+}}, %{{.+}}) <{epsilon = 9.9999999999999995E-7 : f64, weight_offset = 1.000000e+00 : f64}>

// MODREF: effects ln (tx.layernorm): arg0=NoModRef x=Ref w=Ref b=Ref o=NoModRef
// MODREF: effects ln_nobias (tx.layernorm): arg0=NoModRef x=Ref w=Ref b=NoModRef o=NoModRef
func.func @effects(%arg: memref<4x8xf32>) {
  %x = memref.alloc() {test.name = "x"} : memref<4x8xf32>
  %w = memref.alloc() {test.name = "w"} : memref<8xf32>
  %b = memref.alloc() {test.name = "b"} : memref<8xf32>
  %o = memref.alloc() {test.name = "o"} : memref<4x8xf32>
  %0 = tx.layernorm %x, %w, %b eps 1.0e-5 {test.query = "ln"} : memref<4x8xf32>, memref<8xf32>, memref<8xf32> -> memref<4x8xf32>
  %1 = tx.layernorm %x, %w eps 1.0e-5 {test.query = "ln_nobias"} : memref<4x8xf32>, memref<8xf32> -> memref<4x8xf32>
  return
}
