// Fusion decisions go through MLIR's remark framework as well as the classic
// remarks: with --remarks-filter and --remark-format=yaml, tx-opt writes
// every decision (passed: fused, missed: refused) to the YAML file, and the
// human-readable remarks are still emitted (-verify-diagnostics).
//
// RUN: rm -f %t.yaml %t.none.yaml
// RUN: tx-opt %s -tx-fusion -verify-diagnostics -o /dev/null \
// RUN:   --remarks-filter='tx-fuse.*' --remark-format=yaml --remarks-output-file=%t.yaml
// RUN: FileCheck %s --input-file=%t.yaml
//
// The filter selects by pass: SP's filter writes no fusion decision, so the
// checks below fail on that file.
// RUN: tx-opt %s -tx-fusion -o /dev/null 2>/dev/null \
// RUN:   --remarks-filter='tx-sequence-parallel' --remark-format=yaml --remarks-output-file=%t.none.yaml
// RUN: touch %t.none.yaml
// RUN: not FileCheck %s --input-file=%t.none.yaml
//
// Without remark options, nothing changes: the remarks are printed as before.
// RUN: tx-opt %s -tx-fusion -o /dev/null 2>&1 | FileCheck %s --check-prefix=TEXT

tx.layer @q_proj : 64 -> 64, f32
tx.layer @k_proj : 64 -> 16, f32
tx.layer @v_proj : 64 -> 16, f32
tx.layer @a_proj : 64 -> 64, f32
tx.layer @b_proj : 64 -> 16, f32

// CHECK:      --- !Passed
// CHECK-NEXT: Pass: 'tx-fuse-stacked-linears:qkv'
// CHECK-NEXT: Name: Fused
// CHECK-NEXT: DebugLoc: { File: '{{.*}}remarks-yaml.mlir',
// CHECK-NEXT: Line: [[# @LINE + 6]], Column: 8 }
// CHECK-NEXT: Function: fused
// CHECK-NEXT: Args:
// CHECK-NEXT: - Remark: 'fused ''q_proj'', ''k_proj'', ''v_proj'' into ''qkv_proj'' (qkv)'
func.func @fused(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>) {
  // expected-remark @below {{fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)}}
  %q = tx.linear @q_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  %k = tx.linear @k_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  %v = tx.linear @v_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %q, %k, %v : memref<?x64xf32>, memref<?x16xf32>, memref<?x16xf32>
}

// CHECK:      --- !Missed
// CHECK-NEXT: Pass: 'tx-fuse-stacked-linears:merged-column'
// CHECK-NEXT: Name: NotFused
// CHECK-NEXT: DebugLoc: { File: '{{.*}}remarks-yaml.mlir',
// CHECK-NEXT: Line: [[# @LINE + 9]], Column: 3 }
// CHECK-NEXT: Function: refused
// CHECK-NEXT: Args:
// CHECK-NEXT: - Remark: 'not fusing ''a_proj'', ''b_proj'' (merged-column): input may be written by ''tx.unary_into''
// TEXT: remark: not fusing 'a_proj', 'b_proj' (merged-column): input may be written by 'tx.unary_into'
// TEXT: note: see current operation: tx.unary_into relu
func.func @refused(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x16xf32>) {
  %a = tx.linear @a_proj(%x) : memref<?x64xf32> -> memref<?x64xf32>
  // expected-remark @below {{not fusing 'a_proj', 'b_proj' (merged-column): input may be written by 'tx.unary_into' before the last call}}
  tx.unary_into relu %x into %x : memref<?x64xf32>, memref<?x64xf32>
  %b = tx.linear @b_proj(%x) : memref<?x64xf32> -> memref<?x16xf32>
  return %a, %b : memref<?x64xf32>, memref<?x16xf32>
}
