// The memory effects tx ops declare, as upstream AliasAnalysis::getModRef
// sees them against three distinct allocations x, y, o and a function
// argument (arg0, which may alias anything not allocated here). Views have no
// effects; value forms read their inputs and only write fresh buffers;
// in-place / out= forms, container writes and opaque calls write.
// RUN: tx-opt %s -tx-test-print-modref -o /dev/null | FileCheck %s

tx.layer @l : 8 -> 8, f32

func.func @effects(%arg: memref<4x8xf32>, %s: !tx.container) {
  %c = arith.constant 2.0 : f32
  %i = arith.constant 0 : index
  %x = memref.alloc() {test.name = "x"} : memref<4x8xf32>
  %y = memref.alloc() {test.name = "y"} : memref<4x8xf32>
  %o = memref.alloc() {test.name = "o"} : memref<4x8xf32>
  // CHECK: effects linear (tx.linear): arg0=NoModRef x=Ref y=NoModRef o=NoModRef
  %0 = tx.linear @l(%x) {test.query = "linear"} : memref<4x8xf32> -> memref<4x8xf32>
  // CHECK: effects view (tx.view): arg0=NoModRef x=NoModRef y=NoModRef o=NoModRef
  %1 = tx.view %x {test.query = "view"} : memref<4x8xf32> -> memref<32xf32>
  // CHECK: effects unary (tx.unary): arg0=NoModRef x=NoModRef y=Ref o=NoModRef
  %2 = tx.unary silu %y {test.query = "unary"} : memref<4x8xf32> -> memref<4x8xf32>
  // CHECK: effects binary (tx.binary): arg0=NoModRef x=Ref y=Ref o=NoModRef
  %3 = tx.binary add %x, %y {test.query = "binary"} : memref<4x8xf32>, memref<4x8xf32> -> memref<4x8xf32>
  // CHECK: effects mul_ (tx.binary_into): arg0=NoModRef x=ModRef y=NoModRef o=NoModRef
  tx.binary_into mul %x, %c into %x {test.query = "mul_"} : memref<4x8xf32>, f32, memref<4x8xf32>
  // CHECK: effects out= (tx.unary_into): arg0=NoModRef x=Ref y=NoModRef o=Mod
  tx.unary_into relu %x into %o {test.query = "out="} : memref<4x8xf32>, memref<4x8xf32>
  // CHECK: effects copy (tx.copy): arg0=NoModRef x=NoModRef y=Ref o=Mod
  tx.copy %y into %o {test.query = "copy"} : memref<4x8xf32>, memref<4x8xf32>
  // A write through a view of x writes x.
  // CHECK: effects write-view (tx.unary_into): arg0=NoModRef x=ModRef y=NoModRef o=NoModRef
  tx.unary_into relu %1 into %1 {test.query = "write-view"} : memref<32xf32>, memref<32xf32>
  // A write to a projection's fresh output writes none of them.
  // CHECK: effects write-fresh (tx.unary_into): arg0=NoModRef x=NoModRef y=NoModRef o=NoModRef
  tx.unary_into relu %0 into %0 {test.query = "write-fresh"} : memref<4x8xf32>, memref<4x8xf32>
  // Storing y in a container lets later code write it: declared as a write.
  // Upstream's local analysis cannot tell the container argument from the
  // memref argument, so arg0 may be written too (tx's own alias analysis,
  // used by the fusion, refines that).
  // CHECK: effects store (tx.container_set): arg0=Mod x=NoModRef y=Mod o=NoModRef
  tx.container_set %s[%i] = %y {test.query = "store"} : memref<4x8xf32>
  // CHECK: effects opaque (tx.opaque_call): arg0=ModRef x=ModRef y=ModRef o=ModRef
  tx.opaque_call "hook"() {test.query = "opaque"} : () -> ()
  // CHECK: effects norm (tx.rmsnorm): arg0=NoModRef x=Ref y=NoModRef o=NoModRef
  %w = memref.alloc() : memref<8xf32>
  %n = tx.rmsnorm %x, %w eps 1.0e-6 {test.query = "norm"} : memref<4x8xf32>, memref<8xf32> -> memref<4x8xf32>
  // Collectives read their input and write a fresh buffer.
  // CHECK: effects all_reduce (tx.all_reduce): arg0=NoModRef x=NoModRef y=Ref o=NoModRef
  %r = tx.all_reduce %y group 1 {test.query = "all_reduce"} : memref<4x8xf32> -> memref<4x8xf32>
  return
}
