// Norms without a weight (nn.LayerNorm(elementwise_affine=False),
// F.layer_norm(x, shape), an RMSNorm without a scale): the custom form
// round-trips (and through the generic form, where layernorm's operand
// segments say which operand is which); the verifier's rules on them.
// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: tx-opt %s -tx-test-print-modref -o /dev/null | FileCheck %s --check-prefix=MODREF

// CHECK-LABEL: func.func @weightless
func.func @weightless(%x: memref<?x64xf32>, %r: memref<?x64xf32>) {
  // CHECK: tx.layernorm %{{[^,]+}} eps 1.000000e-05 : memref<?x64xf32> -> memref<?x64xf32>
  %0 = tx.layernorm %x eps 1.0e-5 : memref<?x64xf32> -> memref<?x64xf32>
  // CHECK: tx.rmsnorm %{{[^,]+}} eps 9.9999999999999995E-7 : memref<?x64xf32> -> memref<?x64xf32>
  %1 = tx.rmsnorm %x eps 1.0e-6 : memref<?x64xf32> -> memref<?x64xf32>
  // CHECK: tx.add_rmsnorm %{{.+}}, %{{[^,]+}} eps 9.9999999999999995E-7 : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  %2, %3 = tx.add_rmsnorm %x, %r eps 1.0e-6 : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  return
}
// GENERIC: "tx.layernorm"(%{{[^,]+}}) <{epsilon = 1.000000e-05 : f64, operandSegmentSizes = array<i32: 1, 0, 0>}>
// GENERIC: "tx.rmsnorm"(%{{[^,]+}}) <{epsilon

// Their memory effects: read the input (and the residual) only.
// MODREF: effects ln (tx.layernorm): arg0=NoModRef x=Ref r=NoModRef o=NoModRef
// MODREF: effects rms (tx.rmsnorm): arg0=NoModRef x=Ref r=NoModRef o=NoModRef
// MODREF: effects add (tx.add_rmsnorm): arg0=NoModRef x=Ref r=Ref o=NoModRef
func.func @effects(%arg: memref<4x8xf32>) {
  %x = memref.alloc() {test.name = "x"} : memref<4x8xf32>
  %r = memref.alloc() {test.name = "r"} : memref<4x8xf32>
  %o = memref.alloc() {test.name = "o"} : memref<4x8xf32>
  %0 = tx.layernorm %x eps 1.0e-5 {test.query = "ln"} : memref<4x8xf32> -> memref<4x8xf32>
  %1 = tx.rmsnorm %x eps 1.0e-5 {test.query = "rms"} : memref<4x8xf32> -> memref<4x8xf32>
  %2, %3 = tx.add_rmsnorm %x, %r eps 1.0e-5 {test.query = "add"} : memref<4x8xf32>, memref<4x8xf32> -> memref<4x8xf32>, memref<4x8xf32>
  return
}
