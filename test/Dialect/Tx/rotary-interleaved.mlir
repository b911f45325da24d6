// tx.rotary's `interleaved` (pairs (2i, 2i+1): GPT-J, Cohere, GLM):
// custom form -> print -> parse, and through the generic form; without it
// the op is NeoX's (no attribute printed).
// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rotary_interleaved
func.func @rotary_interleaved(%q: memref<?x4x16xf32>, %c: memref<?x8xf32>, %p: memref<?x4x32xbf16>, %cb: memref<?x4xbf16>) {
  // CHECK: tx.rotary %{{.+}}, %{{.+}}, %{{.+}} interleaved : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
  %0 = tx.rotary %q, %c, %c interleaved : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
  // CHECK: tx.rotary %{{.+}}, %{{.+}}, %{{.+}} : memref<?x4x16xf32>
  %1 = tx.rotary %q, %c, %c : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x16xf32>
  // Partial rotary: the first 8 features of each 32-wide bf16 head.
  // CHECK: %[[HEAD:.+]] = tx.slice %{{.+}} dim 2 offset 0 size 8
  // CHECK: tx.rotary %[[HEAD]], %{{.+}}, %{{.+}} interleaved : memref<?x4x8xbf16, strided<[128, 32, 1]>>, memref<?x4xbf16>, memref<?x4xbf16> -> memref<?x4x8xbf16>
  %h = tx.slice %p dim 2 offset 0 size 8 : memref<?x4x32xbf16> -> memref<?x4x8xbf16, strided<[128, 32, 1]>>
  %2 = tx.rotary %h, %cb, %cb interleaved : memref<?x4x8xbf16, strided<[128, 32, 1]>>, memref<?x4xbf16>, memref<?x4xbf16> -> memref<?x4x8xbf16>
  return
}
// GENERIC: "tx.rotary"({{.*}}) <{interleaved}> : (memref<?x4x16xf32>
// GENERIC-NOT: interleaved
// GENERIC: "tx.rotary"({{.*}}) : (memref<?x4x16xf32>
// GENERIC: "tx.rotary"({{.*}}) <{interleaved}> : (memref<?x4x8xbf16
