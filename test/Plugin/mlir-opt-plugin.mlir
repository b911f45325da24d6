// Stock mlir-opt loads the tx dialect and passes from libTxPlugin.so and runs
// a tx pass next to upstream ones; without the plugin it rejects tx IR.
//
// RUN: mlir-opt --load-dialect-plugin=%tx_lib_dir/libTxPlugin.so \
// RUN:   --load-pass-plugin=%tx_lib_dir/libTxPlugin.so \
// RUN:   %tx_src_root/examples/llama_decoder_layer.mlir \
// RUN:   --pass-pipeline="builtin.module(tx-fuse-stacked-linears,canonicalize,func.func(cse))" \
// RUN:   2>&1 | FileCheck %s
//
// The named pipeline too, from the dialect plugin alone. (Pass flags such as
// --tx-fusion are not available: mlir-opt parses its flags before it loads
// plugins, so plugin passes go through --pass-pipeline.)
// RUN: mlir-opt --load-dialect-plugin=%tx_lib_dir/libTxPlugin.so \
// RUN:   %tx_src_root/examples/llama_decoder_layer.mlir \
// RUN:   --pass-pipeline="builtin.module(tx-fusion)" \
// RUN:   2>/dev/null | FileCheck %s --check-prefix=PIPELINE
//
// RUN: not mlir-opt %tx_src_root/examples/llama_decoder_layer.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOPLUGIN

// CHECK: remark: fused 'q_proj', 'k_proj', 'v_proj' into 'qkv_proj' (qkv)
// CHECK: remark: fused 'gate_proj', 'up_proj' into 'gate_up_proj' (glu)
// CHECK: tx.layer @qkv_proj : 64 -> 128, f32 stacking
// CHECK-NOT: tx.layer @q_proj
// CHECK-LABEL: func.func @forward
// CHECK: %[[QKV:.+]] = tx.linear @qkv_proj(%{{.+}}) : memref<?x64xf32> -> memref<?x128xf32>
// CHECK: tx.slice %[[QKV]] dim 1 offset 0 size 64
// CHECK: %[[GU:.+]] = tx.linear @gate_up_proj
// CHECK: tx.slice %[[GU]] dim 1 offset 128 size 128

// PIPELINE: tx.layer @qkv_proj
// PIPELINE: tx.layer @gate_up_proj
// PIPELINE-NOT: tx.linear @q_proj

// NOPLUGIN: error: #"tx"<"config<tp_size = 1>"> : 'none' attribute created with unregistered dialect
