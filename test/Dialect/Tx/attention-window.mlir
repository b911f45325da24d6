// tx.attention's sliding window and soft-capping (Mistral / Gemma 2):
// custom form -> print -> parse, and through the generic form (the
// verifier's rules: attention-window-invalid.mlir).
// RUN: tx-opt %s | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | tx-opt | FileCheck %s
// RUN: tx-opt %s -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @attention_window
func.func @attention_window(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 causal window 4 :
  %0 = tx.attention %q, %k, %k scale 0.25 causal window 4 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 causal softcap 5.000000e+01 :
  %1 = tx.attention %q, %k, %k scale 0.25 causal softcap 50.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 causal window 4096 softcap 5.000000e+01 :
  %2 = tx.attention %q, %k, %k scale 0.25 causal window 4096 softcap 50.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  // A soft-cap without a mask.
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 softcap 3.000000e+01 :
  %3 = tx.attention %q, %k, %k scale 0.25 softcap 30.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  // CHECK: tx.attention %{{.+}}, %{{.+}}, %{{.+}} scale 2.500000e-01 causal :
  %4 = tx.attention %q, %k, %k scale 0.25 causal : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}
// GENERIC: "tx.attention"({{.*}}) <{causal, scale = 2.500000e-01 : f64, window = 4 : i64}>
// GENERIC: "tx.attention"({{.*}}) <{causal, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64}>
