// Class 2: a loop written as a CFG cycle; proj1 runs in it and %x is
// written after it, before the back edge, so merging proj1 with proj0 (outside) would
// hoist it out of the cycle. Wrong with test-disable-checks=cfg-loops.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @proj0 : 32 -> 8, f32
  tx.layer @proj1 : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %p = tx.linear @proj0(%x) : memref<?x32xf32> -> memref<?x8xf32>
    %r = scf.execute_region -> memref<?x8xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %h = arith.constant 0.5 : f32
      cf.br ^loop(%c0 : index)
    ^loop(%i: index):
      %q = tx.linear @proj1(%x) : memref<?x32xf32> -> memref<?x8xf32>
      tx.binary_into mul %x, %h into %x : memref<?x32xf32>, f32, memref<?x32xf32>
      %n = arith.addi %i, %c1 : index
      %c = arith.cmpi slt, %n, %c2 : index
      cf.cond_br %c, ^loop(%n : index), ^exit
    ^exit:
      scf.yield %q : memref<?x8xf32>
    }
    return %p, %r : memref<?x8xf32>, memref<?x8xf32>
  }
}
