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
