// After tx-fusion, the merged QKV and gate/up GEMMs each write one buffer,
// and their consumers read their column blocks in place: q, k and v reach
// rotary and attention, gate and up reach silu and mul, as strided views
// (memref.subview / reinterpret_cast of the merged buffer), never through a
// per-call copy; the function returns its own buffer, so
// tx-return-contiguous adds none either. (The layer as tx-to-cpu lowers it:
// row loops and row attention.)
// RUN: tx-opt %tx_src_root/examples/llama_decoder_layer.mlir -tx-fusion -tx-to-linalg="row-loops=true row-attention=true" -canonicalize -cse -tx-return-contiguous 2>/dev/null | FileCheck %s
// No copy anywhere in the lowered layer:
// RUN: tx-opt %tx_src_root/examples/llama_decoder_layer.mlir -tx-fusion -tx-to-linalg="row-loops=true row-attention=true" -canonicalize -cse -tx-return-contiguous 2>/dev/null | FileCheck %s --check-prefix=NOCOPY
// A column block that the function returns must be a buffer of its own:
// tx-fusion copies it once where it was produced, for all its uses (NOCOPY
// would catch such a copy in the layer):
// RUN: tx-opt %s -tx-fusion -tx-to-linalg -tx-return-contiguous 2>/dev/null | FileCheck %s --check-prefix=RET
// As tx-to-cpu lowers it (row loops): that copy is a parallel loop over
// the token rows of vector loads and stores (async tasks with threads),
// not one linalg.copy of dynamic size (scalar loops on one thread):
// RUN: tx-opt %s -tx-fusion -tx-to-linalg=row-loops -tx-return-contiguous=rows 2>/dev/null | FileCheck %s --check-prefix=ROWS

// CHECK-LABEL: func.func @forward
// CHECK: %[[QKV:.+]] = memref.alloc(%{{.+}}) : memref<?x128xf32>
// CHECK: linalg.matmul {{.*}} outs(%[[QKV]] : memref<?x128xf32>)
// CHECK-DAG: %[[Q:.+]] = memref.reinterpret_cast %[[QKV]] to offset: [0], sizes: [%{{.+}}, 4, 16], strides: [128, 16, 1]
// CHECK-DAG: %[[KS:.+]] = memref.subview %[[QKV]][0, 64] [%{{.+}}, 32] [1, 1]
// CHECK-DAG: %[[VS:.+]] = memref.subview %[[QKV]][0, 96] [%{{.+}}, 32] [1, 1]
// CHECK-DAG: %[[K:.+]] = memref.reinterpret_cast %[[KS]] to offset: [64], sizes: [%{{.+}}, 2, 16], strides: [128, 16, 1]
// CHECK-DAG: %[[V:.+]] = memref.reinterpret_cast %[[VS]] to offset: [96], sizes: [%{{.+}}, 2, 16], strides: [128, 16, 1]
// Rotary of q and k reads the merged buffer:
// CHECK: vector.load %[[Q]][
// CHECK: vector.load %[[K]][
// Attention reads v from it:
// CHECK: vector.load %[[V]][
// CHECK: %[[GU:.+]] = memref.alloc(%{{.+}}) : memref<?x256xf32>
// CHECK: linalg.matmul {{.*}} outs(%[[GU]] : memref<?x256xf32>)
// CHECK-DAG: %[[G:.+]] = memref.subview %[[GU]][0, 0] [%{{.+}}, 128] [1, 1]
// CHECK-DAG: %[[U:.+]] = memref.subview %[[GU]][0, 128] [%{{.+}}, 128] [1, 1]
// silu(gate), then silu * up:
// CHECK: vector.load %[[G]][
// CHECK: vector.load %[[U]][
// CHECK: return %[[OUT:[^ ]+]] : memref<?x64xf32>

// NOCOPY-LABEL: func.func @forward
// NOCOPY-NOT: {{linalg|memref}}.copy
// NOCOPY: return

tx.layer @q : 16 -> 16, f32
tx.layer @k : 16 -> 8, f32
tx.layer @v : 16 -> 8, f32
// RET-LABEL: func.func @returns_k
// RET: %[[M:.+]] = memref.alloc(%{{.+}}) : memref<?x32xf32>
// RET: %[[KV:.+]] = memref.subview %[[M]][0, 16] [%{{.+}}, 8] [1, 1]
// RET: %[[C:.+]] = memref.alloc(%{{.+}}) : memref<?x8xf32>
// RET-NOT: memref.alloc
// RET: linalg.copy ins(%[[KV]] : {{.+}}) outs(%[[C]] : memref<?x8xf32>)
// RET: return %{{.+}}, %[[C]]
// ROWS-LABEL: func.func @returns_k
// ROWS: %[[M:.+]] = memref.alloc(%{{.+}}) : memref<?x32xf32>
// ROWS: %[[KV:.+]] = memref.subview %[[M]][0, 16] [%{{.+}}, 8] [1, 1]
// ROWS: %[[C:.+]] = memref.alloc(%{{.+}}) : memref<?x8xf32>
// ROWS-NOT: linalg.copy
// ROWS: scf.parallel (%[[R:.+]]) =
// ROWS: %[[V:.+]] = vector.load %[[KV]][%[[R]], %{{.+}}] : memref<?x8xf32, strided<[32, 1], offset: 16>>, vector<8xf32>
// ROWS: vector.store %[[V]], %[[C]][%[[R]], %{{.+}}] : memref<?x8xf32>, vector<8xf32>
// ROWS-NOT: linalg.copy
// ROWS: return %{{.+}}, %[[C]]
func.func @returns_k(%x: memref<?x16xf32>) -> (memref<?x16xf32>, memref<?x8xf32>) {
  %q = tx.linear @q(%x) : memref<?x16xf32> -> memref<?x16xf32>
  %k = tx.linear @k(%x) : memref<?x16xf32> -> memref<?x8xf32>
  %v = tx.linear @v(%x) : memref<?x16xf32> -> memref<?x8xf32>
  %qv = tx.binary add %q, %q : memref<?x16xf32>, memref<?x16xf32> -> memref<?x16xf32>
  %kv = tx.binary add %k, %v : memref<?x8xf32>, memref<?x8xf32> -> memref<?x8xf32>
  return %qv, %k : memref<?x16xf32>, memref<?x8xf32>
}
