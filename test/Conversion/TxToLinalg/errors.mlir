// RUN: tx-opt %s -split-input-file -tx-to-linalg -verify-diagnostics

func.func @container(%c: !tx.container, %k: memref<?x16xf32>) {
  %i = arith.constant 0 : index
  // expected-error @below {{'tx.container_set' op cannot be lowered to linalg: a Python container has no buffer representation}}
  tx.container_set %c[%i] = %k : memref<?x16xf32>
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
