// RUN: tx-opt %s -split-input-file -tx-to-linalg -verify-diagnostics

// A container holds a copy: a write after the store would be seen through a
// PyTorch dict, not through it.
func.func @container(%c: !tx.container, %k: memref<?x16xf32>) {
  %i = arith.constant 0 : index
  // expected-note @below {{the 'tx.container_set' here}}
  tx.container_set %c[%i] = %k : memref<?x16xf32>
  // expected-error @below {{may write a buffer stored into a container: tx containers hold copies, a PyTorch container holds the tensor itself (it would see the write)}}
  tx.unary_into relu %k into %k : memref<?x16xf32>, memref<?x16xf32>
  return
}

// -----

// So would a write to a buffer read back (here through a view of it).
func.func @container_read(%c: !tx.container) {
  %i = arith.constant 0 : index
  // expected-note @below {{the 'tx.container_get' here}}
  %k = tx.container_get %c[%i] : memref<?x16xf32>
  %v = tx.view %k : memref<?x16xf32> -> memref<?x2x8xf32>
  // expected-error @below {{may write a buffer read from a container}}
  tx.unary_into relu %v into %v : memref<?x2x8xf32>, memref<?x2x8xf32>
  return
}

// -----

func.func @opaque(%x: memref<?x16xf32>) -> memref<?x16xf32> {
  // expected-error @below {{'tx.opaque_call' op cannot be lowered to linalg: the callee is unknown}}
  %r = tx.opaque_call "hook"(%x) : (memref<?x16xf32>) -> memref<?x16xf32>
  return %r : memref<?x16xf32>
}

// -----

module attributes {tx.config = #tx.config<tp_size = 2>} {
  func.func @tp2(%x: memref<?x16xf32>) -> memref<?x16xf32> {
    // expected-error @below {{'tx.all_reduce' op cannot be lowered to linalg: a collective over more than one rank needs the collectives runtime lowering}}
    %r = tx.all_reduce %x group 2 : memref<?x16xf32> -> memref<?x16xf32>
    return %r : memref<?x16xf32>
  }
}

// -----

module {
  tx.layer @q : 8 -> 8, f32
  func.func private @take(!tx.layer_ref)
  func.func @escapes() {
    // expected-error @below {{'tx.layer_ref' op cannot be lowered: the reference escapes}}
    %q = tx.layer_ref @q
    // expected-note @below {{used here by 'func.call'}}
    func.call @take(%q) : (!tx.layer_ref) -> ()
    return
  }
}

// -----

// Attention and rotary build their loops and halves from the head counts
// and head_dims: dynamic ones are a located error, not the conversion
// framework's "failed to legalize".
func.func @attention_dynamic_heads(%q: memref<?x?x8xf32>, %k: memref<?x?x8xf32>, %v: memref<?x?x8xf32>) -> memref<?x?x8xf32> {
  // expected-error @below {{'tx.attention' op cannot be lowered to linalg: its head counts must be static}}
  %o = tx.attention %q, %k, %v scale 0.35 causal : memref<?x?x8xf32>, memref<?x?x8xf32>, memref<?x?x8xf32> -> memref<?x?x8xf32>
  return %o : memref<?x?x8xf32>
}

// -----

func.func @attention_dynamic_head_dim(%q: memref<?x4x?xf32>, %k: memref<?x2x?xf32>, %v: memref<?x2x8xf32>) -> memref<?x4x8xf32> {
  // expected-error @below {{'tx.attention' op cannot be lowered to linalg: its head_dims must be static}}
  %o = tx.attention %q, %k, %v scale 0.35 : memref<?x4x?xf32>, memref<?x2x?xf32>, memref<?x2x8xf32> -> memref<?x4x8xf32>
  return %o : memref<?x4x8xf32>
}

// -----

func.func @rotary_dynamic_head_dim(%x: memref<?x2x?xf32>, %cos: memref<?x?xf32>, %sin: memref<?x?xf32>) -> memref<?x2x?xf32> {
  // expected-error @below {{'tx.rotary' op cannot be lowered to linalg: its head_dim must be static}}
  %y = tx.rotary %x, %cos, %sin : memref<?x2x?xf32>, memref<?x?xf32>, memref<?x?xf32> -> memref<?x2x?xf32>
  return %y : memref<?x2x?xf32>
}
