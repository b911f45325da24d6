// A part made of heads of unknown count loads unsharded but is never
// sharded (a row split could cut a head in two); absurd rank counts are an
// error, not gigabytes of JSON.
// RUN: tx-opt %s -tx-export-stacking-maps -o /dev/null | FileCheck %s --check-prefix=TP1
// RUN: not tx-opt %s -tx-export-stacking-maps=tp-size=2 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TP2
// RUN: not tx-opt %s -tx-export-stacking-maps=tp-size=4611686018427387904 -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not tx-opt %s -tx-export-stacking-maps=tp-size=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO

// TP1: {"tp_size":1,"layers":[{"name":"qkv_proj","in_features":64,"out_features":96,"bias":false,"tensors":[{"tensor":"q_proj.weight","source":"q_proj","heads":4,"rows":[0,64]},{"tensor":"k_proj.weight","source":"k_proj","heads":0,"unknown_heads":true,"rows":[64,80]},
// TP1-SAME: "ranks":[{"rank":0,"parts":[{"source":"q_proj","rows":[0,64],"offset":0},{"source":"k_proj","rows":[0,16],"offset":64},{"source":"v_proj","rows":[0,16],"offset":80}],"rows":96}]}]}
// TP2: stacking-maps-heads.mlir:[[# @LINE + 4]]:1: error: 'k_proj' is made of attention heads of unknown count: its 16 rows cannot be sharded over 2 ranks without risking a split head (fuse with q-heads/kv-heads or a `heads` attribute on the layer)
// TP2-NOT: {"tp_size"
// HUGE: error: tensor-parallel size 4611686018427387904 is larger than 65536
// ZERO: error: tensor-parallel size must be positive, got 0
tx.layer @qkv_proj : 64 -> 96, f32 stacking [
  #tx.stack<source = "q_proj", offset = 0, size = 64, heads = 4>,
  #tx.stack<source = "k_proj", offset = 64, size = 16, unknown_heads = true>,
  #tx.stack<source = "v_proj", offset = 80, size = 16, unknown_heads = true>]
