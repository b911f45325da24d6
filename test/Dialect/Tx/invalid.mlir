// Every verifier rule of the tx dialect, one failing input each.
// RUN: tx-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{stack entry needs a non-empty source name}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "", offset = 0, size = 4>]

// -----

// expected-error @+1 {{stack entry 'q' has negative offset -1}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = -1, size = 4>]

// -----

// expected-error @+1 {{stack entry 'q' has non-positive size 0}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = 0, size = 0>]

// -----

// expected-error @+1 {{stack entry 'q' has negative head count -2}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4, heads = -2>]

// -----

// expected-error @+1 {{stack entry 'q': size 4 is not a multiple of its 3 heads}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4, heads = 3>]

// -----

// expected-error @+1 {{stack entry 'q' has 2 heads and unknown_heads: give one or the other}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4, heads = 2, unknown_heads = true>]

// -----

// expected-error @+1 {{stack entry 'q': rows [9223372036854775800, 9223372036854775800 + 8) overflow 64 bits}}
tx.layer @a : 4 -> 4, f32 stacking [#tx.stack<source = "q", offset = 9223372036854775800, size = 8>]

// -----

// expected-error @+1 {{splitting_ops must be a list of op names, got ""}}
module attributes {tx.config = #tx.config<splitting_ops = [""]>} {}

// -----

// expected-error @+1 {{tp_size must be at least 1, got 0}}
module attributes {tx.config = #tx.config<tp_size = 0>} {}

// -----

// expected-error @+1 {{sp_min_tokens must not be negative, got -5}}
module attributes {tx.config = #tx.config<sp_min_tokens = -5>} {}

// -----

// expected-error @+1 {{hidden_size must be positive, got 0}}
module attributes {tx.config = #tx.config<hidden_size = 0>} {}

// -----

// expected-error @+1 {{element_size must be positive, got -2}}
module attributes {tx.config = #tx.config<element_size = -2>} {}

// -----

// expected-error @+1 {{splitting_ops must be a list of op names}}
module attributes {tx.config = #tx.config<splitting_ops = [1]>} {}

// -----

// expected-error @+1 {{capture_sizes must be a list of positive integers}}
module attributes {tx.config = #tx.config<capture_sizes = [4, 0]>} {}

// -----

// expected-error @+1 {{'tx.config' must be a #tx.config<...> attribute}}
module attributes {tx.config = 3 : i64} {}

// -----

func.func @f() {
  // expected-error @+1 {{'tx.config' may only be attached to a builtin.module}}
  return {tx.config = #tx.config<tp_size = 2>}
}

// -----

// expected-error @+1 {{attribute 'in_features' failed to satisfy constraint}}
tx.layer @a : 0 -> 4, f32

// -----

// expected-error @+1 {{attribute 'dtype' failed to satisfy constraint}}
tx.layer @a : 4 -> 4, i32

// -----

// expected-error @+1 {{stacking map must not be empty}}
tx.layer @a : 4 -> 4, f32 stacking []

// -----

// expected-error @+1 {{stacking map lists 'q' twice}}
tx.layer @a : 4 -> 8, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4>, #tx.stack<source = "q", offset = 4, size = 4>]

// -----

// expected-error @+1 {{stacking map entry 'k' starts at row 5, expected 4 (entries must be contiguous and in order)}}
tx.layer @a : 4 -> 8, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4>, #tx.stack<source = "k", offset = 5, size = 3>]

// -----

// expected-error @+1 {{stacking map covers 6 rows but the layer has 8 output features}}
tx.layer @a : 4 -> 8, f32 stacking [#tx.stack<source = "q", offset = 0, size = 4>, #tx.stack<source = "k", offset = 4, size = 2>]

// -----

tx.layer @l : 4 -> 4, f32
func.func @f() {
  // expected-error @+1 {{'@l' is a tx.layer, not a tx.param}}
  %0 = tx.get_param @l : memref<4xf32>
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'@nope' is not a symbol}}
  %0 = tx.get_param @nope : memref<4xf32>
  return
}

// -----

tx.param @p : memref<4xf32>
func.func @f() {
  // expected-error @+1 {{result type 'memref<8xf32>' does not match parameter type 'memref<4xf32>'}}
  %0 = tx.get_param @p : memref<8xf32>
  return
}

// -----

// expected-error @+1 {{attribute 'type' failed to satisfy constraint}}
tx.param @p : memref<?xf32>

// -----

func.func @f() {
  // expected-error @+1 {{'@missing' is not a symbol}}
  %r = tx.layer_ref @missing
  return
}

// -----

tx.param @p : memref<4xf32>
func.func @f() {
  // expected-error @+1 {{'@p' is a tx.param, not a layer (tx.layer or tx.none_layer)}}
  %r = tx.layer_ref @p
  return
}

// -----

func.func @f(%r: !tx.layer_ref) -> i1 {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'predicate' [is_none, is_not_none, truthy, falsy, eq_none, ne_none]}}
  %b = tx.guard is_present %r
  return %b : i1
}

// -----

func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{'@nope' is not a symbol}}
  %0 = tx.linear @nope(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return
}

// -----

tx.none_layer @v
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{calls '@v', which is None}}
  %0 = tx.linear @v(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return
}

// -----

tx.param @p : memref<4xf32>
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{'@p' is a tx.param, not a tx.layer}}
  %0 = tx.linear @p(%x) : memref<?x64xf32> -> memref<?x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x64xf16>) {
  // expected-error @+1 {{input element type 'f16' does not match layer '@l' of 'f32'}}
  %0 = tx.linear @l(%x) : memref<?x64xf16> -> memref<?x32xf16>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x48xf32>) {
  // expected-error @+1 {{input has 48 features but layer '@l' takes 64}}
  %0 = tx.linear @l(%x) : memref<?x48xf32> -> memref<?x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{result has 16 features but layer '@l' produces 32}}
  %0 = tx.linear @l(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x64xi32>) {
  // expected-error @+1 {{input must hold floats, got 'i32'}}
  %0 = tx.linear @l(%x) : memref<?x64xi32> -> memref<?x32xi32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{input element type 'f32' does not match result element type 'f16'}}
  %0 = tx.linear @l(%x) : memref<?x64xf32> -> memref<?x32xf16>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<f32>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %0 = tx.linear @l(%x) : memref<f32> -> memref<f32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<?x64xf32>) {
  // expected-error @+1 {{result rank 3 differs from input rank 2}}
  %0 = tx.linear @l(%x) : memref<?x64xf32> -> memref<?x1x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<4x64xf32>) {
  // expected-error @+1 {{result must be a contiguous buffer}}
  %0 = tx.linear @l(%x) : memref<4x64xf32> -> memref<4x32xf32, strided<[64, 1]>>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<4x64xf32>) {
  // expected-error @+1 {{result dimension 0 (5) differs from input (4)}}
  %0 = tx.linear @l(%x) : memref<4x64xf32> -> memref<5x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<4x64xf32>) {
  // expected-error @+1 {{dim 1 must be a token dimension (below 1)}}
  %0 = tx.all_gather_linear @l(%x) dim 1 group 2 : memref<4x64xf32> -> memref<4x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<4x64xf32>) {
  // expected-error @+1 {{dimension 0 should be gathered by group 2: input 4, result 4}}
  %0 = tx.all_gather_linear @l(%x) dim 0 group 2 : memref<4x64xf32> -> memref<4x32xf32>
  return
}

// -----

tx.layer @l : 64 -> 32, f32
func.func @f(%x: memref<5x64xf32>) {
  // expected-error @+1 {{dimension 0 should be scattered by group 2: input 5, result 2}}
  %0 = tx.linear_reduce_scatter @l(%x) dim 0 group 2 : memref<5x64xf32> -> memref<2x32xf32>
  return
}

// -----

module attributes {tx.config = #tx.config<tp_size = 4>} {
  tx.layer @l : 64 -> 32, f32
  func.func @f(%x: memref<4x64xf32>) {
    // expected-error @+1 {{group size 2 does not match the module's tensor-parallel size 4}}
    %0 = tx.all_gather_linear @l(%x) dim 0 group 2 : memref<4x64xf32> -> memref<8x32xf32>
    return
  }
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from source 'f32'}}
  %0 = tx.view %x : memref<4x8xf32> -> memref<32xf16>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result memory space differs from source}}
  %0 = tx.view %x : memref<4x8xf32> -> memref<32xf32, 3>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{cannot view 'memref<4x8xf32>' as 5x6: cannot view 32 elements as 30}}
  %0 = tx.view %x : memref<4x8xf32> -> memref<5x6xf32>
  return
}

// -----

func.func @f(%x: memref<?x8xf32>) {
  // expected-error @+1 {{at most one result dimension may be dynamic}}
  %0 = tx.view %x : memref<?x8xf32> -> memref<?x?xf32>
  return
}

// -----

func.func @f(%x: memref<?x8xf32>) {
  // expected-error @+1 {{a dynamic source needs a dynamic result dimension}}
  %0 = tx.view %x : memref<?x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<6x8xf32>) {
  // expected-error @+1 {{cannot view 48 elements with a shape whose static part has 5}}
  %0 = tx.view %x : memref<6x8xf32> -> memref<?x5xf32>
  return
}

// -----

func.func @f(%x: memref<8x4xf32, strided<[1, 8]>>) {
  // expected-error @+1 {{the view splits or merges dimensions that are not contiguous in the source}}
  %0 = tx.view %x : memref<8x4xf32, strided<[1, 8]>> -> memref<32xf32>
  return
}

// -----

func.func @f(%x: memref<?x32xf32, strided<[96, 1]>>) {
  // expected-error @+1 {{viewing a strided source must keep its leading dynamic dimension in place}}
  %0 = tx.view %x : memref<?x32xf32, strided<[96, 1]>> -> memref<2x?xf32>
  return
}

// -----

func.func @f(%x: memref<?x32xf32, strided<[96, 1]>>) {
  // expected-error @+1 {{result layout must be strided<[96, 16, 1], offset: 0>}}
  %0 = tx.view %x : memref<?x32xf32, strided<[96, 1]>> -> memref<?x2x16xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{permutation has 1 entries for a rank-2 source}}
  %0 = tx.transpose %x [0] : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{is not a permutation of 0..1}}
  %0 = tx.transpose %x [1, 1] : memref<4x8xf32> -> memref<8x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result shape 4x8 is not the permuted source shape 8x4}}
  %0 = tx.transpose %x [1, 0] : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result layout must be strided<[1, 8], offset: 0>}}
  %0 = tx.transpose %x [1, 0] : memref<4x8xf32> -> memref<8x4xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = tx.slice %x dim 2 offset 0 size 1 : memref<4x8xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{slice [6, 10) is out of bounds for dimension 1 of size 8}}
  %0 = tx.slice %x dim 1 offset 6 size 4 : memref<4x8xf32> -> memref<4x4xf32, strided<[8, 1], offset: 6>>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result shape 4x3 should be 4x4}}
  %0 = tx.slice %x dim 1 offset 2 size 4 : memref<4x8xf32> -> memref<4x3xf32, strided<[8, 1], offset: 2>>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{result layout must be strided<[8, 1], offset: 2>}}
  %0 = tx.slice %x dim 1 offset 2 size 4 : memref<4x8xf32> -> memref<4x4xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>) {
  // expected-error @+1 {{attribute 'size' failed to satisfy constraint}}
  %0 = tx.slice %x dim 1 offset 2 size 0 : memref<4x8xf32> -> memref<4x0xf32, strided<[8, 1], offset: 2>>
  return
}

// -----

func.func @f(%x: memref<4xi32>) {
  // expected-error @+1 {{input must hold floats, got 'i32'}}
  %0 = tx.unary silu %x : memref<4xi32> -> memref<4xi32>
  return
}

// -----

func.func @f(%x: memref<4xf32>) {
  // expected-error @+1 {{input shape 4 does not match result shape 5}}
  %0 = tx.unary silu %x : memref<4xf32> -> memref<5xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %c: f16) {
  // expected-error @+1 {{scalar rhs of type 'f16' does not match element type 'f32'}}
  %0 = tx.binary mul %x, %c : memref<4x8xf32>, f16 -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %y: memref<4x8xf16>) {
  // expected-error @+1 {{lhs element type 'f32' does not match rhs element type 'f16'}}
  %0 = tx.binary add %x, %y : memref<4x8xf32>, memref<4x8xf16> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{rhs shape 4 neither matches nor broadcasts to lhs shape 4x8}}
  %0 = tx.binary add %x, %y : memref<4x8xf32>, memref<4xf32> -> memref<4x8xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %o: memref<4x4xf32>) {
  // expected-error @+1 {{input shape 4x8 does not match target shape 4x4}}
  tx.binary_into add %x, %x into %o : memref<4x8xf32>, memref<4x8xf32>, memref<4x4xf32>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %o: memref<4x8xf16>) {
  // expected-error @+1 {{input element type 'f32' does not match target element type 'f16'}}
  tx.unary_into relu %x into %o : memref<4x8xf32>, memref<4x8xf16>
  return
}

// -----

func.func @f(%x: memref<4x8xf32>, %o: memref<8x4xf32>) {
  // expected-error @+1 {{input shape 4x8 does not match target shape 8x4}}
  tx.copy %x into %o : memref<4x8xf32>, memref<8x4xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<32xf32>) {
  // expected-error @+1 {{weight shape 32 must be [64], the normalised dimension}}
  %0 = tx.rmsnorm %x, %w eps 1.0e-6 : memref<?x64xf32>, memref<32xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf32>) {
  // expected-error @+1 {{epsilon must be positive, got 0}}
  %0 = tx.rmsnorm %x, %w eps 0.0 : memref<?x64xf32>, memref<64xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %w: memref<64xf16>) {
  // expected-error @+1 {{input element type 'f32' does not match weight element type 'f16'}}
  %0 = tx.rmsnorm %x, %w eps 1.0e-6 : memref<?x64xf32>, memref<64xf16> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %r: memref<?x32xf32>, %w: memref<64xf32>) {
  // expected-error @+1 {{input shape ?x64 does not match residual shape ?x32}}
  %0, %1 = tx.add_rmsnorm %x, %r, %w eps 1.0e-6 : memref<?x64xf32>, memref<?x32xf32>, memref<64xf32> -> memref<?x64xf32>, memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x64xf32>, %c: memref<?x8xf32>) {
  // expected-error @+1 {{input must be [tokens, heads, head_dim], got ?x64}}
  %0 = tx.rotary %x, %c, %c : memref<?x64xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%x: memref<?x4x15xf32>, %c: memref<?x8xf32>) {
  // expected-error @+1 {{head_dim 15 must be even}}
  %0 = tx.rotary %x, %c, %c : memref<?x4x15xf32>, memref<?x8xf32>, memref<?x8xf32> -> memref<?x4x15xf32>
  return
}

// -----

func.func @f(%x: memref<?x4x16xf32>, %c: memref<?x16xf32>) {
  // expected-error @+1 {{cos shape ?x16 must be [tokens, head_dim / 2] = [?, 8]}}
  %0 = tx.rotary %x, %c, %c : memref<?x4x16xf32>, memref<?x16xf32>, memref<?x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x3x16xf32>) {
  // expected-error @+1 {{4 query heads cannot be grouped over 3 kv heads}}
  %0 = tx.attention %q, %k, %k scale 0.25 : memref<?x4x16xf32>, memref<?x3x16xf32>, memref<?x3x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x8xf32>) {
  // expected-error @+1 {{query head_dim 16 differs from key head_dim 8}}
  %0 = tx.attention %q, %k, %k scale 0.25 : memref<?x4x16xf32>, memref<?x2x8xf32>, memref<?x2x8xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>, %v: memref<?x1x16xf32>) {
  // expected-error @+1 {{key shape ?x2x16 and value shape ?x1x16 differ in heads}}
  %0 = tx.attention %q, %k, %v scale 0.25 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x1x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<5x2x16xf32>, %v: memref<6x2x16xf32>) {
  // expected-error @+1 {{key shape 5x2x16 and value shape 6x2x16 differ in tokens}}
  %0 = tx.attention %q, %k, %v scale 0.25 : memref<?x4x16xf32>, memref<5x2x16xf32>, memref<6x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

// The value's head_dim is its own (MLA), and so is the result's.
func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>, %v: memref<?x2x12xf32>) {
  // expected-error @+1 {{result shape ?x4x16 is not [query tokens, query heads, value head_dim] = ?x4x12}}
  %0 = tx.attention %q, %k, %v scale 0.25 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x12xf32> -> memref<?x4x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{result shape ?x2x16 is not [query tokens, query heads, value head_dim] = ?x4x16}}
  %0 = tx.attention %q, %k, %k scale 0.25 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x2x16xf32>
  return
}

// -----

func.func @f(%q: memref<?x64xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{query must be [tokens, heads, head_dim], got ?x64}}
  %0 = tx.attention %q, %k, %k scale 0.25 : memref<?x64xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x64xf32>
  return
}

// -----

func.func @f(%q: memref<?x4x16xf32>, %k: memref<?x2x16xf32>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = tx.attention %q, %k, %k scale -1.0 : memref<?x4x16xf32>, memref<?x2x16xf32>, memref<?x2x16xf32> -> memref<?x4x16xf32>
  return
}

// -----

module attributes {tx.config = #tx.config<tp_size = 2>} {
  func.func @f(%x: memref<8x64xf32>) {
    // expected-error @+1 {{group size 4 does not match the module's tensor-parallel size 2}}
    %0 = tx.all_reduce %x group 4 : memref<8x64xf32> -> memref<8x64xf32>
    return
  }
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{input shape 8x64 does not match result shape 8x32}}
  %0 = tx.all_reduce %x group 2 : memref<8x64xf32> -> memref<8x32xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{dim 2 is out of range for rank 2}}
  %0 = tx.reduce_scatter %x dim 2 group 2 : memref<8x64xf32> -> memref<8x64xf32>
  return
}

// -----

func.func @f(%x: memref<7x64xf32>) {
  // expected-error @+1 {{dimension 0 of size 7 is not divisible by group size 2}}
  %0 = tx.reduce_scatter %x dim 0 group 2 : memref<7x64xf32> -> memref<3x64xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{scattered dimension 0 should be 4 (8 / group 2), got 8}}
  %0 = tx.reduce_scatter %x dim 0 group 2 : memref<8x64xf32> -> memref<8x64xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{result dimension 1 (32) differs from input (64)}}
  %0 = tx.reduce_scatter %x dim 0 group 2 : memref<8x64xf32> -> memref<4x32xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{gathered dimension 0 should be 16 (8 x group 2), got 8}}
  %0 = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<8x64xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{result rank 1 differs from input rank 2}}
  %0 = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<512xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{attribute 'group_size' failed to satisfy constraint}}
  %0 = tx.all_gather %x dim 0 group 0 : memref<8x64xf32> -> memref<8x64xf32>
  return
}

// -----

func.func @f(%x: memref<8x64xf32>) {
  // expected-error @+1 {{input element type 'f32' does not match result element type 'f16'}}
  %0 = tx.all_gather %x dim 0 group 2 : memref<8x64xf32> -> memref<16x64xf16>
  return
}
