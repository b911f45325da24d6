// tx-cpu-approximate-math: exp, tanh and erf on f32 vectors become MLIR's
// polynomial approximations (fma chains in vector registers); scalars and
// other element types keep the libm path. tx-to-cpu runs it unless
// math=libm, whose vector exp stays llvm.intr.exp (one expf call per lane
// once LLVM scalarises it). Accuracy: test/Execution/approximate-math-ulp.test.
// RUN: tx-opt %s --split-input-file --tx-cpu-approximate-math | FileCheck %s
// RUN: tx-opt %S/../../Execution/Inputs/math-ulp.mlir --tx-to-cpu | FileCheck %s --check-prefix=POLY
// RUN: tx-opt %S/../../Execution/Inputs/math-ulp.mlir '--tx-to-cpu=math=libm' | FileCheck %s --check-prefix=LIBM
// RUN: not tx-opt %s --split-input-file '--tx-to-cpu=math=fast' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @vectors
// CHECK-NOT: math.exp
// CHECK-NOT: math.tanh
// CHECK-NOT: math.erf
// CHECK: math.fma {{.*}} : vector<8xf32>
// CHECK: math.floor {{.*}} : vector<8xf32>
// CHECK: return
func.func @vectors(%x: vector<8xf32>, %y: vector<4x16xf32>, %z: vector<8xf32>)
    -> (vector<8xf32>, vector<4x16xf32>, vector<8xf32>) {
  %e = math.exp %x : vector<8xf32>
  %t = math.tanh %y : vector<4x16xf32>
  %r = math.erf %z : vector<8xf32>
  return %e, %t, %r : vector<8xf32>, vector<4x16xf32>, vector<8xf32>
}

// -----

// CHECK-LABEL: func.func @kept
// CHECK: math.exp %{{.*}} : f32
// CHECK: math.tanh %{{.*}} : f32
// CHECK: math.exp %{{.*}} : vector<8xf64>
// CHECK: math.log %{{.*}} : vector<8xf32>
func.func @kept(%s: f32, %d: vector<8xf64>, %v: vector<8xf32>)
    -> (f32, f32, vector<8xf64>, vector<8xf32>) {
  %e = math.exp %s : f32
  %t = math.tanh %s : f32
  %ed = math.exp %d : vector<8xf64>
  %l = math.log %v : vector<8xf32>
  return %e, %t, %ed, %l : f32, f32, vector<8xf64>, vector<8xf32>
}

// The lowered rows: no exp or tanh intrinsic, no libm call on vectors.
// POLY-LABEL: llvm.func @unary_silu(
// POLY-NOT: llvm.intr.exp
// POLY-NOT: llvm.call @{{expf|tanhf|erff}}
// POLY: llvm.intr.fma({{.*}}) : (vector<64xf32>, vector<64xf32>, vector<64xf32>) -> vector<64xf32>
// POLY-NOT: llvm.intr.exp
// POLY-NOT: llvm.call @{{expf|tanhf|erff}}
// POLY-LABEL: llvm.func @_mlir_ciface_unary_silu(
// POLY-LABEL: llvm.func @unary_gelu(
// POLY-NOT: llvm.call @erff
// POLY-LABEL: llvm.func @_mlir_ciface_unary_gelu(
// POLY-LABEL: llvm.func @unary_gelu_tanh(
// POLY-NOT: llvm.intr.tanh
// POLY-LABEL: llvm.func @_mlir_ciface_unary_gelu_tanh(

// LIBM-LABEL: llvm.func @unary_silu(
// LIBM: llvm.intr.exp({{.*}}) : (vector<64xf32>) -> vector<64xf32>
// LIBM-LABEL: llvm.func @unary_gelu(
// LIBM: llvm.call @erff({{.*}}) : (f32) -> f32
// LIBM-LABEL: llvm.func @unary_gelu_tanh(
// LIBM: llvm.intr.tanh({{.*}}) : (vector<64xf32>) -> vector<64xf32>

// BAD: for the --math option: Cannot find option named 'fast'!
