// The verifier rules of tx.attention's window and softcap, one failing
// input each.
// RUN: tx-opt %s -split-input-file -verify-diagnostics

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{window must be positive, got 0}}
  %0 = tx.attention %q, %k, %k scale 0.25 causal window 0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{window must be positive, got -3}}
  %0 = tx.attention %q, %k, %k scale 0.25 causal window -3 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{window needs causal (a sliding window limits the keys before the query)}}
  %0 = tx.attention %q, %k, %k scale 0.25 window 8 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{softcap must be positive, got 0}}
  %0 = tx.attention %q, %k, %k scale 0.25 causal softcap 0.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{softcap must be positive, got -5}}
  %0 = tx.attention %q, %k, %k scale 0.25 causal softcap -5.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}
