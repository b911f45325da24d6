// k's call runs twice in a loop of blocks, %x is doubled on the back edge.
module attributes {tx.config = #tx.config<tp_size = 1>} {
  tx.layer @q_proj : 32 -> 8, f32
  tx.layer @k_proj : 32 -> 8, f32
  func.func @forward(%x: memref<?x32xf32>, %fs: f32) -> (memref<?x8xf32>, memref<?x8xf32>) {
    %q = tx.linear @q_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
    %k = scf.execute_region -> memref<?x8xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %two = arith.constant 2.0 : f32
      cf.br ^loop(%c0 : index)
    ^loop(%i: index):
      %k0 = tx.linear @k_proj(%x) : memref<?x32xf32> -> memref<?x8xf32>
      tx.binary_into mul %x, %two into %x : memref<?x32xf32>, f32, memref<?x32xf32>
      %n = arith.addi %i, %c1 : index
      %more = arith.cmpi slt, %n, %c2 : index
      cf.cond_br %more, ^loop(%n : index), ^exit
    ^exit:
      scf.yield %k0 : memref<?x8xf32>
    }
    return %q, %k : memref<?x8xf32>, memref<?x8xf32>
  }
}
