// `splitting_ops` has three states that survive printing and parsing:
// unset (vLLM's default, attention: piecewise), empty (full graph) and a
// list. A stack entry's unknown_heads round-trips too.
// RUN: tx-opt %s -split-input-file | tx-opt -split-input-file | FileCheck %s

// CHECK: tx.config = #tx.config<tp_size = 2>
module attributes {tx.config = #tx.config<tp_size = 2>} {}

// -----

// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = []>
module attributes {tx.config = #tx.config<tp_size = 2, splitting_ops = []>} {}

// -----

// CHECK: tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"]>
module attributes {tx.config = #tx.config<tp_size = 2, splitting_ops = ["tx.attention"]>} {}

// -----

// CHECK: stacking [#tx.stack<source = "q", offset = 0, size = 8, unknown_heads = true>, #tx.stack<source = "k", offset = 8, size = 8, heads = 2>]
tx.layer @qk : 8 -> 16, f32 stacking [#tx.stack<source = "q", offset = 0, size = 8, unknown_heads = true>, #tx.stack<source = "k", offset = 8, size = 8, heads = 2, unknown_heads = false>]
