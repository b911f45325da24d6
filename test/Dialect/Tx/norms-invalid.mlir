// The verifier rules of tx.layernorm (those of rmsnorm's weight, and the
// bias), one failing input each.
// RUN: tx-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: memref<?x64xf32>, %w: memref<32xf32>) {
  // expected-error @+1 {{weight shape 32 must be [64], the normalised dimension}}
  %0 = tx.layernorm %x, %w eps 1.0e-5 : memref<?x64xf32>, memref<32xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>) {
  // expected-error @+1 {{epsilon must be positive, got -1}}
  %0 = tx.layernorm %x, %w eps -1.0 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xbf16>, %w: memref<64xf32>) {
  // expected-error @+1 {{input element type 'bf16' does not match weight element type 'f32'}}
  %0 = tx.layernorm %x, %w eps 1.0e-5 : memref<?x64xbf16>, memref<64xf32> -> memref<?x64xbf16>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>, %b: memref<32xf32>) {
  // expected-error @+1 {{bias type 'memref<32xf32>' must be the weight type 'memref<64xf32>'}}
  %0 = tx.layernorm %x, %w, %b eps 1.0e-5 : memref<?x64xf32>, memref<64xf32>, memref<32xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>, %b: memref<64xf16>) {
  // expected-error @+1 {{bias type 'memref<64xf16>' must be the weight type 'memref<64xf32>'}}
  %0 = tx.layernorm %x, %w, %b eps 1.0e-5 : memref<?x64xf32>, memref<64xf32>, memref<64xf16> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>) {
  // expected-error @+1 {{input shape ?x64 does not match result shape ?x32}}
  %0 = tx.layernorm %x, %w eps 1.0e-5 : memref<?x64xf32>, memref<64xf32> -> memref<?x32xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xi32>, %w: memref<64xi32>) {
  // expected-error @+1 {{input must hold floats, got 'i32'}}
  %0 = tx.layernorm %x, %w eps 1.0e-5 : memref<?x64xi32>, memref<64xi32> -> memref<?x64xi32>
  return
}

// -----

// Without a weight: an offset (added to the weight) is an error, and so is
// a bias (the printed form names them by position; built generically).
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{weight offset 1.000000e+00 without a weight (the offset is added to the weight)}}
  %0 = tx.rmsnorm %x eps 1.0e-6 offset 1.0 : memref<?x64xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %r: memref<?x64xf32>) {
  // expected-error @+1 {{weight offset 1.000000e+00 without a weight (the offset is added to the weight)}}
  %0, %1 = tx.add_rmsnorm %x, %r eps 1.0e-6 offset 1.0 : memref<?x64xf32>, memref<?x64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %b: memref<64xf32>) {
  // expected-error @+1 {{a bias needs a weight (F.layer_norm(x, shape, None, bias) is not supported)}}
  %0 = "tx.layernorm"(%x, %b) <{epsilon = 1.0e-5 : f64, operandSegmentSizes = array<i32: 1, 0, 1>}> : (memref<?x64xf32>, memref<64xf32>) -> memref<?x64xf32>
  return
}
