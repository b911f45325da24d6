// The verifier rules of tx.rotary hold with `interleaved` as without: one
// angle per pair (HF's Cohere cos, each angle repeated, [tokens, head_dim],
// is not the operand: tx takes cos[..., ::2]), an even head_dim.
// RUN: tx-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: memref<?x4x16xf32>, %c: memref<?x16xf32>) {
  // expected-error @+1 {{'tx.rotary' op cos shape ?x16 must be [tokens, head_dim / 2] = [?, 8]}}
  %0 = tx.rotary %x, %c, %c interleaved : memref<?x4x16xf32>, memref<?x16xf32>, memref<?x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%x: memref<?x4x16xf32>, %c: memref<?x8xf32>, %s: memref<?x4xf32>) {
  // expected-error @+1 {{'tx.rotary' op sin shape ?x4 must be [tokens, head_dim / 2] = [?, 8]}}
  %0 = tx.rotary %x, %c, %s interleaved : memref<?x4x16xf32>, memref<?x8xf32>, memref<?x4xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%x: memref<?x4x15xf32>, %c: memref<?x8xf32>) {
  // expected-error @+1 {{'tx.rotary' op head_dim 15 must be even}}
  %0 = tx.rotary %x, %c, %c interleaved : memref<?x4x15xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x15xf32>
  return
}
