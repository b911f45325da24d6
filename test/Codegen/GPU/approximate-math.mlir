// tx-gpu-approximate-math on its own: transcendental functions become
// polynomial approximations (f16 computed in f32), the rest native intrinsics;
// what has neither is an error at the op.
// RUN: tx-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(tx-gpu-approximate-math))" | FileCheck %s

// The numerics, on the CPU: a module with every activation and norm of the
// dialect computes the same (within 1e-6 relative) with the approximations as
// with libm.
// RUN: tx-difftest --seeds=2 --tokens=7 --rewrite="tx-to-linalg,func.func(tx-gpu-approximate-math)" --lowering="tx-to-cpu{deallocate=false}" --tolerance=1e-6 %S/Inputs/activations.mlir %tx_src_root/examples/llama_decoder_layer.mlir | FileCheck %s --check-prefix=NUMERIC
// And the comparison can fail: the tolerance is not vacuous.
// RUN: not tx-difftest --seeds=1 --tokens=7 --rewrite="tx-to-linalg,func.func(tx-gpu-approximate-math)" --lowering="tx-to-cpu{deallocate=false}" --tolerance=1e-12 %S/Inputs/activations.mlir | FileCheck %s --check-prefix=STRICT
// NUMERIC: tx-difftest: 2 modules, 4 runs: 4 matched
// STRICT: 1 mismatched

// CHECK-LABEL: func.func @functions
// CHECK-NOT: math.
// CHECK: llvm.call_intrinsic "llvm.fma"
// CHECK: %[[SQRT:.+]] = llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) : (f32) -> f32
// CHECK: arith.divf %{{.+}}, %[[SQRT]] : f32
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: llvm.call_intrinsic "llvm.sqrt"(%{{.+}}) : (f64) -> f64
// CHECK-NOT: math.
// CHECK: return
func.func @functions(%x: f32, %y: f32, %h: f16, %d: f64) -> (f32, f32, f32, f32, f32, f16, f64) {
  %e = math.exp %x : f32
  %r = math.rsqrt %x : f32
  %t = math.tanh %x : f32
  %g = math.erf %x : f32
  %p = math.powf %x, %y : f32
  %eh = math.exp %h : f16
  %sd = math.sqrt %d : f64
  return %e, %r, %t, %g, %p, %eh, %sd : f32, f32, f32, f32, f32, f16, f64
}

// -----

func.func @no_approximation(%d: f64) -> f64 {
  // expected-error @below {{'math.exp' on 'f64' has no polynomial approximation nor a native PTX instruction; use math=libdevice with a CUDA Toolkit}}
  %e = math.exp %d : f64
  return %e : f64
}
