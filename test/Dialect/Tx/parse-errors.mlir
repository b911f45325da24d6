// Malformed modules get a located diagnostic and a non-zero exit.
// RUN: not tx-opt %s -split-input-file 2>&1 | FileCheck %s

// CHECK: parse-errors.mlir:[[@LINE+1]]:14: error: expected attribute value
tx.layer @a : -> 4, f32

// -----

// CHECK: parse-errors.mlir:[[@LINE+2]]:22: error: use of undeclared SSA value name
func.func @f() {
  %0 = tx.unary silu %nope : memref<4xf32> -> memref<4xf32>
  return
}

// -----

// CHECK: parse-errors.mlir:[[@LINE+1]]:1: error: custom op 'tx.no_such_op' is unknown
tx.no_such_op @x

// -----

// tx.guard's result type is fixed (i1): a trailing type is a syntax error.
// CHECK: parse-errors.mlir:[[@LINE+1]]:65: error: expected operation name in quotes
func.func @g(%r: !tx.layer_ref) -> i1 { %b = tx.guard is_none %r : i1
  return %b : i1
}

// -----

// CHECK: parse-errors.mlir:[[@LINE+1]]:16: error: expected '->'
tx.layer @b : 4 , 4, f32
