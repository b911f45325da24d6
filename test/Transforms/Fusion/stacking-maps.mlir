// RUN: not tx-opt %s -split-input-file -tx-export-stacking-maps=tp-size=4 -o /dev/null 2>/dev/null | FileCheck %s --check-prefix=TP4
// RUN: not tx-opt %s -split-input-file -tx-export-stacking-maps=tp-size=4 -o /dev/null 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR4
// RUN: tx-opt %s -split-input-file -tx-export-stacking-maps -o /dev/null | FileCheck %s --check-prefix=TP1
// RUN: not tx-opt %s -split-input-file -tx-export-stacking-maps=tp-size=3 -o /dev/null 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR3
// The whole file as one module, written to a file:
// RUN: tx-opt %s -tx-export-stacking-maps="tp-size=2 output=%t.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=FILE < %t.json

// GQA: 4 query heads, 2 kv heads, with bias. With 4 ranks each kv head is
// replicated on two ranks.
tx.layer @qkv_proj : 64 -> 128, f32 bias stacking [
  #tx.stack<source = "l0.q_proj", offset = 0, size = 64, heads = 4>,
  #tx.stack<source = "l0.k_proj", offset = 64, size = 32, heads = 2>,
  #tx.stack<source = "l0.v_proj", offset = 96, size = 32, heads = 2>]
tx.layer @o_proj : 64 -> 64, f32

// TP4: {"tp_size":4,"layers":[{"name":"qkv_proj","in_features":64,"out_features":128,"bias":true,"tensors":[
// TP4-SAME: {"tensor":"l0.q_proj.weight","source":"l0.q_proj","heads":4,"rows":[0,64]},{"tensor":"l0.q_proj.bias","source":"l0.q_proj","heads":4,"rows":[0,64]},
// TP4-SAME: {"tensor":"l0.k_proj.weight","source":"l0.k_proj","heads":2,"rows":[64,96]},{"tensor":"l0.k_proj.bias","source":"l0.k_proj","heads":2,"rows":[64,96]},
// TP4-SAME: {"tensor":"l0.v_proj.weight","source":"l0.v_proj","heads":2,"rows":[96,128]},{"tensor":"l0.v_proj.bias","source":"l0.v_proj","heads":2,"rows":[96,128]}],
// TP4-SAME: "ranks":[
// TP4-SAME: {"rank":0,"parts":[{"source":"l0.q_proj","rows":[0,16],"offset":0},{"source":"l0.k_proj","rows":[0,16],"offset":16},{"source":"l0.v_proj","rows":[0,16],"offset":32}],"rows":48},
// TP4-SAME: {"rank":1,"parts":[{"source":"l0.q_proj","rows":[16,32],"offset":0},{"source":"l0.k_proj","rows":[0,16],"offset":16},{"source":"l0.v_proj","rows":[0,16],"offset":32}],"rows":48},
// TP4-SAME: {"rank":2,"parts":[{"source":"l0.q_proj","rows":[32,48],"offset":0},{"source":"l0.k_proj","rows":[16,32],"offset":16},{"source":"l0.v_proj","rows":[16,32],"offset":32}],"rows":48},
// TP4-SAME: {"rank":3,"parts":[{"source":"l0.q_proj","rows":[48,64],"offset":0},{"source":"l0.k_proj","rows":[16,32],"offset":16},{"source":"l0.v_proj","rows":[16,32],"offset":32}],"rows":48}]}]}

// TP1: {"tp_size":1,"layers":[{"name":"qkv_proj",
// TP1-SAME: "ranks":[{"rank":0,"parts":[{"source":"l0.q_proj","rows":[0,64],"offset":0},{"source":"l0.k_proj","rows":[0,32],"offset":64},{"source":"l0.v_proj","rows":[0,32],"offset":96}],"rows":128}]}]}

// FILE: {"tp_size":2,"layers":[{"name":"qkv_proj",
// FILE-SAME: {"rank":1,"parts":[{"source":"l0.q_proj","rows":[32,64],"offset":0},{"source":"l0.k_proj","rows":[16,32],"offset":32},{"source":"l0.v_proj","rows":[16,32],"offset":48}],"rows":64}]},
// FILE-SAME: {"name":"gate_up_proj",
// FILE-SAME: {"name":"qkv",

// ERR3: stacking-maps.mlir:[[# @LINE - 24]]:1: error: 'l0.q_proj': 64 rows do not divide over 3 ranks

// -----

// Heads not head-structured (0): plain row split; an unmerged layer is not
// listed. Heads that do not divide over the ranks are an error.
tx.layer @gate_up_proj : 64 -> 24, f32 stacking [
  #tx.stack<source = "mlp.gate_proj", offset = 0, size = 12>,
  #tx.stack<source = "mlp.up_proj", offset = 12, size = 12>]

// TP4: {"tp_size":4,"layers":[{"name":"gate_up_proj","in_features":64,"out_features":24,"bias":false,"tensors":[{"tensor":"mlp.gate_proj.weight","source":"mlp.gate_proj","heads":0,"rows":[0,12]},{"tensor":"mlp.up_proj.weight","source":"mlp.up_proj","heads":0,"rows":[12,24]}],
// TP4-SAME: {"rank":3,"parts":[{"source":"mlp.gate_proj","rows":[9,12],"offset":0},{"source":"mlp.up_proj","rows":[9,12],"offset":3}],"rows":6}]}]}
// ERR3-NOT: gate_up_proj

// -----

tx.layer @qkv : 8 -> 24, f32 stacking [
  #tx.stack<source = "q", offset = 0, size = 12, heads = 6>,
  #tx.stack<source = "k", offset = 12, size = 12, heads = 2>]

// TP4-NOT: "name":"qkv"
// TP1: {"tp_size":1,"layers":[{"name":"qkv","in_features":8,"out_features":24,"bias":false,
// ERR4: error: 'q': 6 heads do not divide over 4 ranks
// ERR3: error: 'k': 2 heads cannot be replicated evenly over 3 ranks with 12 rows
